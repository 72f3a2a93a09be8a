"""Every shell command of README.md and of every ``--help`` epilog runs as written.

The commands are read from the README's ``bash``/``cron``/``ini`` blocks and from the
``examples:`` part of ``ragingest --help`` and ``ragingest COMMAND --help``, then run in a temp
directory holding a copy of ``examples/`` (the deployment paths of the cron and systemd
examples, ``/srv/docs`` and ``/srv/chroma_db``, point into it). Each command is first parsed
by ragingest's own argument parser (flags and values as written); it is then run, except:

- a usage summary (``PATH...``, ``[--opt N]``, ``a|b``): its flags are what is checked;
- one that needs a Chroma server (``chroma run``, ``--chroma-host``) or an evaluation set that
  a clone has not (``evaluate``): flags and names only;
- ``bash scripts/demo.sh`` (run by ``test_readme_demo.py``) and ``bash scripts/test.sh``
  (the suite itself): the script must exist.

``watch`` runs until its first run's summary, then is stopped.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow

CLI = Path(sys.executable).with_name("ragingest")
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(\.\.\.|\.[a-z]+)?$|\.\.\.$|\|")
_SHELL_OPS = {"&&", ">>", ">", "2>&1", "|", ";"}
_DEPLOYED = {"/srv/docs": "examples", "/srv/chroma_db": "chroma_db", "/srv/ragingest/": ""}


@dataclass
class Example:
    where: str
    command: str

    @property
    def tokens(self) -> list[str]:
        return shlex.split(self.command)


def _joined(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1].rstrip() + " " + line.strip()
        else:
            out.append(line.strip())
    return [line for line in out if line and not line.startswith("#")]


def readme_examples() -> list[Example]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = []
    for lang, body in re.findall(r"```(bash|cron|ini)\n(.*?)```", text, flags=re.S):
        for line in _joined(body.splitlines()):
            if lang == "cron":
                line = " ".join(line.split()[5:])  # the five time fields
            elif lang == "ini":
                if not line.startswith("ExecStart="):
                    continue
                line = line.removeprefix("ExecStart=")
            found.append(Example(f"README.md ({lang})", line))
    return found


def _help(*args: str) -> str:
    done = subprocess.run([str(CLI), *args, "--help"], capture_output=True, text=True, env=_env())
    assert done.returncode == 0, done.stderr
    return done.stdout


@functools.cache  # both tests read them: one ``--help`` process per command, not two
def epilog_examples() -> tuple[Example, ...]:
    main = _help()
    commands = re.findall(r"^    ([a-z][a-z_-]*)(?:\s{2,}|$)", main, flags=re.M)
    assert "ingest" in commands, main
    found = []
    for name in ["", *commands]:
        text = _help(name) if name else main
        block = re.search(r"^examples[^\n]*:\n((?:[ \t]+\S[^\n]*\n?)+)", text, flags=re.M)
        if block:
            for line in _joined(block.group(1).splitlines()):
                found.append(Example(f"ragingest {name} --help".replace("  ", " "), line))
    return tuple(found)


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", DO_NOT_TRACK="1", ANONYMIZED_TELEMETRY="False")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.pop("RAGINGEST_RECORDS_URL", None)
    return env


def _ragingest_args(tokens: list[str]) -> list[str] | None:
    """The arguments after ``ragingest`` (shell operators cut off), or None."""
    for i, token in enumerate(tokens):
        if token == "ragingest" or token.endswith("bin/ragingest"):
            args = tokens[i + 1 :]
            cut = next((j for j, t in enumerate(args) if t in _SHELL_OPS), len(args))
            return args[:cut]
    return None


def _is_summary(args: list[str], command: str) -> bool:
    return "[" in command or any(_PLACEHOLDER.search(a) for a in args if not a.startswith("-"))


def _parse_check(example: Example, args: list[str]) -> None:
    """ragingest's parser takes the command as written (a summary: with its placeholders
    filled in and its optional parts in)."""
    from ragingest.cli.main import build_parser

    if _is_summary(args, example.command):
        filled = []
        written = example.command.replace("]...", "]").replace("[", " ").replace("]", " ")
        for arg in shlex.split(written):
            arg = "text" if arg == "..." else arg.split("|")[0].removesuffix("...")
            if arg:
                filled.append("1" if arg in ("N", "M") else arg)
        args = _ragingest_args(filled) or []
    try:
        build_parser().parse_args(args)
    except SystemExit as exc:
        pytest.fail(f"{example.where}: `{example.command}` is refused by the parser ({exc})")


def _deployed(args: list[str], tmp: Path) -> list[str]:
    out = []
    for arg in args:
        for prefix, local in _DEPLOYED.items():
            if arg.startswith(prefix):
                arg = str(tmp / local) + arg[len(prefix) :]
        out.append(arg)
    return out


def _run(example: Example, args: list[str], tmp: Path) -> str:
    command = [str(CLI), *_deployed(args, tmp)]
    if args[0] == "watch":
        return _run_watch(example, command, tmp)
    done = subprocess.run(
        command, cwd=tmp, capture_output=True, text=True, env=_env(), timeout=1500
    )
    assert done.returncode == 0, f"{example.where}: `{example.command}`\n{done.stderr[-3000:]}"
    return done.stdout


def _run_watch(example: Example, command: list[str], tmp: Path) -> str:
    """The watch's first report; then Ctrl-C must end it. The watch gets a terminal's SIGINT
    disposition (a test worker may run with SIGINT ignored, which a child inherits, and a
    program keeps an inherited ignore). One that does not end prints every thread's stack
    (faulthandler, on SIGABRT) into the failure."""
    env = {**_env(), "PYTHONFAULTHANDLER": "1"}
    with (tmp / "watch.err").open("w+", encoding="utf-8") as err:
        process = subprocess.Popen(
            command, cwd=tmp, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
            preexec_fn=_default_sigint,
        )  # fmt: skip
        try:
            first = process.stdout.readline() + process.stdout.readline()  # type: ignore[union-attr]
        finally:
            process.send_signal(signal.SIGINT)
            try:
                code = process.wait(timeout=300)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGABRT)
                code = process.wait(timeout=60)
            process.stdout.close()  # type: ignore[union-attr]
        err.seek(0)
        said = err.read()
    where = f"{example.where}: `{example.command}`\n{first}\n{said[-4000:]}"
    assert "0 failed" in first, where
    assert code == 130, where
    return first


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _check_output(example: Example, args: list[str], out: str) -> None:
    command = args[0]
    if command in ("ingest", "watch"):
        assert "0 failed" in out, f"{example.where}: `{example.command}`\n{out}"
    elif command == "query":
        assert out.startswith("1. score"), f"{example.where}: `{example.command}`\n{out}"
    elif command == "status":
        assert out.startswith("collection: kb"), out
    elif command == "inspect":
        assert "chunk" in out, out


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("readme")
    shutil.copytree(EXAMPLES, tmp / "examples")
    (tmp / ".venv").symlink_to(Path(sys.executable).parent.parent)
    for name, text in readme_config_files().items():  # the configs the commands name
        (tmp / name).write_text(text, encoding="utf-8")
    return tmp


def readme_config_files() -> dict[str, str]:
    """The README's ``toml`` blocks that open with ``# NAME.toml: ...``, by NAME.toml."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = {}
    for body in re.findall(r"```toml\n(.*?)```", text, flags=re.S):
        named = re.match(r"# ([\w.-]+\.toml):[^\n]*\n", body)
        if named:
            found[named.group(1)] = body[named.end() :]
    return found


