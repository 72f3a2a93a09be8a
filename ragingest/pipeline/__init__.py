"""One ingest run, as the data flows (each module one stage, a typed value between them):

``runner.ingest``: lock (``lock``) → collection lifecycle (``lifecycle``: alias, rebuild,
swap, garbage collection, drop) → plan (``plan``: walk, stamp, the skip rule, the unsupported
check → ``FileTask``s) → engine (``engine_local`` or ``engine_ray``: boilerplate scan, then
``split`` turns each task into that file's ``schema.ChunkRecord``s, Ray also embeds) →
each outcome reported and written (``apply_plan``) → writer (``writer``: crash-safe write
order and recovery) → run log (``runlog``).

``api`` is the Python API behind ``ragingest.ingest(sources, ...)`` (any source in, keyword
settings, a ``RunReport`` out); ``runner.ingest(paths, IngestOptions(...))`` is the run itself.
``ragingest.cli`` is the command line that drives it. The package is not named ``ingest``:
that name is the ``ragingest.ingest`` function, which a subpackage would replace.
"""
