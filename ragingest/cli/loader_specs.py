"""Loaders named in text: ``--loader MODULE:CLASS --loader-arg KEY=VALUE`` on the command line
and ``[[sources]]`` tables in the operator's ``.ragingest.toml`` (``--config FILE``, or the
current directory's when no PATH is given), so a cron line can re-index any LangChain document
loader. A ``.ragingest.toml`` inside an ingested folder never names sources
(``ragingest.config``).

Contract:

- a bare ``CLASS`` is looked up in ``langchain_community.document_loaders`` (``TextLoader``,
  ``PyPDFLoader``, ``CSVLoader``, ``BSHTMLLoader``, ``DirectoryLoader``, ...): the optional
  extra ``ragingest[community]`` (a sunset package, so not installed by default); without it
  the error says how to install it. The maintained integration packages are named as
  ``MODULE:CLASS`` (``langchain_unstructured:UnstructuredLoader``, ...); a module that is not
  installed is named with its ``pip install`` line. A
  ``MODULE:CLASS`` from a config file must name a module of ``TRUSTED_MODULES``, checked
  before anything is imported; one typed on the command line (``--loader``) is imported as
  given. It must be a ``BaseLoader``; errors (``LoaderSpecError``) name the spec and what to
  do.
- ``KEY=VALUE``: the value is parsed as JSON when it parses (``42``, ``true``, ``["a"]``,
  ``{"k": 1}``), else taken as a string. The loader is built as ``CLASS(**args)``.
- ``[[sources]]`` entries: ``loader = "MODULE:CLASS"`` with an ``args`` table, or
  ``path = "folder/or/file"``. Relative ``path`` values, and loader args named ``file_path``,
  ``path``, ``paths`` or ``file_paths``, are resolved against the folder of the
  config file (so a job may run from any directory).
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest.config import CONFIG_FILE, operator_config
from ragingest.errors import RagIngestError

if TYPE_CHECKING:
    from langchain_core.document_loaders import BaseLoader

    from ragingest.pipeline.access_policy import AccessPolicy

COMMUNITY_MODULE = "langchain_community.document_loaders"
COMMUNITY_INSTALL = "pip install 'ragingest[community]'"  # the extra that holds it
# the modules (and their submodules) a loader named in a config file may come from
TRUSTED_MODULES = (COMMUNITY_MODULE, "langchain_core.document_loaders", "ragingest.loaders")
_PATH_ARGS = ("file_path", "path", "paths", "file_paths")


class LoaderSpecError(RagIngestError):
    """A loader named on the command line or in ``.ragingest.toml`` cannot be built."""


@dataclass
class LoaderSpec:
    """A LangChain loader named on the command line or in ``[[sources]]``: its class and keyword
    arguments."""
    target: str  # "MODULE:CLASS" or "CLASS" (in langchain_community.document_loaders)
    args: dict[str, object] = field(default_factory=dict)
    trusted: bool = True  # typed by the operator: any module; from a file: TRUSTED_MODULES

    def build(self) -> BaseLoader:
        """The loader instance; ``LoaderSpecError`` with the reason otherwise."""
        cls = import_loader(self.target, self.trusted)
        try:
            return cls(**self.args)
        except Exception as exc:
            raise LoaderSpecError(
                f"loader {self.target}: cannot build it with {self.args}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc


def is_trusted_module(module_name: str) -> bool:
    """Whether ``module_name`` is one of ``TRUSTED_MODULES`` or below one (by name only)."""
    return any(module_name == m or module_name.startswith(m + ".") for m in TRUSTED_MODULES)


def import_loader(target: str, trusted: bool = True) -> type:
    """The ``BaseLoader`` class ``target`` names ('MODULE:CLASS', or a class of
    ``langchain_community.document_loaders``); ``LoaderSpecError`` saying why otherwise.
    Unless ``trusted``, its module must be a ``TRUSTED_MODULES`` one, checked on the name
    before the module is imported."""
    from langchain_core.document_loaders import BaseLoader

    module_name, _, class_name = target.rpartition(":")
    module_name = module_name or COMMUNITY_MODULE
    if not class_name.isidentifier():
        raise LoaderSpecError(
            f"loader {target!r}: write MODULE:CLASS, e.g. {COMMUNITY_MODULE}:TextLoader"
        )
    if not trusted and not is_trusted_module(module_name):
        raise LoaderSpecError(
            f"loader {target}: a config file may name loaders of {', '.join(TRUSTED_MODULES)} "
            "only (nothing was imported); name another loader on the command line with "
            "--loader MODULE:CLASS"
        )
    if module_name.split(".")[0] == "langchain_unstructured":  # unstructured, offline
        from ragingest.loaders.formats.partition import setup

        setup()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise LoaderSpecError(
            f"loader {target}: cannot import {module_name} ({exc}): {install_hint(module_name)}"
        ) from exc
    try:
        cls = getattr(module, class_name)
    except (AttributeError, ImportError) as exc:  # community loaders import lazily
        raise LoaderSpecError(
            f"loader {target}: {module_name} has no {class_name} ({exc})"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, BaseLoader)):
        raise LoaderSpecError(f"loader {target}: {class_name} is not a LangChain BaseLoader")
    return cls


def install_hint(module_name: str) -> str:
    """What to do when ``module_name`` cannot be imported: the install line of the package
    that provides it (LangChain's integration packages are named after their module)."""
    top = module_name.split(".")[0]
    if top == "langchain_community":
        return f"langchain-community is an optional extra: {COMMUNITY_INSTALL}"
    if top.startswith("langchain_"):
        return f"install it: pip install {top.replace('_', '-')}"
    return "install the package that provides it, or check the spelling"


def parse_value(text: str) -> object:
    """``text`` as JSON where it parses, else the string itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_arg(text: str) -> tuple[str, object]:
    """``(key, value)`` of one ``--loader-arg KEY=VALUE``; ``LoaderSpecError`` for a malformed
    one."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip().isidentifier():
        raise LoaderSpecError(f"--loader-arg {text!r}: write KEY=VALUE, e.g. file_path=notes.txt")
    return key.strip(), parse_value(value)


class LoaderAction(argparse.Action):
    """``--loader``: start a new spec (its ``--loader-arg``s follow it)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option: str | None = None,
    ) -> None:
        specs = list(getattr(namespace, self.dest, None) or [])
        specs.append(LoaderSpec(str(values)))
        setattr(namespace, self.dest, specs)


class LoaderArgAction(argparse.Action):
    """``--loader-arg KEY=VALUE``: an argument of the last ``--loader``."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option: str | None = None,
    ) -> None:
        specs = getattr(namespace, "loaders", None) or []
        if not specs:
            parser.error("--loader-arg must follow the --loader it belongs to")
        try:
            key, value = parse_arg(str(values))
        except LoaderSpecError as exc:
            parser.error(str(exc))
        specs[-1].args[key] = value


