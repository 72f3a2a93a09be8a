"""``.ragingest.toml``: the one reader of the config file, and who may say what in it.

Two kinds of config, one file format:

- the operator's (``operator_config``): a file the operator names (``--config FILE``) or the
  current directory's when no PATH is given. It may name sources (``[[sources]]``: paths and
  loaders) as well as ``[content_types]``.
- a root's (``root_config``): the ``.ragingest.toml`` found inside an ingested folder. It is
  data, written by whoever wrote the folder's files, so it may only set how that folder is
  split (``ROOT_KEYS``); anything else in it (``sources``, loaders, paths, unknown tables) is
  ignored and listed in ``RootConfig.ignored`` so the run can say so. Its ``[[access]]`` and
  ``[access_policy]`` above all: data never says who may read it (``pipeline.access_policy``).

Contract: ``read_config`` returns the parsed table or raises ``ConfigError`` naming the file;
``root_config`` never imports nor resolves anything it reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ragingest.errors import RagIngestError

CONFIG_FILE = ".ragingest.toml"
ROOT_KEYS = frozenset({"content_types"})  # what a config inside an ingested root may set
ACCESS_KEYS = frozenset({"access", "access_policy"})  # who may read: the operator's alone


class ConfigError(RagIngestError, ValueError):
    """A ``.ragingest.toml`` that cannot be read or is malformed."""


def read_config(path: str | Path) -> dict[str, Any]:
    """The parsed TOML of ``path``; ``ConfigError`` naming the file when it can't be read."""
    import tomllib  # only where a config file is there: a query that reads none skips it

    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc}") from exc


@dataclass(frozen=True)
class RootConfig:
    """What a root's ``.ragingest.toml`` may set, and the keys it tried and may not."""

    path: Path | None = None
    content_types: tuple[tuple[str, str], ...] = ()
    ignored: tuple[str, ...] = field(default_factory=tuple)

    def ignored_note(self) -> str:
        """The line a run prints and reports for the ignored keys ('' when none)."""
        if not self.ignored:
            return ""
        keys = ", ".join(self.ignored)
        note = (
            f"{self.path}: ignored {keys}: a config inside an ingested folder may set only "
            f"{', '.join(sorted(ROOT_KEYS))}; name sources with PATH, --loader or "
            "--config FILE"
        )
        if ACCESS_KEYS & set(self.ignored):
            note += (
                "; REFUSED its access rules: a config inside the data can never grant "
                "access (the operator's --config FILE says who may read)"
            )
        return note


@lru_cache(maxsize=64)
def _root_config(path: Path, _mtime_ns: int) -> RootConfig:
    data = read_config(path)
    table = data.get("content_types", {})
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: write [content_types] as a table ("GLOB" = "TYPE")')
    ignored = tuple(sorted(key for key in data if key not in ROOT_KEYS))
    rules = tuple((str(k), str(v)) for k, v in table.items())
    return RootConfig(path, rules, ignored)


def root_config(root: str | Path | None) -> RootConfig:
    """The allowed part of ``root/.ragingest.toml`` (empty when there is none or ``root`` is
    not a folder); re-read when the file changes."""
    if root is None:
        return RootConfig()
    path = Path(root) / CONFIG_FILE
    try:
        info = path.stat()
    except OSError:
        return RootConfig()
    if not path.is_file():
        return RootConfig()
    return _root_config(path, info.st_mtime_ns)


def operator_config(path: str | Path) -> dict[str, Any]:
    """The whole config the operator named (or the current directory's); {} when absent."""
    path = Path(path)
    if not path.is_file():
        return {}
    return read_config(path)
