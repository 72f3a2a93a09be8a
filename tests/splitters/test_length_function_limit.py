"""A ``length_function`` decides how big chunks are packed, never whether the model reads them
whole: whatever it counts, every embedded text (breadcrumb included) fits the model's input
limit in model tokens and ``token_count`` is model tokens (real e5 tokenizer: exact)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from ragingest.splitters.heading_first import HeadingFirstSplitter
from tests.conftest import EXAMPLES

CRM = (EXAMPLES / "instruction_crm.md").read_text(encoding="utf-8")
# model tokens and characters of each chunk of instruction_crm.md at chunk_size=4000 characters:
# the two merged sections of 705 and 592 tokens are cut again to fit e5's 507 (512 less the
# specials and "passage: ")
TOKENS = [46, 49, 348, 357, 334, 258, 44]
CHARS = [187, 197, 1318, 1431, 1395, 952, 176]


@pytest.mark.parametrize("length", [len, lambda text: len(text)], ids=["len", "lambda"])
def test_any_length_function_keeps_the_model_limit(length, e5_info):
    splitter = HeadingFirstSplitter(chunk_size=4000, length_function=length)
    assert (splitter.chunk_size, splitter.max_embed_tokens) == (4000, 507)
    chunks = splitter.split_chunks(CRM)
    tokenizer = e5_info.tokenizer
    assert [c.token_count for c in chunks] == TOKENS
    assert [len(c.text) for c in chunks] == CHARS
    for chunk in chunks:
        assert chunk.token_count == len(tokenizer(chunk.text, add_special_tokens=False).input_ids)
        embedded = tokenizer(e5_info.document_prompt + chunk.embed_text).input_ids
        assert len(embedded) <= e5_info.max_seq_length
        assert not chunk.oversized
    documents = splitter.split_documents([Document(page_content=CRM, metadata={"source": "crm"})])
    assert [d.metadata["token_count"] for d in documents] == TOKENS


def test_the_length_function_still_packs(e5_info):
    splitter = HeadingFirstSplitter(chunk_size=300, min_chunk_size=0, length_function=len)
    chunks = splitter.split_chunks(CRM)
    assert len(chunks) > len(TOKENS)
    tokenizer = e5_info.tokenizer
    for chunk in chunks:
        assert len(chunk.text) <= 300
        assert chunk.token_count == len(tokenizer(chunk.text, add_special_tokens=False).input_ids)
