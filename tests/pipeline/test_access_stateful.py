"""The permission write path as a state machine (hypothesis ``RuleBasedStateMachine``; real
model, Chroma on disk): random sequences of policy changes, content edits, a symlink, a
connector's paged Documents (each page its own readers, or the rule's), a connector whose
server goes down, and runs stopped at a write point (before or after a store write, a file
state write or delete).

Invariant after every completed run: every chunk, every parent section and every lexical hit
a principal can reach belongs to a source the current policy lets that principal read (for a
connector's pages: every page the text holds names them). A stopped run is followed by a
completed one (the operator runs again, maybe with the config reverted), and the invariant
must hold after it. Examples are few and short, so it runs in CI."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

import ragingest
from ragingest.models.embeddings import SentenceTransformerEmbeddings
from ragingest.pipeline import runner
from ragingest.pipeline.access_policy import AccessPolicy, AccessRule
from ragingest.pipeline.state import FileStates
from ragingest.schema import PUBLIC_PRINCIPAL
from ragingest.vectorstore.access.guarded import GuardedSource
from ragingest.vectorstore.access.principals import Principals
from ragingest.vectorstore.chroma.collection_info import chroma_client
from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.opening import open_store
from ragingest.vectorstore.records.aliases import resolve_collection
from ragingest.vectorstore.records.parents import ParentStore

pytestmark = pytest.mark.slow

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
CALLERS = ("group:hr", "group:ceo", "user:anna")  # anna: what is public only
GRANTS = st.sampled_from(
    [(), ("group:hr",), ("group:ceo",), ("group:hr", "group:ceo"), (PUBLIC_PRINCIPAL,)]
)
PAGE_READERS = st.sampled_from(
    [None, ["group:hr"], ["group:ceo"], ["group:hr", "group:ceo"], [PUBLIC_PRINCIPAL]]
)
BODIES = ("salaries are paid monthly", "the office opens at nine", "holidays start in june")
FILES = ("hr/a.md", "pub/b.md", "misc/c.md")
LINK = "pub/link.md"  # -> ../hr/a.md: judged by hr's rule
WIKI = "wiki/report"
PAGES = (  # distinct words: a line repeated on every page is a running header, cleaned away
    "Section one\n\nThe vacation rules of page one apply to every office in the north.\n",
    "Section two\n\nThe salary bands of page two are reviewed each spring by the board.\n",
)
NUMBERS = {"one": 1, "two": 2}
# (class, method, stop before or after the call, at its n-th call in the run)
WRITE_POINTS = st.tuples(
    st.sampled_from(
        [(Collection, "set_access"), (Collection, "add_documents"), (Collection, "delete"),
         (FileStates, "put"), (FileStates, "delete")]
    ),
    st.sampled_from(["before", "after"]),
    st.integers(min_value=1, max_value=2),
)  # fmt: skip


_MODELS: dict[str, SentenceTransformerEmbeddings] = {}


def shared_model(name: str, batch_size: int = 32) -> SentenceTransformerEmbeddings:
    """The real model, loaded once for every run of the module (a run loads its own)."""
    if name not in _MODELS:
        _MODELS[name] = SentenceTransformerEmbeddings(name, batch_size=batch_size)
    return _MODELS[name]


class Stopped(BaseException):
    """The run killed at a write point."""


class Wiki(BaseLoader):
    """A connector whose pages, their readers and whether its server is down come from the
    JSON file ``control`` (the loader runs in a parser worker)."""

    def __init__(self, control: str) -> None:
        self.control = control

    def lazy_load(self) -> Iterator[Document]:
        state = json.loads(Path(self.control).read_text("utf-8"))
        if state["down"]:
            raise ConnectionError("the wiki server is down")
        for i, readers in enumerate(state["pages"]):
            meta: dict[str, object] = {"source": WIKI, "page": i}
            if state["paged"] and readers is not None:
                meta["access"] = readers
            yield Document(PAGES[i], metadata=meta)


def admits(readers: object, caller: str) -> bool:
    return isinstance(readers, list) and (caller in readers or PUBLIC_PRINCIPAL in readers)


class PermissionWrites(RuleBasedStateMachine):
    """The model: the policy's grants per folder, the files, the link, the wiki's pages."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="ragingest-acl-"))
        self.root, self.store = self.folder / "data", self.folder / "store"
        self.control = self.folder / "wiki.json"
        self.grants: dict[str, tuple[str, ...]] = {"hr": (), "pub": (), "wiki": ()}
        self.wiki = {"down": False, "paged": False, "pages": [None, None]}
        self.loaded = dict(self.wiki)  # what the last completed read of the wiki gave

    def teardown(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def policy(self, grants: dict[str, tuple[str, ...]]) -> AccessPolicy:
        rules = [
            AccessRule(f"{folder}/**", groups=tuple(g.removeprefix("group:") for g in names
                       if g != PUBLIC_PRINCIPAL), public=PUBLIC_PRINCIPAL in names)
            for folder, names in grants.items()
        ]  # fmt: skip
        return AccessPolicy(tuple(rules))

    def ingest(self, grants: dict[str, tuple[str, ...]]) -> None:
        self.control.write_text(json.dumps(self.wiki), "utf-8")
        with mock.patch.object(runner, "SentenceTransformerEmbeddings", shared_model):
            ragingest.ingest(
                [str(self.root), Wiki(str(self.control))], persist_dir=self.store,
                collection="kb", model=MINILM, access_policy=self.policy(grants),
                chunk_size=32, allow_mass_delete=True, file_timeout=0, file_memory_mb=0,
            )  # fmt: skip (unbounded: the loader and parsers run in this process)

    def completed(self) -> None:
        self.ingest(self.grants)
        if not self.wiki["down"]:
            self.loaded = dict(self.wiki)

    @initialize(hr=GRANTS, pub=GRANTS, wiki=GRANTS)
    def first_run(self, hr, pub, wiki) -> None:
        for i, rel in enumerate(FILES):
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.root / rel).write_text(f"# {rel}\n\n{BODIES[i]} in {rel}.\n", "utf-8")
        self.grants = {"hr": hr, "pub": pub, "wiki": wiki}
        self.completed()

    @rule(folder=st.sampled_from(["hr", "pub", "wiki"]), names=GRANTS)
    def change_policy(self, folder, names) -> None:
        self.grants = {**self.grants, folder: names}
        self.completed()

    @rule(rel=st.sampled_from(FILES), body=st.sampled_from(BODIES))
    def edit(self, rel, body) -> None:
        (self.root / rel).write_text(f"# {rel}\n\n{body} in {rel}, edited.\n", "utf-8")
        self.completed()

    @rule()
    def toggle_link(self) -> None:
        link = self.root / LINK
        if link.is_symlink():
            link.unlink()
        else:
            os.symlink("../hr/a.md", link)
        self.completed()

    @rule(paged=st.booleans(), first=PAGE_READERS, second=PAGE_READERS)
    def change_wiki(self, paged, first, second) -> None:
        self.wiki = {"down": False, "paged": paged, "pages": [first, second]}
        self.completed()

    @rule(first=PAGE_READERS, second=PAGE_READERS)
    def change_page_readers(self, first, second) -> None:
        """The same pages, other readers: the chunks' ids stay, their readers must not."""
        self.wiki = {"down": False, "paged": True, "pages": [first, second]}
        self.completed()

    @rule()
    def wiki_down(self) -> None:
        self.wiki = {**self.wiki, "down": True}  # until the wiki changes again
        self.completed()

    @rule(point=WRITE_POINTS, folder=st.sampled_from(["hr", "pub", "wiki"]), names=GRANTS,
          revert=st.booleans())  # fmt: skip
    def stopped_run(self, point, folder, names, revert) -> None:
        (cls, method), when, nth = point
        original = getattr(cls, method)
        calls = [0]

        def stop_at(*args, **kwargs):
            calls[0] += 1
            if calls[0] == nth and when == "before":
                raise Stopped
            result = original(*args, **kwargs)
            if calls[0] == nth:
                raise Stopped
            return result

        self.wiki = {**self.wiki, "down": False}
        changed = {**self.grants, folder: names}
        with mock.patch.object(cls, method, stop_at), contextlib.suppress(Stopped):
            self.ingest(changed)  # stopped, or the point was not reached: a whole run
        if not revert:
            self.grants = changed
        self.completed()  # the next run, with the config kept or put back

    @invariant()
    def every_reachable_copy_is_the_policys(self) -> None:
        if not self.store.exists():
            return
        physical = resolve_collection(self.store, "kb")
        got = chroma_client(self.store).get_collection(physical).get()
        chunks = {
            i: (str(m["source"]), text, m.get("access"))
            for i, m, text in zip(got["ids"], got["metadatas"], got["documents"], strict=True)
        }
        parents = ParentStore(self.store, physical)
        keys = list(parents.yield_keys())
        sections = [p for p in parents.mget(keys) if p is not None]
        reader = open_store(self.store, "kb", shared_model(MINILM), create=False)
        words = " ".join(BODIES) + " section words page readers"
        for caller in CALLERS:
            for source, text, readers in chunks.values():
                if admits(readers, caller):
                    assert self.allowed(caller, source, text), (caller, source, text, readers)
            for section in sections:
                if admits(section.metadata.get("access"), caller):
                    source = str(section.metadata["source"])
                    assert self.allowed(caller, source, section.page_content), (caller, source)
            guard = GuardedSource(reader, Principals((caller,)))
            for chunk_id, _score in guard.lexical.search(words, 100):
                source, text, readers = chunks[chunk_id]
                assert self.allowed(caller, source, text), (caller, "lexical", source)

    def allowed(self, caller: str, source: str, text: str) -> bool:
        """Whether the policy now in force (the model's) lets ``caller`` read ``text`` of
        ``source``."""
        own = self.loaded["paged"] and any(names is not None for names in self.loaded["pages"])
        if source == WIKI and own:  # else no page names readers: the rule decides
            pages = {NUMBERS[n] for n in re.findall(r"(?:Section|page) (one|two)", text)}
            lists = self.loaded["pages"]
            return all(admits(lists[p - 1] or ["!nobody"], caller) for p in pages)
        folder = {"hr/a.md": "hr", LINK: "hr", "pub/b.md": "pub", WIKI: "wiki"}.get(source)
        return folder is not None and admits(list(self.grants[folder]), caller)


PermissionWrites.TestCase.settings = settings(
    max_examples=6,
    stateful_step_count=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_permission_writes = PermissionWrites.TestCase
