"""EPUB books with unstructured's ``partition_epub`` (pandoc → HTML): chapter headings keep
their levels, lists and tables come through whole."""

from __future__ import annotations

import io

from ragingest.loaders.partition import element_blocks, partition
from ragingest.loaders.rich import Parsed, RichLoader, archive_has_text


class EpubLoader(RichLoader):
    suffixes = (".epub",)
    format_name = "EPUB"
    archive = True

    def _parse(self, data: bytes) -> Parsed:
        elements = partition("epub", file=io.BytesIO(data))
        return Parsed(element_blocks(elements))

    def has_text(self, data: bytes) -> bool:
        return archive_has_text(data, r".*\.x?html?$")
