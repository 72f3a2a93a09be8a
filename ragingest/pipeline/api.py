"""The Python API of a run: ``ragingest.ingest(sources, *, persist_dir, collection,
**settings)``.

``sources``: paths (files or folders), LangChain ``BaseLoader``s (ours or any of
langchain-community's) and iterables of ``Document``s, in any mix (``loaders.inputs.source_items``).
Every kind gets the same re-indexing: keyed by ``metadata["source"]`` (a file: its path under
the ingested root, prefixed by the root's name when several are given: ``loaders.walk``), an
unchanged source is not split or embedded again, a source gone from
this run's output has its chunks deleted, under the same lock, journal, model guard, parent
sections and run report. ``settings`` are the fields of ``RunSettings`` and of
``SplitSettings`` by name (``chunk_size=200``, ``rebuild=True``, ...), a whole
``split=SplitSettings(...)``, or a whole ``options=IngestOptions(...)`` (its
``persist_dir``/``collection`` replaced by the arguments, its values kept where no name is
given). An unknown name raises ``TypeError`` listing the known ones.

The keywords are declared once, as those dataclasses' fields: ``IngestArguments`` inherits
them, and ``ingest`` takes its parameters (``takes_arguments_of``: mypy and an IDE read them
through a ``ParamSpec``, ``help()`` and ``inspect.signature`` through ``__signature__``).

Refusals raise before anything changes: a path that does not exist (``MissingPathError``, a
``FileNotFoundError``), a run that would delete every recorded source or more than
``max_delete_share`` of them (``MassDeleteError``; ``allow_mass_delete=True`` confirms). A
file that fails is logged as a warning and named in the report; ``strict=True`` (or
``report.raise_for_failures()``) raises ``FilesFailedError`` after the run when any did.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ragingest.pipeline.options import RENAMED, IngestOptions, RunSettings, renamed
from ragingest.splitters.factory import SplitSettings

if TYPE_CHECKING:  # a run's modules are imported on its first call (``run``)
    from ragingest.loaders.inputs.source_items import Sources
    from ragingest.pipeline.report import RunReport

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class IngestArguments(SplitSettings, RunSettings):
    """What ``ragingest.ingest`` takes: ``sources``, then by name the store's place, a whole
    ``options``, every ``RunSettings`` field and every ``SplitSettings`` field (each inherited,
    not restated). Never built: it is a signature. The defaults shown are ``IngestOptions``';
    with ``options`` given, a name not given keeps ``options``' value."""

    sources: Sources
    _: KW_ONLY
    persist_dir: str | Path
    collection: str
    options: IngestOptions | None = None


def takes_arguments_of(
    declaration: Callable[P, object],
) -> Callable[[Callable[..., R]], Callable[P, R]]:
    """A decorator: the function is typed as taking ``declaration``'s parameters (mypy binds
    them through ``P``) and shows them (``__signature__``, required ones first). A call
    missing a required one raises ``TypeError`` naming it; names outside the declaration
    reach the function, which refuses them in its own words."""

    def decorate(function: Callable[..., R]) -> Callable[P, R]:
        params = inspect.signature(declaration).parameters.values()
        ordered = sorted(params, key=lambda p: (p.kind, p.default is not p.empty))
        returns = inspect.signature(function).return_annotation
        signature = inspect.Signature(ordered, return_annotation=returns)

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> R:
            declared = {k: v for k, v in kwargs.items() if k in signature.parameters}
            try:
                signature.bind(*args, **declared)
            except TypeError as exc:
                raise TypeError(f"{function.__name__}() {exc}") from None
            return function(*args, **kwargs)

        checked.__signature__ = signature  # type: ignore[attr-defined]
        return checked

    return decorate


@takes_arguments_of(IngestArguments)
def ingest(sources: Sources, **arguments: Any) -> RunReport:
    """One run over ``sources`` into ``collection``; the ``RunReport``.

    ``sources``: paths (files or folders), LangChain ``BaseLoader``s and iterables of
    ``Document``s, in any mix; each is re-indexed by ``metadata["source"]`` (unchanged: not
    embedded again; gone: its chunks deleted). The settings: the fields of ``RunSettings``
    and ``SplitSettings`` by name (``chunk_size=200``, ``rebuild=True``), a whole ``split``,
    or a whole ``options``. An unknown name raises ``TypeError`` listing the known ones
    (``ragingest.pipeline.api``)."""
    return run(sources, make_options(**arguments))


def make_options(
    persist_dir: str | Path,
    collection: str,
    options: IngestOptions | None = None,
    **settings: Any,
) -> IngestOptions:
    """``IngestOptions`` from ``ingest``'s arguments but ``sources`` (module docstring)."""
    if not isinstance(persist_dir, str | os.PathLike) or not str(persist_dir):
        raise TypeError(
            f"persist_dir must be the store's folder (a str or Path), got {persist_dir!r}"
        )
    if not isinstance(collection, str):
        raise TypeError(f"collection must be a name (str), got {collection!r}")
    base = options if options is not None else IngestOptions(Path(persist_dir), collection)
    run_names = {f.name for f in fields(RunSettings)} - {"split"}
    split_names = {f.name for f in fields(SplitSettings)}
    for old in RENAMED.keys() & settings.keys():  # deprecated spellings, warned
        settings[renamed(old, stacklevel=5)] = settings.pop(old)  # the caller of ingest
    unknown = set(settings) - run_names - split_names - {"split"}
    if unknown:
        raise TypeError(
            f"ingest() got unknown option(s) {sorted(unknown)}; run options: "
            f"{sorted(run_names)}; split settings: {sorted(split_names)}"
        )
    split = settings.pop("split", base.split)
    split = replace(split, **{k: settings.pop(k) for k in list(settings) if k in split_names})
    return replace(
        base, persist_dir=Path(persist_dir), collection=collection, split=split, **settings
    )


def run(sources: Any, options: IngestOptions, report: RunReport | None = None) -> RunReport:
    """One run over ``sources`` with ready ``IngestOptions``; the ``RunReport`` (``report``
    when given: filled as the run goes, so a caller still has it when the run raises)."""
    from ragingest.loaders.inputs.source_items import split_sources
    from ragingest.pipeline.runner import ingest as run_all

    paths, documents = split_sources(sources)
    if documents and options.engine != "local":
        raise ValueError(
            f"the {options.engine} engine reads files only: ingest loaders and Documents with "
            "the local engine (engine='local'), or save them as files first"
        )
    report = run_all(paths, options, documents, report)
    if options.strict:
        report.raise_for_failures()
    return report
