"""The terms of the lexical index: what both backends (SQLite FTS5 in ``lexical``,
PostgreSQL in ``lexical_pg``) index, and which of a query's terms a search matches.

Contract:

- ``terms(text)``: lower-cased words (``ё`` -> ``е``); a Cyrillic word through the Snowball
  Russian stemmer, a Latin one through the English stemmer (PyStemmer), anything with a digit
  kept as it is. A code joined by ``-``, ``.``, ``/`` or ``_`` (``E-07``, ``1.2.3``) gives its
  parts and the whole (``e_07``), and a number written in groups (``4 990``) also ``4990``, so
  «E-07» finds «E-07» and «4990» finds «4 990». A term over ``MAX_TERM_BYTES`` of UTF-8 (a
  base64 blob, a run of letters without a space) is cut to its first ``MAX_TERM_BYTES`` (at a
  character boundary), the same in a query: PostgreSQL refuses longer lexemes ("word is too
  long"), and both backends must index and match alike.
- ``ranking_terms(terms, frequency, total)``: the query terms a search matches, the same for
  both backends. BM25's idf (FTS5's ``ln((N - n + 0.5) / (n + 0.5))``) is floored at 1e-6
  for a term in at least half the rows, so such a term moves a score by at most ~2e-6 while
  its rows are most of the work of an ``OR`` query over a large collection; it is left out,
  unless no other indexed term is left. Terms no row holds are left out too (they match
  nothing). A search thus ranks the rows holding a useful term by those terms' BM25.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import Stemmer

_WORD = re.compile(r"[^\W_]+(?:[-./_][^\W_]+)*")
_SPLIT = re.compile(r"[-./_]")
_GROUPED_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d])")
_CYRILLIC = re.compile(r"[а-я]")
_LATIN = re.compile(r"^[a-z]+$")


MAX_TERM_BYTES = 2000  # under PostgreSQL's 2047-byte lexeme limit


def _bounded(term: str) -> str:
    """``term`` cut to ``MAX_TERM_BYTES`` of UTF-8 at a character boundary."""
    if len(term) * 4 <= MAX_TERM_BYTES:
        return term
    return term.encode("utf-8")[:MAX_TERM_BYTES].decode("utf-8", errors="ignore")


_STEMMERS = threading.local()  # one per thread: a PyStemmer object is not thread-safe


def _stemmer(language: str) -> Stemmer.Stemmer:
    found = getattr(_STEMMERS, language, None)
    if found is None:
        import Stemmer  # PyStemmer: the Snowball stemmers in C

        found = Stemmer.Stemmer(language)
        setattr(_STEMMERS, language, found)
    return found


@lru_cache(maxsize=65536)  # a corpus repeats its words: each part is stemmed once
def _word_term(word: str) -> str:
    if any(ch.isdigit() for ch in word):
        return word
    if _CYRILLIC.search(word):
        return _stemmer("russian").stemWord(word)
    if _LATIN.match(word):
        return _stemmer("english").stemWord(word)
    return word


@lru_cache(maxsize=65536)  # and each whole word is split once
def _word_terms(word: str) -> tuple[str, ...]:
    """The terms of one ``_WORD`` match: its parts' terms, then (a joined code) the whole."""
    parts = _SPLIT.split(word)
    found = tuple(_bounded(_word_term(part)) for part in parts)
    return (*found, _bounded("_".join(parts))) if len(parts) > 1 else found


def terms(text: str) -> list[str]:
    """The index terms of ``text``, in order (see the module docstring)."""
    text = text.lower().replace("ё", "е")
    out = [term for word in _WORD.findall(text) for term in _word_terms(word)]
    out.extend(_bounded(re.sub(r"\D", "", m.group())) for m in _GROUPED_NUMBER.finditer(text))
    return out


def lexical_text(page_content: str, metadata: Mapping[str, object] | None) -> str:
    """What the index holds for a chunk: its section path (the breadcrumb the model sees too),
    then its text. Rebuilt from Chroma alone, so an index can always be made again."""
    section = str((metadata or {}).get("section_path") or "")
    return f"{section}\n{page_content}" if section else page_content


def query_terms(query: str) -> list[str]:
    """The distinct index terms of ``query``, in order of first use."""
    return list(dict.fromkeys(terms(query)))


def ranking_terms(unique: Sequence[str], frequency: Mapping[str, int], total: int) -> list[str]:
    """Of the distinct query terms ``unique``, those a search matches (module docstring):
    the ones in at least one and fewer than half of the ``total`` rows (``frequency``: rows
    per term, absent = 0); when none is, every term some row holds."""
    held = [term for term in unique if frequency.get(term, 0) > 0]
    rare = [term for term in held if 2 * frequency[term] < total]
    return rare or held
