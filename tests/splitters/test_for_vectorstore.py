"""The splitter alone in a plain LangChain pipeline gets what ingest has: the vector store
embeds the breadcrumb and the words (``for_vectorstore``), the exact slice is in the offsets,
the parent section in ``parent_text`` (``splitters.documents``)."""

from __future__ import annotations

from langchain_core.documents import Document

from ragingest.splitters import HeadingFirstSplitter, for_vectorstore

FILLER = (
    "Заявление подают в пункте выдачи или в личном кабинете, приложив чек и фотографии "
    "упаковки; сотрудник проверяет комплектность в присутствии покупателя."
)
SAME = "Деньги переводят на карту покупателя в течение десяти рабочих дней после проверки."
PAGE = (
    "---\ntitle: Правила магазина\n---\r\n# Правила магазина\r\n\r\n"
    f"## Возврат товара\r\n\r\n{FILLER}\r\n\r\n{SAME}\r\n\r\n"
    f"## Обмен товара\r\n\r\n{FILLER}\r\n\r\n{SAME}\r\n"
)


def _split(**kwargs):
    splitter = HeadingFirstSplitter(200, 0, 0, unit="chars")
    given = [Document(page_content=PAGE, metadata={"source": "shop.md"})]
    return splitter, for_vectorstore(given, splitter, **kwargs), splitter.split_documents(given)


def test_page_content_is_what_ingest_embeds_and_the_offsets_the_exact_slice():
    splitter, docs, plain = _split(parents=True)
    assert [d.metadata for d in docs] == [{**p.metadata, "parent_text": docs[i].metadata[
        "parent_text"]} for i, p in enumerate(plain)]  # fmt: skip
    tails = [d for d in docs if d.page_content.endswith(SAME)]
    assert [d.page_content.split("\n", 1)[0] for d in tails] == [
        "Правила магазина > Возврат товара",
        "Правила магазина > Обмен товара",
    ]
    for doc, chunk in zip(docs, plain, strict=True):
        meta = doc.metadata
        assert PAGE[meta["start_index"] : meta["end_index"]] == chunk.page_content
        assert PAGE[meta["parent_start"] : meta["parent_end"]] == meta["parent_text"]
        assert chunk.page_content in meta["parent_text"]
    assert splitter.for_vectorstore([Document(page_content=PAGE, metadata={"source": "shop.md"})])


def test_a_plain_vector_store_tells_the_sections_apart_only_with_the_breadcrumb(tmp_path):
    from langchain_chroma import Chroma

    from ragingest.models.embeddings import SentenceTransformerEmbeddings

    embeddings = SentenceTransformerEmbeddings("intfloat/multilingual-e5-small")
    question = "Через сколько дней вернут деньги за возврат товара?"
    _splitter, docs, plain = _split()
    scores = {}
    for name, chunks in (("for_vectorstore", docs), ("split_documents", plain)):
        store = Chroma.from_documents(
            chunks, embeddings, collection_name=name, persist_directory=str(tmp_path / name)
        )
        hits = store.similarity_search_with_relevance_scores(question, k=len(chunks))
        same = [(d.metadata["section_path"], s) for d, s in hits if SAME in d.page_content]
        scores[name] = same
    (first, s1), (_second, s2) = scores["for_vectorstore"][:2]
    assert first.endswith("Возврат товара") and s1 > s2 + 0.005, scores
    # without the breadcrumb the two chunks are the same text: the store cannot tell them apart
    (_a, p1), (_b, p2) = scores["split_documents"][:2]
    assert abs(p1 - p2) < 1e-4, scores
