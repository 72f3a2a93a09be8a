"""What ``ragingest trace`` found: a checkpoint per stage for each expected text, the first
that failed and what to try; as text for a person or JSON for a script."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ADVICE = {
    "source": "the text is not in what the loader produced: check the file with "
    "`ragingest inspect FILE --no-clean all`, or the spelling of --expect",
    "chunks": "the chunking cuts the text: see `ragingest inspect FILE --contains TEXT`; "
    "raise --chunk-size, or keep the rule and its exception under one heading",
    "retrieval": "the chunk that holds it ranks below k: raise -k, try --hybrid (exact "
    "words, codes and numbers), or give its section a heading that names the topic",
    "context": "retrieved, but lost when the context was assembled: raise the context "
    "budget, or check de-duplication and parent expansion",
    "answer": "the context had it, the answer dropped it: tell the generator to keep "
    "conditions and exceptions, or put fewer passages in the context",
}


@dataclass
class Checkpoint:
    """One stage of a trace for one expected text: passed (True), failed (False) or not checked
    (None), with what it saw."""
    name: str
    ok: bool | None  # None: not checked (no answer given)
    detail: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Expectation:
    """One text the answer should contain, and the checkpoints it went through."""
    text: str
    checkpoints: list[Checkpoint]

    @property
    def failed(self) -> str | None:
        """The first checkpoint that failed, or None."""
        return next((c.name for c in self.checkpoints if c.ok is False), None)


@dataclass
class TraceReport:
    """A question's trace: for each expected text, where along the pipeline it was lost."""
    question: str
    expectations: list[Expectation]

    @property
    def ok(self) -> bool:
        """Whether no expected text failed a checkpoint."""
        return all(e.failed is None for e in self.expectations)

    def to_json(self) -> dict[str, object]:
        """The report as JSON-ready data, each expectation with its first failure and the advice
        for it."""
        out = []
        for e in self.expectations:
            item = asdict(e)
            item["failed"] = e.failed
            item["advice"] = ADVICE.get(e.failed or "", "")
            out.append(item)
        return {"question": self.question, "ok": self.ok, "expectations": out}

    def render(self) -> str:
        """The report as the lines ``ragingest trace`` prints."""
        lines = [f"question: {self.question}"]
        for e in self.expectations:
            lines.append(f"expect: {e.text!r}")
            for c in e.checkpoints:
                mark = {True: "ok  ", False: "FAIL", None: "-   "}[c.ok]
                lines.append(f"  {mark} {c.name:<9} {c.detail}")
            if e.failed:
                lines.append(f"  lost at {e.failed}: {ADVICE[e.failed]}")
        return "\n".join(lines)