def add_loader_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--loader`` and ``--loader-arg`` to ``parser``."""
    parser.add_argument(
        "--loader",
        dest="loaders",
        action=LoaderAction,
        default=[],
        metavar="MODULE:CLASS",
        help="also ingest what this LangChain document loader returns (repeatable); a bare "
        f"CLASS is looked up in {COMMUNITY_MODULE}, e.g. --loader PyPDFLoader "
        "--loader-arg file_path=report.pdf",
    )
    parser.add_argument(
        "--loader-arg",
        action=LoaderArgAction,
        metavar="KEY=VALUE",
        help="keyword argument of the preceding --loader (VALUE read as JSON when it parses)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the operator's config: also ingest its [[sources]], and read who may read each "
        "document from its [[access]] rules and [access_policy] (with no PATH and no "
        "--loader: ./.ragingest.toml); a .ragingest.toml inside an ingested folder may set "
        "[content_types] only",
    )


def config_sources(config: Path) -> list[Path | LoaderSpec]:
    """The ``[[sources]]`` of an operator's config (a file, or a folder's ``CONFIG_FILE``):
    paths (``Path``) and loader specs, relative paths resolved against the file's folder; []
    when the file or the table is absent."""
    config = Path(config)
    if config.is_dir():
        config = config / CONFIG_FILE
    folder = config.parent
    data = operator_config(config)
    entries = data.get("sources", [])
    if not isinstance(entries, list):
        raise LoaderSpecError(f"{config}: write [[sources]] tables (loader = ... or path = ...)")
    out: list[Path | LoaderSpec] = []
    for i, entry in enumerate(entries, 1):
        where = f"{config}: [[sources]] entry {i}"
        if not isinstance(entry, dict) or ("loader" in entry) == ("path" in entry):
            raise LoaderSpecError(f'{where}: give exactly one of loader = "MODULE:CLASS" or path')
        if "path" in entry:
            out.append(_resolve(folder, str(entry["path"])))
            continue
        args = entry.get("args", {})
        if not isinstance(args, dict):
            raise LoaderSpecError(f"{where}: args must be a table (args = {{ file_path = ... }})")
        resolved = {
            key: _resolve_arg(folder, value) if key in _PATH_ARGS else value
            for key, value in args.items()
        }
        out.append(LoaderSpec(str(entry["loader"]), resolved, trusted=False))
    return out


def _resolve(folder: Path, value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path(folder) / path


def _resolve_arg(folder: Path, value: object) -> object:
    if isinstance(value, str):
        return str(_resolve(folder, value))
    if isinstance(value, list):
        return [str(_resolve(folder, v)) if isinstance(v, str) else v for v in value]
    return value


def operator_config_path(
    paths: list[str], loaders: list[LoaderSpec], config: str | Path | None = None
) -> Path | None:
    """The operator's config of a command line: ``--config FILE`` (``LoaderSpecError`` when it
    is not a file), else ``./.ragingest.toml`` when no path or loader is given, else None."""
    if config is not None:
        if not Path(config).is_file():
            raise LoaderSpecError(f"--config {config}: no such file")
        return Path(config)
    return Path.cwd() / CONFIG_FILE if not paths and not loaders else None


def config_access_policy(
    paths: list[str], loaders: list[LoaderSpec], config: str | Path | None = None
) -> AccessPolicy | None:
    """The access policy of the operator's config (``operator_config_path``), None without
    one; ``AccessPolicyError`` naming the file and the bad rule."""
    from ragingest.pipeline.access_policy import AccessPolicy

    named = operator_config_path(paths, loaders, config)
    return AccessPolicy.from_config(named) if named is not None and named.is_file() else None


def cli_sources(
    paths: list[str], loaders: list[LoaderSpec], config: str | Path | None = None
) -> list[str | BaseLoader]:
    """The sources of an ``ingest``/``watch`` command line: its paths, the ``[[sources]]`` of
    the operator's config (``config``; else ``./.ragingest.toml`` when no path or loader is
    given), then its ``--loader``s, built. A config inside an ingested folder is never read
    here (``ragingest.config.root_config`` reads its allowed part at split time)."""
    out: list[str | BaseLoader] = list(paths)
    named = operator_config_path(paths, loaders, config)
    if named is not None:
        for item in config_sources(named):
            out.append(item.build() if isinstance(item, LoaderSpec) else str(item))
    out.extend(spec.build() for spec in loaders)
    return out
