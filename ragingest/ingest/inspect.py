"""``inspect``: how a file is cut, without embedding — seed 004's boundary check.

``inspect_file`` returns ``{"source", "length", "chunks": [...], "contains": [...]}``;
``contains`` lists, for each given text, the chunks that hold it whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragingest.loaders import loader_for
from ragingest.schema import breadcrumb_title, chunk_metadata
from ragingest.splitters import FixedSizeSplitter, HeadingFirstSplitter
from ragingest.splitters.recursive import RecursiveBaseline

STRATEGIES = ("heading", "semantic", "fixed", "recursive")


def make_splitter(
    strategy: str,
    unit: str,
    chunk_size: int | None,
    chunk_overlap: int | None,
    min_chunk_size: int | None,
    model: str | None,
) -> Any:
    tokenizer = max_embed = None
    if unit == "tokens":
        from ragingest.vectorstore.models import load_model_info

        info = load_model_info(model)
        tokenizer, max_embed = info.tokenizer, info.max_embed_tokens
    if strategy == "fixed":
        if chunk_size is None:
            raise ValueError("--strategy fixed needs --chunk-size")
        return FixedSizeSplitter(chunk_size, chunk_overlap or 0, unit, tokenizer=tokenizer)
    if strategy == "recursive":
        # seed 002's baseline: LangChain's recursive splitter, sizes in the same unit
        return RecursiveBaseline(chunk_size or 500, chunk_overlap or 0, unit, tokenizer)
    # "semantic": heading-first with topic-shift boundaries as the paragraph-stage fallback
    return HeadingFirstSplitter(
        chunk_size,
        chunk_overlap,
        100 if min_chunk_size is None else min_chunk_size,
        unit=unit,  # type: ignore[arg-type]
        tokenizer=tokenizer,
        max_embed_tokens=max_embed,
        model=model,
        fallback="semantic" if strategy == "semantic" else None,
    )


def inspect_file(path: str | Path, splitter: Any, contains: list[str] | None = None) -> dict:
    return inspect_document(path, splitter, contains)[0]


def inspect_document(
    path: str | Path, splitter: Any, contains: list[str] | None = None
) -> tuple[dict, str]:
    """``inspect_file``'s result and the document text it refers to (for ``--html``)."""
    path = Path(path)
    documents = list(loader_for(path, path.parent).lazy_load())
    document = documents[0]
    text = document.page_content
    chunks = splitter.split_chunks(text, title=breadcrumb_title(document.metadata))
    rows = []
    for i, chunk in enumerate(chunks):
        rows.append(
            {
                "index": i,
                "start_index": chunk.start_index,
                "end_index": chunk.end_index,
                "text": chunk.text,
                "embed_text": chunk.embed_text,
                "tokens": chunk.token_count,
                "metadata": chunk_metadata(document.metadata, chunk, i, len(chunks)),
            }
        )
    found = [
        {"text": needle, "chunks": [r["index"] for r in rows if needle in r["text"]]}
        for needle in contains or []
    ]
    return {"source": str(path), "length": len(text), "chunks": rows, "contains": found}, text


def render_text(result: dict) -> str:
    lines = [f"{result['source']}: {result['length']} characters, {len(result['chunks'])} chunks"]
    for row in result["chunks"]:
        meta = row["metadata"]
        lines.append(
            f"\n── chunk {row['index']} [{row['start_index']}, {row['end_index']}) "
            f"{row['tokens']} {meta.get('strategy')} │ {meta.get('section_path') or '-'}"
        )
        lines.append(row["embed_text"])
    for item in result["contains"]:
        where = ", ".join(str(i) for i in item["chunks"]) or "none"
        lines.append(f"\ncontains {item['text']!r}: chunk {where}")
    return "\n".join(lines)
