"""The embedding gate: at most ``slots`` holders at once, waiters enter in arrival order."""

from __future__ import annotations

import threading
import time

import pytest
from langchain_core.documents import Document

from ragingest.retrieval import admission
from ragingest.retrieval.admission import FifoGate
from ragingest.retrieval.retriever import ChunkRetriever
from ragingest.vectorstore.opening import open_store
from tests.fake_embeddings import HashedWordEmbeddings


def _wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.001)


def test_waiters_enter_in_the_order_they_came() -> None:
    gate = FifoGate(1)
    entered: list[int] = []
    threads = []

    def client(number: int) -> None:
        with gate:
            entered.append(number)

    gate.__enter__()  # the slot is taken: every client below waits
    for number in range(12):
        thread = threading.Thread(target=client, args=(number,))
        thread.start()
        threads.append(thread)
        _wait_until(lambda n=number: gate.waiting == n + 1, f"client {number} waits")
    gate.__exit__(None, None, None)
    for thread in threads:
        thread.join(30)
    assert entered == list(range(12))
    assert gate.waiting == 0


def test_a_newcomer_waits_behind_a_released_slot_handed_on() -> None:
    gate = FifoGate(1)
    order: list[str] = []
    first_inside = threading.Event()
    let_first_go = threading.Event()

    def first() -> None:
        with gate:
            order.append("first")
            first_inside.set()
            let_first_go.wait(30)

    def newcomer() -> None:
        with gate:
            order.append("newcomer")

    gate.__enter__()
    waiter = threading.Thread(target=first)
    waiter.start()
    _wait_until(lambda: gate.waiting == 1, "the first client waits")
    gate.__exit__(None, None, None)  # handed to the waiter, never free in between
    first_inside.wait(30)
    late = threading.Thread(target=newcomer)
    late.start()
    _wait_until(lambda: gate.waiting == 1, "the newcomer waits behind the holder")
    assert order == ["first"]
    let_first_go.set()
    waiter.join(30)
    late.join(30)
    assert order == ["first", "newcomer"]


def test_never_more_holders_than_slots_and_all_get_through() -> None:
    gate = FifoGate(3)
    inside = 0
    most = 0
    done = 0
    lock = threading.Lock()

    def client() -> None:
        nonlocal inside, most, done
        for _ in range(50):
            with gate:
                with lock:
                    inside += 1
                    most = max(most, inside)
                time.sleep(0.0002)
                with lock:
                    inside -= 1
        with lock:
            done += 1

    threads = [threading.Thread(target=client) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert done == 10
    assert 1 <= most <= 3
    assert gate.waiting == 0


def test_every_slot_can_be_held_at_once() -> None:
    gate = FifoGate(3)
    all_inside = threading.Barrier(3, timeout=30)  # broken if a third holder is kept out
    broken: list[BaseException] = []

    def client() -> None:
        with gate:
            try:
                all_inside.wait()
            except threading.BrokenBarrierError as error:
                broken.append(error)

    threads = [threading.Thread(target=client) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert broken == []
    assert gate.waiting == 0


def test_an_error_inside_gives_the_slot_back() -> None:
    gate = FifoGate(1)
    with pytest.raises(RuntimeError), gate:
        raise RuntimeError("embedding failed")
    entered = threading.Event()

    def client() -> None:
        with gate:
            entered.set()

    thread = threading.Thread(target=client)
    thread.start()
    thread.join(30)
    assert entered.is_set()


def test_a_gate_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        FifoGate(0)


class _NamedEmbeddings(HashedWordEmbeddings):
    """Hashed words under a model identity of their own (a collection records one)."""

    model_name = "hashed-words"
    fingerprint = "hashed-words-64"


def test_a_retrievers_query_embedding_waits_for_a_slot_outside_the_read_gate(
    tmp_path, monkeypatch
) -> None:
    store = open_store(tmp_path, "words", _NamedEmbeddings(dimensions=64))
    texts = ["alpha beta gamma", "alpha delta", "omega sigma kappa", "beta theta zeta"]
    docs = [
        Document(
            page_content=text,
            metadata={"source": f"f{n}.md", "doc_id": f"d{n}", "start_index": 0,
                      "end_index": len(text)},
            id=f"c{n}",
        )
        for n, text in enumerate(texts)
    ]  # fmt: skip
    store.add_documents(docs, ids=[d.id for d in docs])
    retriever = ChunkRetriever(store=store, parent_store=store.parent_store, k=3)
    expected = [(d.id, d.page_content, d.metadata) for d in retriever.invoke("alpha beta")]
    assert [row[0] for row in expected[:1]] == ["c0"]  # both words: first by either list

    gate = FifoGate(1)
    monkeypatch.setattr(admission, "EMBEDDING_GATE", gate)
    answers: dict[int, list[tuple]] = {}
    finished: list[int] = []

    def client(number: int) -> None:
        found = retriever.invoke("alpha beta")
        answers[number] = [(d.id, d.page_content, d.metadata) for d in found]
        finished.append(number)

    gate.__enter__()  # every query's embedding waits until the slot is handed on
    threads = []
    for number in range(3):
        thread = threading.Thread(target=client, args=(number,))
        thread.start()
        threads.append(thread)
        _wait_until(lambda n=number: gate.waiting == n + 1, f"query {number} waits")
    assert finished == []
    writer_in = threading.Event()

    def writer() -> None:
        with store.gate.writing():
            writer_in.set()

    writing = threading.Thread(target=writer)
    writing.start()
    # the queued queries hold no read lock: a writer gets the collection meanwhile
    writer_got_in = writer_in.wait(20)
    gate.__exit__(None, None, None)
    writing.join(60)
    assert writer_got_in
    for thread in threads:
        thread.join(60)
    assert sorted(finished) == [0, 1, 2]
    assert all(answers[n] == expected for n in range(3))
    assert gate.waiting == 0
