"""The collection naming, under the names ``store`` and ``reader`` import it by: it is
ragingest's own (``vectorstore.names``), not Chroma's."""

from ragingest.vectorstore.names import is_safe as is_chroma_safe
from ragingest.vectorstore.names import safe_name as chroma_name

__all__ = ["chroma_name", "is_chroma_safe"]
