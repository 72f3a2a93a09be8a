"""Content types: which splitter a document gets, since the unit of a chunk follows the
content (one FAQ pair, one message, one ticket, one card; docs/rules.md, "Chunk size by
content type").

``detect`` decides, first rule that answers wins:

1. the config: ``[content_types]`` globs in ``.ragingest.toml`` at the ingested root
   (``"faq/*.md" = "faq"``), or ``content_type:`` in a Markdown file's front matter;
2. the loader's word: e-mail → ``email``, ticket exports → ``ticket``, spreadsheet rows →
   ``catalogue``, question/answer tables → ``faq``;
3. the text: question headings or Q/A markers (outside fenced code: keys in a code sample
   say nothing about the page) → ``faq``; plain text with no headings (the loader's weaker
   word) → ``paragraph``;
4. else ``document`` (heading-first).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ragingest.config import root_config
from ragingest.schema import CONTENT_TYPE_HINT
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.catalogue import CatalogueSplitter
from ragingest.splitters.email import EmailSplitter
from ragingest.splitters.faq import FaqSplitter, looks_like_faq
from ragingest.splitters.paragraph import ParagraphSplitter
from ragingest.splitters.structure import Structure, analyze
from ragingest.splitters.ticket import TicketSplitter

SPLITTERS: dict[str, type] = {
    "faq": FaqSplitter,
    "email": EmailSplitter,
    "catalogue": CatalogueSplitter,
    "ticket": TicketSplitter,
    "paragraph": ParagraphSplitter,
}
CONTENT_TYPES = ("document", *SPLITTERS)


@dataclass(frozen=True)
class ContentTypeConfig:
    """Glob → content type, matched against a file's path relative to the ingested root (or
    its name); the first matching glob wins."""

    rules: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        for glob, kind in self.rules:
            if kind not in CONTENT_TYPES:
                raise ValueError(
                    f"content type {kind!r} for {glob!r} is unknown: use one of {CONTENT_TYPES}"
                )

    def for_source(self, source: str) -> str | None:
        """The content type the first matching rule gives ``source`` (its path or file name),
        ``None`` when none matches."""
        name = source.rsplit("/", 1)[-1]
        for glob, kind in self.rules:
            if fnmatch.fnmatch(source, glob) or fnmatch.fnmatch(name, glob):
                return kind
        return None

    @classmethod
    def parse(cls, pairs: list[str]) -> ContentTypeConfig:
        """``["faq/*.md=faq", ...]`` (the command-line form)."""
        rules = []
        for pair in pairs:
            glob, sep, kind = pair.partition("=")
            if not sep:
                raise ValueError(f"bad content type rule {pair!r}: use GLOB=TYPE")
            rules.append((glob.strip(), kind.strip()))
        return cls(tuple(rules))


def config_for_root(root: Path | None) -> ContentTypeConfig:
    """The ``[content_types]`` of ``root/.ragingest.toml`` (empty when there is none)."""
    return ContentTypeConfig(root_config(root).content_types)


def detect(
    text: str,
    metadata: Mapping[str, object],
    config: ContentTypeConfig | None = None,
    source: str | None = None,
) -> str:
    """The content type of a document: the configured rule for its source (``source``,
    default ``metadata["source"]``), else the loader's hint, else 'faq' when the text reads
    as one, else 'paragraph' (a hint) or 'document'."""
    if source is None:
        source = str(metadata.get("source", ""))
    configured = config.for_source(source) if config else None
    if configured:
        return configured
    hint = metadata.get(CONTENT_TYPE_HINT)
    if isinstance(hint, str) and hint in CONTENT_TYPES and hint != "paragraph":
        return hint
    structure = analyze(text)
    if looks_like_faq(without_code(text, structure), structure):
        return "faq"
    return hint if hint == "paragraph" else "document"


def without_code(text: str, structure: Structure) -> str:
    """``text`` with its fenced code blocks blanked (same length): a ``question:`` key in a
    code sample says nothing about the page."""
    code = [b for b in structure.blocks if b.kind == "code"]
    if not code:
        return text
    parts, pos = [], 0
    for block in code:
        parts += [text[pos : block.start], "\n" * text.count("\n", block.start, block.end)]
        pos = block.end
    return "".join([*parts, text[pos:]])


def splitter_for(content_type: str, base: ChunkSplitter) -> ChunkSplitter:
    """The splitter of a content type, built on the run's heading-first splitter (its sizes,
    measure and model limit); the base itself for ``document``."""
    if content_type == "paragraph" and getattr(base, "fallback", None) is not None:
        return base  # an explicit fallback (e.g. semantic) wins for heading-less text
    cls = SPLITTERS.get(content_type)
    return cls(base) if cls else base
