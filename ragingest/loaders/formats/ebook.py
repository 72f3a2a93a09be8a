"""EPUB books with unstructured's ``partition_epub`` (pandoc → HTML): chapter headings keep
their levels, lists and tables come through whole."""

from __future__ import annotations

from ragingest.loaders.formats.partition import PartitionedArchiveLoader


class EpubLoader(PartitionedArchiveLoader):
    """EPUB books (unstructured's partitioner): chapters in reading order."""
    suffixes = (".epub",)
    extra, needs = "office", ("unstructured", "pypandoc")
    format_name = "EPUB"
    kind = "epub"
    text_member = r".*\.x?html?$"
