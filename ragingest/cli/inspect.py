"""``inspect FILE``: how ``ingest`` cuts a file, without embedding: which sentences a boundary keeps
together.

It is the run's own plan and split stage (``pipeline.plan``, ``pipeline.split``) on that one
file with the same options (splitter settings, ``--content-type``, ``--no-clean``), so it shows
exactly the chunks ``ingest`` stores for it, of every document of the file (mbox messages, CSV rows,
pages). Cross-document cleaning (copies, boilerplate: ``loaders.cleaning.corpus``) needs the corpus:
``--corpus FOLDER`` scans FOLDER as ``ingest FOLDER`` does, so the file is cleaned exactly as
that run cleans it; without it, ``inspect`` of one file removes nothing across files.

``inspect_file`` returns ``{"source", "length", "documents": [...], "chunks": [...],
"contains": [...], "removed": [...], "copies": [...]}``; each chunk names its ``document``;
``contains`` lists, for each given text, the chunks that hold it whole; ``removed`` what
cross-document cleaning removed (rule, span in the indexed text, page, text); ``copies`` the
file's copies in the corpus. Each document gives the ``normalized`` Markdown the splitter saw
and what chunk offsets index (``offsets``): ``"source"``, the file as decoded (text formats),
or ``"normalized"``, that Markdown (converted formats); ``length`` is the length of the
indexed text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragingest.defaults import MAX_CHUNKS_PER_FILE
from ragingest.loaders.base import MAX_FILE_BYTES
from ragingest.loaders.cleaning.corpus import CorpusCleaner
from ragingest.loaders.cleaning.rules import CleaningRules, Removal
from ragingest.loaders.markdown.source_offsets import indexed_text, source_map_of
from ragingest.pipeline.plan import FileTask, make_plan, scan_corpus
from ragingest.pipeline.split import Splitting, split_documents
from ragingest.schema import BOX_MAP_HINT, SCAN_PAGES_HINT
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.content_types import ContentTypeConfig
from ragingest.splitters.factory import STRATEGIES, SplitSettings, base_splitter

__all__ = ["STRATEGIES", "inspect_document", "inspect_file", "render_text"]


def file_splitting(
    settings: SplitSettings,
    model: str | None = None,
    *,
    cleaning: CleaningRules | None = None,
    content_types: ContentTypeConfig | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
    file_timeout: float | None = None,
    max_chunks: int | None = MAX_CHUNKS_PER_FILE,
) -> Splitting:
    """The ``Splitting`` an ingest run with these options uses (the model's tokenizer and
    limit, loaded without its weights); splitting the file is bounded by ``file_timeout``
    seconds (None: none)."""

    def make_base() -> ChunkSplitter:
        from ragingest.models.resolve import load_model_info

        return base_splitter(settings, info=load_model_info(model), model=model)

    return Splitting(
        settings,
        make_base,
        max_file_bytes,
        cleaning,
        content_types,
        max_chunks=max_chunks,
        split_timeout=file_timeout,
    )


def inspect_file(
    path: str | Path,
    splitting: Splitting,
    contains: list[str] | None = None,
    corpus: str | Path | None = None,
) -> dict:
    """What ``inspect`` shows for ``path``: its chunks as ingest would store them (as
    ingesting the folder ``corpus`` would, when given)."""
    return inspect_document(path, splitting, contains, corpus)[0]


def inspect_document(
    path: str | Path,
    splitting: Splitting,
    contains: list[str] | None = None,
    corpus: str | Path | None = None,
) -> tuple[dict, str]:
    """``inspect_file``'s result and the first document's text (for ``--html``)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder: inspect takes one file")
    if not path.exists() and not path.is_symlink():
        raise ValueError(f"{path}: no such file")
    plan = make_plan([path], {}, max_file_bytes=splitting.max_file_bytes)
    if not plan.items:
        raise ValueError(f"{path}: not a file ingest would read")
    item = plan.items[0]
    if item.unsupported is not None:
        raise item.unsupported
    if item.task is None:  # the walk skips it (a FIFO, a dangling or looping symlink, ...)
        reason = item.skipped.reason if item.skipped else "not a file ingest would read"
        raise ValueError(f"{path}: {reason}")
    cleaner = corpus_cleaner(item.task, splitting, corpus) if corpus is not None else None
    removed: list[Removal] = []
    documents, _counts = split_documents(item.task, splitting, cleaner, removed)
    rows: list[dict[str, Any]] = []
    described: list[dict[str, Any]] = []
    for number, (document, records) in enumerate(documents):
        mapped = source_map_of(document.metadata) is not None
        described.append(
            {
                "index": number,
                "length": len(indexed_text(document.page_content, document.metadata)),
                "chunks": len(records),
                "content_type": records[0].metadata["content_type"] if records else "",
                "offsets": "source" if mapped else "normalized",
                "normalized": document.page_content,
                # scans: where each OCR'd line is, and each page's turn to read it upright
                "box_map": document.metadata.get(BOX_MAP_HINT) or [],
                "scan_pages": document.metadata.get(SCAN_PAGES_HINT) or {},
            }
        )
        for record in records:
            meta = record.metadata
            rows.append(
                {
                    "index": len(rows),
                    "document": number,
                    "start_index": meta["start_index"],
                    "end_index": meta["end_index"],
                    "text": record.text,
                    "embed_text": record.embed_text,
                    "tokens": meta["token_count"],
                    "metadata": meta,
                }
            )
    found = [
        {"text": needle, "chunks": [r["index"] for r in rows if needle in r["text"]]}
        for needle in contains or []
    ]
    first = (
        indexed_text(documents[0][0].page_content, documents[0][0].metadata) if documents else ""
    )
    result = {
        "source": str(path),
        "length": sum(d["length"] for d in described),
        "documents": described,
        "chunks": rows,
        "contains": found,
        "removed": [r.as_dict() for r in removed],
        "copies": cleaner.copies_of(item.task.name) if cleaner is not None else [],
    }
    return result, first


