"""A LangChain retriever whose async call runs its sync call in an executor.

Contract: a subclass implements ``_get_relevant_documents(query, *, run_manager, k=None)``;
``ainvoke(q, k=N)`` then returns exactly what ``invoke(q, k=N)`` returns, computed on
LangChain's default executor (the work is blocking I/O and native code, which release the
GIL). Written because ``BaseRetriever``'s own async default does not pass ``k`` through.
"""

from __future__ import annotations

from functools import partial

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor


class SyncRetriever(BaseRetriever):
    """``BaseRetriever`` with the async path delegated to the sync one (module docstring)."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        raise NotImplementedError  # each retriever's own search

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        sync = run_manager.get_sync()
        call = partial(self._get_relevant_documents, query, run_manager=sync, k=k)
        return await run_in_executor(None, call)
