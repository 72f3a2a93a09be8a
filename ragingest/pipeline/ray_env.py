"""The one place that makes Ray loopback-only and silent; used by the CLI, the engine and tests.

Found while probing Ray 2.60 on this machine (each confirmed with strace):

- by default Ray binds and connects on the machine's non-loopback address and listens on all
  interfaces: ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (and the node address 127.0.0.1) keeps
  everything on 127.0.0.1;
- even with ``RAY_USAGE_STATS_ENABLED=0`` a usage module probes cloud metadata and does a DNS
  lookup: ``HOME`` (for Ray's processes) points at a folder holding ``ray_bootstrap_config.yaml``
  = ``{}`` and ``RAY_USAGE_STATS_REPORT_URL=http://127.0.0.1:9/``;
- Ray 2.60 turns token auth on and writes ``~/.ray/auth_token``: ``RAY_AUTH_MODE=disabled`` for
  a local runtime / test cluster. A real multi-machine cluster should keep Ray's token auth on
  (``RAY_AUTH_MODE=token``, the token shared with every node) and a private network;
- ``ray.init()`` may join a stale cluster recorded in its temp dir: ``address="local"`` starts a
  fresh local runtime; ``ray stop`` is machine-wide, so a ``ray start --head --block`` is
  stopped by its pid.

``HOME`` moves, so the model caches are pinned first (``RAGINGEST_CACHE_DIR``, ``HF_HOME``):
Ray's workers must find the same offline model as the driver.

Also here, for the engine (``pipeline.engine_ray``): the actor pool's size, the Ray Data context
of a run (rows in order, quiet) and the message a Ray failure becomes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.errors import RagIngestError
from ragingest.models.locate import cache_dir

if TYPE_CHECKING:
    from types import ModuleType

LOOPBACK = "127.0.0.1"
# Ray is the ``ray`` extra: scripts/demo.sh installs the runtime pins only, scripts/setup.sh all
RAY_MISSING = (
    "--engine ray needs Ray, the `ray` extra, which is not installed: run `bash scripts/setup.sh` "
    "(all of requirements.lock), or use the default --engine local"
)


def require_ray() -> None:
    """Raise ``RagIngestError`` (:data:`RAY_MISSING`) unless ``ray`` can be imported: checked
    before a run touches anything, so a missing extra is one line, not a Ray failure."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise RagIngestError(RAY_MISSING)


def ray_home() -> Path:
    """The ``HOME`` of Ray's processes: holds ``ray_bootstrap_config.yaml`` = ``{}``."""
    home = cache_dir() / "ray_home"
    home.mkdir(parents=True, exist_ok=True)
    bootstrap = home / "ray_bootstrap_config.yaml"
    if not bootstrap.is_file():
        bootstrap.write_text("{}\n", encoding="utf-8")
    return home


def ray_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables Ray's processes (and the driver) need: loopback, no telemetry, no auth
    for a local runtime, the model caches pinned. ``base`` defaults to ``os.environ``; an
    explicit ``RAY_AUTH_MODE`` in it is kept (a real cluster with token auth)."""
    base = os.environ if base is None else base
    real_home = Path(base.get("HOME") or Path.home())
    hf_home = base.get("HF_HOME") or str(real_home / ".cache" / "huggingface")
    return {
        "RAGINGEST_CACHE_DIR": base.get("RAGINGEST_CACHE_DIR") or str(cache_dir()),
        "HF_HOME": hf_home,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "DO_NOT_TRACK": "1",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_USAGE_STATS_PROMPT_ENABLED": "0",
        "RAY_USAGE_STATS_REPORT_URL": "http://127.0.0.1:9/",
        "RAY_AUTH_MODE": base.get("RAY_AUTH_MODE") or "disabled",
        "HOME": str(ray_home()),
    }


@contextlib.contextmanager
def ray_runtime(address: str | None = None, num_cpus: int | None = None) -> Iterator[ModuleType]:
    """``ray`` initialised for this block: a fresh local runtime on 127.0.0.1 without an
    address, else the cluster at ``address`` (``HOST:PORT``). Restores the environment and
    shuts Ray down after."""
    env = ray_environment()
    saved = {key: os.environ.get(key) for key in env}
    imported_before = "ray" in sys.modules  # then Ray read its constants without our env
    os.environ.update(env)
    try:
        import ray

        if imported_before:
            # no public switch: Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER once, at its first
            # import, and without it resolves the node address 127.0.0.1 to a non-loopback one
            from ray._private import ray_constants

            ray_constants.ENABLE_RAY_CLUSTER = False
        kwargs: dict[str, Any] = {
            "log_to_driver": False,
            "include_dashboard": False,
            "configure_logging": False,
        }
        if address:
            ray.init(address=address, **kwargs)
        else:
            ray.init(
                address="local",
                num_cpus=num_cpus or os.cpu_count() or 1,
                _node_ip_address=LOOPBACK,
                **kwargs,
            )
        try:
            yield ray
        finally:
            ray.shutdown()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def pool_size(
    cpus: float,
    requested: int | None,
    files: int,
    memory: float | None,
    share: float,
    actor_memory: int,
) -> int:
    """The number of embedding actors of a run on a cluster of ``cpus`` CPUs and ``memory``
    bytes (None: not reported), each taking ``share`` of a CPU and ``actor_memory`` bytes:
    ``requested``, else one per CPU; then at most one per file, at most what leaves one split
    task its ``share`` (actors holding every CPU would wait for rows no task can make: a
    deadlock) and at most what ``memory`` holds (an actor that can't get its memory stalls the
    pool); never under 1."""
    actors = requested or max(1, int(cpus))
    actors = min(actors, files, int((cpus - share) / share))
    if memory:
        actors = min(actors, int(memory // actor_memory))
    return max(1, actors)


def failed(exc: BaseException) -> RagIngestError:
    """The ``RagIngestError`` to raise when the Ray engine fails: what failed, and that the files
    written before it are kept."""
    first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return RagIngestError(
        f"the Ray engine failed ({type(exc).__name__}: {first}); the files written before it "
        "keep their chunks and states, the others are as before: run again"
    )


@contextlib.contextmanager
def data_context(progress: bool) -> Iterator[None]:
    """Rows in input order (files reach the driver in task order), no progress bars unless
    asked, and Ray Data's per-dataset INFO lines only with progress."""
    from ray.data import DataContext

    context = DataContext.get_current()
    saved = (context.execution_options.preserve_order, context.enable_progress_bars)
    loggers = {
        logging.getLogger("ray.data"): logging.WARNING,
        logging.getLogger("ray.data._internal.progress"): logging.ERROR,  # "bars disabled"
    }
    levels = {logger: logger.level for logger in loggers}
    context.execution_options.preserve_order = True
    context.enable_progress_bars = progress
    if not progress:
        for logger, level in loggers.items():
            logger.setLevel(level)
    try:
        yield
    finally:
        context.execution_options.preserve_order, context.enable_progress_bars = saved
        for logger, level in levels.items():
            logger.setLevel(level)
