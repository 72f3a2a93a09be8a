#!/usr/bin/env bash
# The tests' system packages (README command (2) runs this; the demo does not need them):
# headless Chromium for the tests that open the HTML report and inspector, a PostgreSQL
# server for the tests of --records-url, and Tesseract with its Russian and English models
# for the tests of scanned documents (OCR). Each is installed only when missing and apt-get is
# there; a test whose package could not be installed is skipped, with the reason.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo -n"
apt_install() {  # "PACKAGE..." WHAT-IS-SKIPPED
  # shellcheck disable=SC2086  # the package list is split on purpose
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends $1; } >/dev/null 2>&1 \
    || echo "setup: could not install $1; $2 will be skipped" >&2
}
command -v apt-get >/dev/null 2>&1 || exit 0
# Debian "chromium"
if ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium "the browser tests"
fi
# Debian "postgresql": its binaries live in /usr/lib/postgresql/N/bin; the tests start a
# throwaway server on 127.0.0.1 and stop it
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && ! command -v postgres >/dev/null 2>&1; then
  apt_install postgresql "the PostgreSQL tests"
fi
# Debian "tesseract-ocr" (its orientation model osd.traineddata comes with it) and the
# language models ragingest's --ocr-lang default (rus+eng) reads (the tests render their scans
# with the fonts of the font-roboto wheel)
if ! command -v tesseract >/dev/null 2>&1 \
    || ! tesseract --list-langs 2>/dev/null | grep -qx rus; then
  apt_install "tesseract-ocr tesseract-ocr-rus tesseract-ocr-eng" "the OCR tests"
fi
