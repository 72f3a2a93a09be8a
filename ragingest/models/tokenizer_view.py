"""The model's tokenizer as the splitters read it, without importing ``transformers``.

``splitters.measure.Measure`` counts with the Rust ``tokenizers.Tokenizer`` behind a Hugging
Face fast tokenizer (its ``backend_tokenizer``, as long as ``split_special_tokens`` agrees),
so a splitter needs the ``transformers`` wrapper (~0.5 s to import) only for anything else.
``SplitterTokenizer(info)`` gives ``ModelInfo.backend_tokenizer`` (the very instance the
wrapper is built around) and the wrapper's ``split_special_tokens`` default; a call or any
other attribute is the wrapper's, loaded then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    from tokenizers import Tokenizer
    from transformers import BatchEncoding, PreTrainedTokenizerBase

    # what counts in a model's tokens: its fast tokenizer, or the view of it below
    ModelTokenizer: TypeAlias = "PreTrainedTokenizerBase | SplitterTokenizer"


class CountingTokenizer(Protocol):
    """What counts tokens by calling a Hugging Face tokenizer: ``tokenizer(text,
    add_special_tokens=False)["input_ids"]`` (the fast tokenizer, or ``SplitterTokenizer``)."""

    def __call__(self, text: str, *, add_special_tokens: bool) -> Mapping[str, Sequence[int]]: ...


class TokenizerSource(Protocol):
    """Where the view reads the process's one tokenizer (``resolve.ModelInfo``)."""

    @property
    def backend_tokenizer(self) -> Tokenizer: ...

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase: ...


class SplitterTokenizer:
    """The model's tokenizer as the splitters read it (fast offsets), without loading the full
    Hugging Face tokenizer."""
    split_special_tokens = False  # PreTrainedTokenizerFast's default; ModelInfo never sets it

    def __init__(self, info: TokenizerSource) -> None:
        self._info = info

    @property
    def backend_tokenizer(self) -> Tokenizer:
        """The ``tokenizers`` tokenizer of the model."""
        return self._info.backend_tokenizer

    def __call__(self, *args: object, **kwargs: object) -> BatchEncoding:
        return self._info.tokenizer(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._info.tokenizer, name)
