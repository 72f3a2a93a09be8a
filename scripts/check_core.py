"""Resolve ragingest's core (or core plus extras) in an empty venv, as ``pip install`` would on
a fresh machine, and check what it brings: none of the packages the core must not pull (torch,
a CUDA wheel, unstructured, pandoc, matplotlib, ...); its package count on stdout.

    python scripts/check_core.py                 the core: exit 0 when clean, 1 when not
    python scripts/check_core.py --extras pdf,html   the core with those extras (CUDA check only)

``pip install --dry-run --report`` in a new venv: it reads the package index (PyPI, or what
pip's configuration names), it downloads no wheel it can read metadata of, and it installs
nothing. tests/test_core_install.py runs it (slow; skipped when no index answers).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# never in the core: the list (torch and CUDA, unstructured, pandoc, matplotlib) and
# what each of them would drag in
FORBIDDEN = {
    "torch", "triton", "transformers", "sentence-transformers", "unstructured", "spacy",
    "pypandoc", "pypandoc-binary", "matplotlib", "scipy", "scikit-learn", "numba", "ray",
}  # fmt: skip
CUDA_PREFIXES = ("nvidia-", "cuda-")


def resolve(extras: str = "") -> list[str]:
    """The names of the packages ``pip install ROOT[extras]`` would install into an empty
    venv (ragingest itself included)."""
    with tempfile.TemporaryDirectory(prefix="ragingest-core-") as tmp:
        venv.EnvBuilder(with_pip=True).create(tmp)
        report = Path(tmp) / "report.json"
        target = f"{ROOT}[{extras}]" if extras else str(ROOT)
        python = str(Path(tmp) / "bin" / "python")
        command = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
        command += ["--disable-pip-version-check", "--report", str(report), target]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"pip could not resolve {target}: {done.stderr.strip()[-500:]}")
        installed = json.loads(report.read_text(encoding="utf-8"))["install"]
    return sorted(item["metadata"]["name"].lower() for item in installed)


def problems(names: list[str], core: bool) -> list[str]:
    """What ``names`` must not hold: CUDA wheels always, the ``FORBIDDEN`` set for the core."""
    bad = [n for n in names if n.startswith(CUDA_PREFIXES)]
    if core:
        bad += sorted(FORBIDDEN.intersection(names))
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extras", default="", help="comma-separated extras to add")
    args = parser.parse_args()
    names = resolve(args.extras)
    bad = problems(names, core=not args.extras)
    what = f"ragingest[{args.extras}]" if args.extras else "ragingest (core)"
    print(f"{what}: {len(names)} packages")
    if bad:
        print(f"must not be there: {' '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
