#!/usr/bin/env bash
# README command (1): set up, ingest examples/ into ./chroma_db (collection "examples"), ask.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
# requirements-runtime.lock: the core and the extras the sample files need (a PDF: [pdf], a
# DOCX: [office], an HTML page: [html]); no torch, nor the dev tools
bash scripts/setup.sh --runtime
# --rebuild: a ./chroma_db left by an older version (another model or settings) is rebuilt
.venv/bin/ragingest ingest examples --persist-dir ./chroma_db --collection examples --rebuild \
  --report ./chroma_db/last_run.json
.venv/bin/ragingest query "На сколько дней выдают альбом с красной наклейкой?" \
  --persist-dir ./chroma_db --collection examples -k 3
