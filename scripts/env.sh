# The environment of README's two commands, sourced by scripts/demo.sh and scripts/test.sh:
# offline, no telemetry, and Python's bytecode cached. A shell that exports
# PYTHONDONTWRITEBYTECODE makes every Python process compile each module it imports from
# source again (torch, transformers, chromadb...: seconds per process, and the tests start
# hundreds); the cache lives under .venv, never beside the sources.
export HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 ANONYMIZED_TELEMETRY=False
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$PWD/.venv/pycache"
