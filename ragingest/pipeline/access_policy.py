"""The access policy of a run: who may read each document, from the operator's rules, a
connector's Documents or the file system, as the principal strings every copy stores
(``schema.ACCESS_KEY``).

Where the readers come from, for each source of a run under a policy:

1. a Document (a given one, or a LangChain loader's) that carries ``metadata["access"]``: that
   list of principal strings, as it is (``user:NAME``, ``group:NAME``, ``unix:user:NAME``,
   ``unix:group:NAME``, ``schema.PUBLIC_PRINCIPAL``); a bad value fails that source, named.
   Pages of one document (a paged loader's) that name different lists keep them: each chunk
   gets the readers every page of its section admits (``section_readers``), and a page
   without a list, where others have one, is readable by no one;
2. else the first ``[[access]]`` rule whose ``match`` glob covers the source (its path under the
   ingested root, or the file name; fnmatch, so ``*`` crosses folders): its ``users``,
   ``groups`` and ``public`` (a rule that grants nobody hides what it matches). First match,
   not union: put the narrower rules first (``hr/secret/**`` before ``hr/**``);
3. else the policy's ``default``: ``"deny"`` (readable by no one: ``schema.NO_READER``) or
   ``"public"``;
4. with ``unix = true``, a file's POSIX read bits and ACL entries are added to what 2-3 gave
   (``pipeline.access_unix``).

The rules come only from the operator (``--config FILE``, or ``AccessPolicy.from_config`` /
``AccessPolicy(...)`` in Python): a ``.ragingest.toml`` inside the ingested data can never grant
access (``config.root_config`` refuses its ``[[access]]`` and the run reports it).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ragingest.config import ConfigError, read_config
from ragingest.pipeline.access_unix import unix_readers
from ragingest.schema import (
    ACCESS_KEY,
    MAX_VALUE_CHARS,
    NO_READER,
    PAGE_ACCESS_HINT,
    PUBLIC_PRINCIPAL,
)
from ragingest.splitters.chunk_metadata import page_range
from ragingest.vectorstore.access.principals import PREFIXES

Default = Literal["deny", "public"]
RULE_KEYS = frozenset({"match", "users", "groups", "public"})
POLICY_KEYS = frozenset({"default", "unix"})


class AccessPolicyError(ConfigError):
    """An access policy (a config's ``[[access]]``/``[access_policy]``) that can't be read."""


def check_principals(value: object, where: str) -> tuple[str, ...]:
    """``value`` as stored readers: a list of principal strings, sorted, each once; an empty
    list is nobody (``NO_READER``). ``ValueError`` naming ``where`` and the bad value else."""
    if not isinstance(value, list | tuple) or isinstance(value, str):
        raise ValueError(
            f"{where}: access must be a list of principal strings (user:NAME, group:NAME, "
            f"unix:user:NAME, unix:group:NAME or {PUBLIC_PRINCIPAL!r}), got {value!r:.80}"
        )
    for name in value:
        good = isinstance(name, str) and len(name) <= MAX_VALUE_CHARS and (
            name in (PUBLIC_PRINCIPAL, NO_READER)
            or (name.startswith(PREFIXES) and name not in PREFIXES)
        )
        if not good:
            raise ValueError(
                f"{where}: bad principal {name!r:.80} in access: write user:NAME, group:NAME, "
                f"unix:user:NAME, unix:group:NAME or {PUBLIC_PRINCIPAL!r}"
            )
    return readers(value)


def readers(names: Iterable[str]) -> tuple[str, ...]:
    """Principal strings as stored: sorted, once each, ``NO_READER`` only when nobody else."""
    found = set(names)
    if len(found) > 1:
        found.discard(NO_READER)
    return tuple(sorted(found or {NO_READER}))


def shared_readers(*lists: Sequence[str]) -> tuple[str, ...]:
    """The readers every one of ``lists`` admits (as stored, ``readers``): ``*`` admits
    everyone, so it gives way to the other lists' names; nobody in common is ``NO_READER``.
    Used where one copy holds what several sources of readers allow (a chunk spanning pages
    of different readers, the kept chunks of a source whose loader failed)."""
    named = [set(names) for names in lists if PUBLIC_PRINCIPAL not in names]
    if not named:  # every list admits everyone
        return readers(name for names in lists for name in names)
    return readers(set.intersection(*named))


@dataclass(frozen=True)
class AccessRule:
    """One ``[[access]]`` rule: the sources ``match`` covers may be read by ``users``,
    ``groups`` and, with ``public``, by every caller who names principals."""

    match: str
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    public: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.match, str) or not self.match:
            raise AccessPolicyError(f'an access rule needs match = "GLOB", got {self.match!r}')
        for key in ("users", "groups"):  # lists from Python code too, each name checked
            value = getattr(self, key)
            value = list(value) if isinstance(value, tuple) else value
            object.__setattr__(self, key, _names(value, f"access rule {self.match!r}: {key}"))

    def covers(self, source: str) -> bool:
        """Whether the rule's glob matches ``source`` or its file name."""
        name = source.rsplit("/", 1)[-1]
        return fnmatch.fnmatchcase(source, self.match) or fnmatch.fnmatchcase(name, self.match)

    @property
    def principals(self) -> tuple[str, ...]:
        """What the rule grants, as principal strings (``NO_READER`` when nobody)."""
        names = [f"user:{u}" for u in self.users] + [f"group:{g}" for g in self.groups]
        return readers(names + ([PUBLIC_PRINCIPAL] if self.public else []))


@dataclass(frozen=True)
class AccessPolicy:
    """An access policy (module docstring): ``rules`` in order, the ``default`` for a source
    no rule covers, and whether POSIX permissions add readers (``unix``). ``origin`` names
    where it was read (the config file) for messages."""

    rules: tuple[AccessRule, ...] = ()
    default: Default = "deny"
    unix: bool = False
    origin: str = field(default="set in Python", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", tuple(self.rules))
        if self.default not in ("deny", "public"):
            raise AccessPolicyError(
                f"{self.origin}: [access_policy] default must be 'deny' or 'public', "
                f"got {self.default!r}"
            )

    def rule_for(self, source: str) -> AccessRule | None:
        """The first rule that covers ``source``, None when none does."""
        return next((rule for rule in self.rules if rule.covers(source)), None)

    def access_for(self, source: str, path: Path | None = None) -> tuple[str, ...]:
        """The readers of ``source`` (module docstring, 2-4); ``path``: its file, for ``unix``."""
        rule = self.rule_for(source)
        if rule is not None:
            names = list(rule.principals)
        else:
            names = [PUBLIC_PRINCIPAL if self.default == "public" else NO_READER]
        if self.unix and path is not None:
            names += unix_readers(path)
        return readers(names)

    @classmethod
    def from_table(cls, data: Mapping[str, object], origin: str) -> AccessPolicy | None:
        """The policy of a parsed config (its ``[[access]]`` and ``[access_policy]``), None
        when it has neither; ``AccessPolicyError`` naming ``origin`` and the bad entry."""
        if "access" not in data and "access_policy" not in data:
            return None
        table = data.get("access_policy", {})
        if not isinstance(table, dict):
            raise AccessPolicyError(f"{origin}: write [access_policy] as a table (default = ...)")
        unknown = sorted(set(table) - POLICY_KEYS)
        if unknown:
            raise AccessPolicyError(f"{origin}: [access_policy] has unknown keys {unknown}")
        unix = table.get("unix", False)
        if not isinstance(unix, bool):
            raise AccessPolicyError(f"{origin}: [access_policy] unix must be true or false")
        entries = data.get("access", [])
        if not isinstance(entries, list):
            raise AccessPolicyError(f'{origin}: write [[access]] tables (match = "hr/**", ...)')
        rules = tuple(_rule(entry, f"{origin}: [[access]] rule {i}") for i, entry in
                      enumerate(entries, 1))  # fmt: skip
        default = table.get("default", "deny")
        if default not in ("deny", "public"):
            raise AccessPolicyError(
                f"{origin}: [access_policy] default must be 'deny' or 'public', got {default!r}"
            )
        return cls(rules, "public" if default == "public" else "deny", unix, origin)

    @classmethod
    def from_config(cls, path: str | Path) -> AccessPolicy | None:
        """The policy of the operator's config file ``path`` (None when it sets none)."""
        return cls.from_table(read_config(path), str(path))


def _rule(entry: object, where: str) -> AccessRule:
    if not isinstance(entry, dict) or not isinstance(entry.get("match"), str) or not entry["match"]:
        raise AccessPolicyError(f'{where}: give match = "GLOB" (e.g. match = "hr/**")')
    unknown = sorted(set(entry) - RULE_KEYS)
    if unknown:
        raise AccessPolicyError(f"{where}: unknown keys {unknown} (use {sorted(RULE_KEYS)})")
    names = {key: _names(entry.get(key, []), f"{where}: {key}") for key in ("users", "groups")}
    public = entry.get("public", False)
    if not isinstance(public, bool):
        raise AccessPolicyError(f"{where}: public must be true or false")
    return AccessRule(entry["match"], names["users"], names["groups"], public)


def _names(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise AccessPolicyError(f'{where} must be a list of names (["hr", "ceo"])')
    return tuple(value)


PageReaders = list[tuple[int, tuple[str, ...]]]


def page_access(
    documents: Sequence[Mapping[str, object]], source: str
) -> PageReaders | None:
    """The per-page readers of one source's joined pages (``schema.PAGE_ACCESS_HINT``, set
    where its pages named different ``access`` lists), each list checked; None when it has
    none. ``ValueError`` naming the source and the page when one is bad."""
    found: PageReaders = []
    for meta in documents:
        for page, value in meta.get(PAGE_ACCESS_HINT) or ():  # type: ignore[attr-defined]
            found.append((int(page), check_principals(value, f"{source} (page {page})")))
    return found or None


def section_readers(
    pages: PageReaders, page_map: Sequence[tuple[int, int]] | None, span: tuple[int, int]
) -> tuple[str, ...]:
    """The readers of the text ``span`` of a joined document whose pages have the readers
    ``pages``: those every page it covers admits (``shared_readers``); every page's where the
    document has no page map."""
    covered = list(pages)
    if page_map:
        first, last = page_range(list(page_map), *span)
        covered = [(page, names) for page, names in pages if first <= page <= last] or covered
    return shared_readers(*(names for _page, names in covered))


def document_access(
    documents: Sequence[Mapping[str, object]], source: str
) -> tuple[str, ...] | None:
    """The readers the metadata of one source's documents names (``ACCESS_KEY``), None when
    none of them names any; ``ValueError`` naming the source when one is bad or they differ."""
    given = [(i, meta[ACCESS_KEY]) for i, meta in enumerate(documents) if ACCESS_KEY in meta]
    if not given:
        return None
    lists = {check_principals(value, f"{source} (document {i})") for i, value in given}
    if len(lists) > 1 or len(given) < len(documents):
        raise ValueError(
            f"{source}: its documents name different readers (metadata['access']): give every "
            "document of one source the same list, or each its own metadata['source']"
        )
    return lists.pop()
