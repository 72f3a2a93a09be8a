"""The model's tokenizer as the splitters read it, without importing ``transformers``.

``splitters.measure.Measure`` counts with the Rust ``tokenizers.Tokenizer`` behind a Hugging
Face fast tokenizer (its ``backend_tokenizer``, as long as ``split_special_tokens`` agrees),
so a splitter needs the ``transformers`` wrapper (~0.5 s to import) only for anything else.
``SplitterTokenizer(info)`` gives ``ModelInfo.backend_tokenizer`` (the very instance the
wrapper is built around) and the wrapper's ``split_special_tokens`` default; a call or any
other attribute is the wrapper's, loaded then.
"""

from __future__ import annotations

from typing import Any


class SplitterTokenizer:
    """The model's tokenizer as the splitters read it (fast offsets), without loading the full
    Hugging Face tokenizer."""
    split_special_tokens = False  # PreTrainedTokenizerFast's default; ModelInfo never sets it

    def __init__(self, info: Any) -> None:
        self._info = info  # a models.resolve.ModelInfo

    @property
    def backend_tokenizer(self) -> Any:
        """The ``tokenizers`` tokenizer of the model."""
        return self._info.backend_tokenizer

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._info.tokenizer(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._info.tokenizer, name)
