"""The splitters count with ``SplitterTokenizer`` (the Rust tokenizer, no ``transformers``)
exactly as with the ``transformers`` wrapper: the same chunks, offsets and token counts."""

from __future__ import annotations

from langchain_core.documents import Document

from ragingest.models.resolve import load_model_info
from ragingest.models.tokenizer_view import SplitterTokenizer
from ragingest.splitters.heading_first import HeadingFirstSplitter
from tests.conftest import EXAMPLES


def _chunks(tokenizer, info, text: str, **options) -> list[tuple]:
    splitter = HeadingFirstSplitter(
        tokenizer=tokenizer, max_embed_tokens=info.max_embed_tokens, model=info.name, **options
    )
    docs = splitter.split_documents([Document(page_content=text, metadata={"source": "x"})])
    return [(d.page_content, sorted(d.metadata.items())) for d in docs]


def test_view_splits_the_examples_exactly_as_the_wrapper():
    info = load_model_info(None)
    view, wrapper = SplitterTokenizer(info), info.tokenizer
    assert view.backend_tokenizer is wrapper.backend_tokenizer
    assert view.split_special_tokens == wrapper.split_special_tokens is False
    texts = [p.read_text("utf-8") for p in sorted(EXAMPLES.glob("*.md"))]
    assert len(texts) >= 5
    for text in texts:
        for options in ({}, {"chunk_size": 60, "chunk_overlap": 10}):
            want = _chunks(wrapper, info, text, **options)
            assert _chunks(view, info, text, **options) == want and len(want) >= 1
    assert view("ab", add_special_tokens=False)["input_ids"] == wrapper("ab")["input_ids"][1:-1]
    assert view.model_max_length == wrapper.model_max_length == info.max_seq_length
