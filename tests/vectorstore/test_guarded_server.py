"""The filtered read path against a ``chroma run`` server: ``$contains`` on the readers list is
evaluated by the server, and the guarded seam and LangChain's methods admit only what the
principals may read, as embedded."""

from __future__ import annotations

import pytest

from ragingest.vectorstore.access.guarded import GuardedSource
from ragingest.vectorstore.access.principals import ALL, Principals, access_filter
from ragingest.vectorstore.opening import open_store
from ragingest.vectorstore.seam import matches
from tests.chroma import chroma_server
from tests.vectorstore.test_store_contract import NamedEmbeddings
from tests.vectorstore.test_store_contract_access import _with_readers, mark_policy

pytestmark = [pytest.mark.slow]


def test_a_server_admits_only_what_the_principals_may_read(tmp_path):
    embeddings = NamedEmbeddings(dimensions=64)
    docs = _with_readers()
    (tmp_path / "server").mkdir()
    with chroma_server(tmp_path / "server") as server:
        writer = open_store(tmp_path / "db", "kb", embeddings, server=server)
        writer.add_documents(docs, parent_texts=[d.page_content for d in docs])
        mark_policy(writer.index.collection)
        for who in (Principals.of(user="ann"), Principals.of(groups=["hr", "legal"])):
            admit = access_filter(who, True)
            want = {str(d.id) for d in docs if matches(admit, d.metadata)}
            store = open_store(tmp_path / "db", "kb", embeddings, create=False, server=server)
            assert store.remote and store.chunks_with_dense
            guard = GuardedSource(store, who)
            assert not guard.chunks_with_dense  # kept id sets: ids first, then the prefix
            assert GuardedSource(store, ALL).chunks_with_dense  # no filter: as the store
            vector = guard.embed_query("alpha beta gamma")
            assert {i for i, _ in guard.nearest(vector, 12)} == want
            assert set(guard.chunk_ids()) == want and guard.count() == len(want)
            plain = open_store(tmp_path / "db", "kb", embeddings, create=False, server=server,
                               principals=who)  # fmt: skip
            assert {d.id for d in plain.similarity_search("alpha beta", k=12)} == want
            assert set(plain.get()["ids"]) == want
            # its side stores too: the index (not handed out), the parents, the lexical index
            assert set(plain.chunk_ids()) == want
            with pytest.raises(PermissionError):
                plain.index  # noqa: B018
            keys = sorted({str(d.metadata["parent_id"]) for d in docs})
            shown = [p for p in plain.parent_store.mget(keys) if p is not None]
            assert all(matches(admit, p.metadata) for p in shown)
            words = " ".join(d.page_content for d in docs)
            assert {i for i, _ in plain.lexical.search(words, 50)} <= want
