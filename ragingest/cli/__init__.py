"""The ``ragingest`` command line (``main``: entry point ``ragingest = ragingest.cli.main:main``):
arguments (``args``, ``args_evaluate``, ``loader_specs`` for ``--loader`` and ``[[sources]]``),
the subcommands (``commands``: ingest, query, status, inspect, watch, evaluate, trace), exit
codes for store faults (``faults``). The top layer: it drives the pipeline,
retrieval and evaluation and nothing imports it."""
