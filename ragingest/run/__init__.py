"""One ingest run, as the data flows (each module one stage, a typed value between them):

``runner.ingest``: lock (``lock``) → collection lifecycle (``lifecycle``: alias, rebuild,
swap, garbage collection, drop) → plan (``plan``: walk, stamp, the skip rule, the unsupported
check → ``FileTask``s) → engine (``engine_local`` or ``engine_ray``: boilerplate scan, then
``split`` turns each task into that file's ``schema.ChunkRecord``s, Ray also embeds) →
writer (``writer``: crash-safe write order and recovery) → run log (``runlog``).

``ragingest.ingest`` holds the command line only; this package is the run it drives, also
the Python API (``from ragingest.run.runner import IngestOptions, ingest``). Kept apart from
the CLI so a LangChain app or a scheduler imports the run without argparse and the CLI's
subcommands, and so the folder names read as the pipeline.
"""