def test_the_readme_and_help_have_examples_to_run():
    readme, helps = readme_examples(), epilog_examples()
    assert len([e for e in readme if _ragingest_args(e.tokens)]) >= 8
    assert any(e.where == "ragingest --help" for e in helps)


def test_every_example_parses_and_runs(sandbox: Path):
    ran: list[str] = []
    examples = readme_examples() + list(epilog_examples())
    # the first ingest of the collection every other example reads, then all in order
    examples.sort(key=lambda e: (_ragingest_args(e.tokens) or [""])[0] != "ingest")
    for example in examples:
        tokens = example.tokens
        if tokens[:1] == ["bash"]:
            assert (ROOT / tokens[1]).is_file(), example
            continue
        if tokens[:2] == ["chroma", "run"]:
            assert Path(sys.executable).with_name("chroma").is_file(), "no chroma server CLI"
            continue
        args = _ragingest_args(tokens)
        assert args, f"{example.where}: not a ragingest command: {example.command}"
        _parse_check(example, args)
        needs_more = args[0] == "evaluate" or any(a.startswith("--chroma-") for a in args)
        if _is_summary(args, example.command) or needs_more:
            continue
        _check_output(example, args, _run(example, args, sandbox))
        ran.append(example.command)
    assert len(ran) >= 10, ran
    assert not list(Path("/").glob("srv/chroma_db"))  # the deployed paths stayed in the sandbox
