"""``ChunkSplitter``: what every ragingest splitter is, a LangChain ``TextSplitter`` that also
gives typed ``Chunk``s.

Contract of ``split_chunks(text, title)``: the chunks in document order, each with
``chunk.text == text[chunk.start_index:chunk.end_index]``; ``title`` is the document title the
breadcrumbs start with (``""``: none). ``split_text`` returns the chunks' texts, so the
LangChain entry points (``split_documents``, ``create_documents``) cut where ``split_chunks``
does.
"""

from __future__ import annotations

from abc import abstractmethod

from langchain_text_splitters import TextSplitter

from ragingest.chunk import Chunk


class ChunkSplitter(TextSplitter):
    """A LangChain ``TextSplitter`` whose cuts are ``Chunk``s with exact offsets."""

    @abstractmethod
    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """The chunks of ``text`` (see the module docstring for the contract)."""

    def split_text(self, text: str) -> list[str]:
        """The texts of ``split_chunks(text)``."""
        return [chunk.text for chunk in self.split_chunks(text)]
