"""``split_file``: one file split with a ready base splitter, as the split stage splits it
(``pipeline.split.split_task``), for tests and benchmarks that need no run around it."""

from __future__ import annotations

from pathlib import Path

from ragingest.loaders import FoundFile
from ragingest.loaders.base import MAX_FILE_BYTES
from ragingest.loaders.cleaning.corpus import CorpusCleaner
from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.pipeline.plan import FileTask
from ragingest.pipeline.split import FileChunks, Splitting, split_task
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.content_types import ContentTypeConfig
from ragingest.splitters.factory import SplitSettings


def split_file(
    path: Path,
    root: Path | None,
    splitter: ChunkSplitter,
    max_file_bytes: int = MAX_FILE_BYTES,
    *,
    settings: SplitSettings | None = None,
    cleaning: CleaningRules | None = None,
    content_types: ContentTypeConfig | None = None,
    corpus: CorpusCleaner | None = None,
) -> FileChunks:
    """``split_task`` of one file with a ready base ``splitter`` (of ``settings``)."""
    path = Path(path)
    source = FoundFile(path, Path(root) if root is not None else path.parent).source
    splitting = Splitting(
        settings or SplitSettings(), lambda: splitter, max_file_bytes, cleaning, content_types
    )
    return split_task(FileTask(source, path, root), splitting, corpus)
