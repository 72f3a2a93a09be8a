"""bench.context's two readings of a reference: edge whitespace trimmed, and as given."""

from bench.scoring import readings, scores, trimmed, whole
from ragingest.evaluate.data import Question
from ragingest.evaluate.metrics import Reference

CORPUS = {"a": "First.\n The item was intended. \nLast.", "b": "   "}


def test_trimmed_drops_the_whitespace_at_both_edges_only():
    reference = Reference("a", 6, 31)  # "\n The item was intended. "
    assert CORPUS["a"][6:31] == "\n The item was intended. "
    (cut,) = trimmed([reference], CORPUS)
    assert (cut.start, cut.end) == (8, 30)
    assert CORPUS["a"][cut.start : cut.end] == "The item was intended."


def test_a_blank_reference_stays_as_given():
    reference = Reference("b", 0, 3)
    assert trimmed([reference], CORPUS) == (reference,)


def test_a_chunk_without_the_leading_space_holds_the_trimmed_reference_only():
    question = Question("q", "a", (Reference("a", 7, 30),))  # " The item was intended."
    chunk = [("a", 8, 30)]  # an edge-stripped chunk: "The item was intended."
    both = readings(question, CORPUS)
    assert whole(both[""], chunk) is True
    assert whole(both["raw "], chunk) is False


def test_scores_put_the_raw_reading_under_raw():
    out = scores({"dense r@5": [1.0, 0.0], "raw dense r@5": [0.0, 0.0], "dense mrr": [1.0, 0.5]})
    assert out == {"dense r@5": 50.0, "dense mrr": 0.75, "raw": {"dense r@5": 0.0}}


def test_an_equal_context_in_characters_takes_passages_whole_while_they_fit():
    from bench.context_chars import Sizes, char_budget, greedy

    # deterministic test vectors: passage sizes in characters, a ranking, a budget
    sizes = [500, 2000, 400, 300, 100]
    assert greedy([1, 0, 2, 3, 4], sizes, 2441, limit=20) == [1, 2]
    assert greedy([0, 2, 3, 4, 1], sizes, 1300, limit=3) == [0, 2, 3]
    assert char_budget(2440.6) == "2441ch"
    seen = Sizes()
    seen.add("1024", ["abc", "de"], count=lambda text: 1)
    seen.add("1024", ["x"], count=lambda text: 1)
    assert seen.row() == {"chars@1024": 3, "tokens@1024": 2}
