"""help() on the retriever shows what each field means (``retrieval.field_docs``)."""

from __future__ import annotations

import pydoc

from pydantic import BaseModel, Field

from ragingest.retrieval import HeadingFirstRetriever
from ragingest.retrieval.field_docs import document_fields, fields_section


class Example(BaseModel):
    """An example.

    Second paragraph."""

    name: str = Field(description="who it is")
    size: int = Field(default=3, description="how big")
    note: str | None = None


def test_fields_section_lists_each_field_with_its_default_and_meaning() -> None:
    assert fields_section(Example) == (
        "\n\nFields:\n"
        "    name (required)\n"
        "        who it is\n"
        "    size (default: 3)\n"
        "        how big\n"
        "    note (default: None)"
    )


def test_document_fields_appends_once_at_the_docstrings_own_level() -> None:
    class Twice(Example):
        """Twice.

        Indented body."""

    document_fields(Twice)
    document_fields(Twice)
    assert Twice.__doc__ == "Twice.\n\nIndented body." + fields_section(Twice)


def test_help_of_the_retriever_shows_every_described_field() -> None:
    text = pydoc.render_doc(HeadingFirstRetriever, renderer=pydoc.plaintext)
    described = {
        name: info.description
        for name, info in HeadingFirstRetriever.model_fields.items()
        if info.description
    }
    assert len(described) >= 20
    for name, description in described.items():
        assert f"{name} (" in text and description in text, name
    assert "the collection name given to ingest" in text
