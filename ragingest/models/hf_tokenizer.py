"""A model folder's tokenizer, loaded once and shared: ``tokenizer.json`` read by the Rust
library directly where it is the tokenizer as is (``load_backend_tokenizer``: no
``transformers`` or torch import), wrapped for ``transformers`` without a copy
(``wrap_tokenizer``); ``resolve.ModelInfo`` holds the process's one instance.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest.errors import MissingExtraError
from ragingest.models.locate import read_model_json

if TYPE_CHECKING:
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerBase

# tokenizer classes that are ``tokenizer.json`` verbatim: the wrapper can take our instance
_VERBATIM_CLASSES = ("PreTrainedTokenizerFast", "TokenizersBackend")
_WRAPPER_KEYS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
    "model_max_length",
    "padding_side",
    "truncation_side",
    "clean_up_tokenization_spaces",
)


class _Shared:
    """Hands ``PreTrainedTokenizerFast(tokenizer_object=...)`` our Rust tokenizer itself: it
    deep-copies what it is given, and a copy of XLM-R's is another ~280 MB and ~1 s."""

    def __init__(self, backend: Tokenizer) -> None:
        self.backend = backend

    def __deepcopy__(self, memo: dict[int, object]) -> Tokenizer:
        return self.backend


def quiet_transformers() -> None:
    """No weight-loading progress bars or length warnings from transformers on our output."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def wrap_tokenizer(folder: Path, backend: Tokenizer | None) -> PreTrainedTokenizerBase:
    if find_spec("transformers") is None:  # the core counts with ``backend_tokenizer``
        raise MissingExtraError(f"the transformers tokenizer of {folder.name}", "eval")
    config = read_model_json(folder, "tokenizer_config.json")
    quiet_transformers()
    if backend is not None and config.get("tokenizer_class") in _VERBATIM_CLASSES:
        from transformers import PreTrainedTokenizerFast

        kwargs = {k: config[k] for k in _WRAPPER_KEYS if k in config}
        return PreTrainedTokenizerFast(tokenizer_object=_Shared(backend), **kwargs)
    from transformers import AutoTokenizer  # a class with its own rules (imports torch)

    return AutoTokenizer.from_pretrained(str(folder), use_fast=True)


def verbatim_tokenizer(folder: Path) -> bool:
    """The model's tokenizer is its ``tokenizer.json`` as is (no class with its own rules)."""
    config = read_model_json(folder, "tokenizer_config.json")
    verbatim = config.get("tokenizer_class") in _VERBATIM_CLASSES
    return verbatim and (folder / "tokenizer.json").is_file()


def load_backend_tokenizer(folder: Path) -> Tokenizer | None:
    """``tokenizer.json`` read by the Rust library directly: the fast way (no ``transformers``
    or torch import); None when the model has no such file or a tokenizer class of its own."""
    if not verbatim_tokenizer(folder):
        return None
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(folder / "tokenizer.json"))
