"""Headless Chromium screenshots for the HTML tests (``scripts/setup_test_system.sh``, the test
command's setup, installs it)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(
        "headless Chromium is not installed and scripts/setup_test_system.sh could not "
        "install it "
        "(needs apt-get: apt-get install -y chromium)"
    )
    raise AssertionError  # unreachable


def screenshot(page: Path, out: Path, width: int = 1200, height: int = 900) -> Path:
    """Render ``page`` in headless Chromium and save a PNG screenshot to ``out``."""
    binary = chromium()
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        subprocess.run(
            [
                binary,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--screenshot={out}",
                page.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    return out


def assert_rendered(png: Path, width: int = 1200, height: int = 900) -> None:
    """The screenshot exists, has the window's size and is not blank."""
    from PIL import Image

    assert png.is_file() and png.stat().st_size > 5_000
    with Image.open(png) as image:
        assert image.size == (width, height)
        histogram = image.convert("L").resize((300, 225)).histogram()
        inked = sum(histogram[:200])  # pixels darker than light grey
        assert inked > 0.01 * 300 * 225, "the page rendered (almost) blank"
        colours = image.convert("RGB").resize((300, 225)).getcolors(maxcolors=1 << 16) or []
        assert len(colours) > 20, "the page has (almost) no colours: no figure drawn"
