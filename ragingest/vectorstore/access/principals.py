"""Who is reading: the caller's principals, and the one filter that admits what they may read.

A collection written under an access policy (``collection_info.ACCESS_POLICY_KEY``) stores on
every chunk and parent section the principals that may read its document (``schema.ACCESS_KEY``).
A read names its caller's principals as a ``Principals`` value:

- ``Principals.of(user="bob", groups=["hr"])`` or ``Principals(("user:bob", "group:hr"))``:
  the chunks whose ``access`` list names any of them, or ``PUBLIC_PRINCIPAL``;
- ``ALL``: every chunk, said explicitly (an operator's or a test's read);
- None: allowed only on a collection without a policy (else ``PrincipalsRequiredError``);
  naming principals on a collection without a policy is refused (``NoAccessPolicyError``):
  they would filter nothing.

``access_filter`` is the one translation of principals into a store filter; the store seam ANDs
it into every read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragingest.errors import NoAccessPolicyError, PrincipalsRequiredError
from ragingest.schema import ACCESS_KEY, NO_READER, PUBLIC_PRINCIPAL
from ragingest.vectorstore.seam import AnyOf, Condition, Filter

PREFIXES = ("user:", "group:", "unix:user:", "unix:group:")


@dataclass(frozen=True)
class Principals:
    """The principal strings a caller holds (``user:NAME``, ``group:NAME``, ``unix:...``)."""

    names: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in self.names:
            if not isinstance(name, str) or not name.startswith(PREFIXES) or name in PREFIXES:
                raise ValueError(
                    f"bad principal {name!r}: write user:NAME, group:NAME, unix:user:NAME "
                    "or unix:group:NAME"
                )

    @classmethod
    def of(cls, user: str | None = None, groups: Iterable[str] = ()) -> Principals:
        """``user:USER`` and ``group:G`` for each of ``groups``."""
        names = ([f"user:{user}"] if user else []) + [f"group:{g}" for g in groups]
        return cls(tuple(names))


class AllPrincipals:
    """Every chunk, whatever its ``access``: the explicit opposite of naming principals (its one
    value is ``ALL``)."""

    _instance: AllPrincipals | None = None

    def __new__(cls) -> AllPrincipals:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ALL"


_All = AllPrincipals
ALL = AllPrincipals()
Access = Principals | AllPrincipals | None


def as_access(value: Access | Iterable[str]) -> Access:
    """A caller's principals as a read takes them: ``Principals``, ``ALL`` or None as given;
    a list of principal strings (``["user:bob", "group:hr"]``) as ``Principals`` (checked).
    A bare string is refused: it is one principal, write it as a list."""
    if value is None or isinstance(value, Principals | AllPrincipals):
        return value
    if isinstance(value, str):
        raise ValueError(f"principals={value!r}: give a list, e.g. [{value!r}], or Principals")
    return Principals(tuple(value))


def no_policy(principals: Principals) -> NoAccessPolicyError:
    """The error of a read naming ``principals`` on a collection without an access policy."""
    return NoAccessPolicyError(
        f"principals {', '.join(principals.names) or '(none)'} given, but this collection was "
        "made without an access policy: every chunk is everyone's, so nothing would filter "
        "by them. Ingest it under a policy (--config FILE with [[access]] rules; Python: "
        "access_policy=AccessPolicy.from_config(FILE)), or read it without principals"
    )


def principals_required() -> PrincipalsRequiredError:
    """The error of a read that names nobody on a collection with an access policy."""
    return PrincipalsRequiredError(
        "this collection has an access policy: name the reader's principals "
        "(principals=Principals.of(user=..., groups=[...]), query --as USER --group G) "
        "or read everything explicitly with principals=ALL (query --all-principals)"
    )


def access_filter(principals: Access, policy: bool) -> Filter | None:
    """The filter a read under ``principals`` ANDs into its own, on a collection with
    (``policy``) or without an access policy (everyone reads all of it). None: nothing to add.
    Raises ``PrincipalsRequiredError`` when a policy collection is read with no principals,
    and ``NoAccessPolicyError`` when a collection without one is read naming principals
    (nothing could filter by them: the caller must not believe it does)."""
    if isinstance(principals, _All):
        return None
    if principals is None:
        if policy:
            raise principals_required()
        return None
    if not policy:
        raise no_policy(principals)
    return AnyOf(tuple(Condition(ACCESS_KEY, "$contains", n) for n in readable_names(principals)))


def readable_names(principals: Principals) -> list[str]:
    """The principal strings a chunk's ``access`` must name one of for ``principals`` to read
    it: theirs and ``PUBLIC_PRINCIPAL`` (never ``NO_READER``), sorted."""
    return sorted({*principals.names, PUBLIC_PRINCIPAL} - {NO_READER})