def corpus_cleaner(
    task: FileTask, splitting: Splitting, folder: str | Path
) -> CorpusCleaner | None:
    """The cross-document cleaner ``ingest FOLDER`` builds (its scan over the folder's files,
    ``task`` among them; None with ``--no-clean boilerplate``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"--corpus {folder}: not a folder")
    tasks = make_plan([folder], {}, max_file_bytes=splitting.max_file_bytes).tasks
    if task.path is None or not any(
        t.path is not None and t.path.resolve() == task.path.resolve() for t in tasks
    ):
        raise ValueError(f"{task.name} is not a file of --corpus {folder}")
    rules = splitting.cleaning or CleaningRules()
    return scan_corpus(tasks, rules, splitting.max_file_bytes, splitting.parsers)


def render_text(result: dict) -> str:
    """An ``inspect`` result as the text the command prints."""
    documents = result.get("documents", [])
    many = "" if len(documents) == 1 else "s"
    lines = [
        f"{result['source']}: {result['length']} characters, {len(documents)} document{many}, "
        f"{len(result['chunks'])} chunks"
    ]
    current = None
    for row in result["chunks"]:
        if len(documents) > 1 and row["document"] != current:
            current = row["document"]
            doc = documents[current]
            lines.append(
                f"\n══ document {current}: {doc['length']} characters, {doc['content_type']}"
            )
        meta = row["metadata"]
        ocr = f" │ OCR {meta['ocr_confidence']}" if "ocr_confidence" in meta else ""
        lines.append(
            f"\n── chunk {row['index']} [{row['start_index']}, {row['end_index']}) "
            f"{row['tokens']} {meta.get('strategy')} │ {meta.get('section_path') or '-'}{ocr}"
        )
        lines.append(row["embed_text"])
    if result.get("copies"):
        lines.append("\ncopies (each kept and indexed): " + ", ".join(result["copies"]))
    if result.get("removed"):
        lines.append("\nremoved by cleaning (rule, where: text):")
    for removal in result.get("removed", []):
        place = [f"page {removal['page']}"] if removal["page"] is not None else []
        if removal["start"] is not None:
            place.append(f"[{removal['start']}, {removal['end']})")
        lines.append(f"  {removal['rule']} {' '.join(place) or '-'}: {removal['text']}")
    for item in result["contains"]:
        where = ", ".join(str(i) for i in item["chunks"]) or "none"
        lines.append(f"\ncontains {item['text']!r}: chunk {where}")
    return "\n".join(lines)
