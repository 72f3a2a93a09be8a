"""Whether extracted text reads as words: a PDF whose text layer is garbage (a font without a
usable ToUnicode map, text decoded in the wrong code page: «Ñúåøü æå», «(cid:12)(cid:34)»,
private-use glyphs) gives text that is no language.

Contract: ``real_word_share(text) -> float`` in [0, 1]: of the characters of the judged
tokens (whitespace-separated, outer punctuation stripped; judged: holding a letter, a
private-use glyph, U+FFFD or pdfminer's ``(cid:N)``, and no digit unless such a glyph), the
share in tokens that read as a word: letters only (an inner hyphen or apostrophe allowed),
one script, lower, Title or UPPER case, at most ``MAX_WORD`` letters, a vowel of its script
when over three letters, and in Latin no more than half of its letters from Latin-1's
accented block (mojibake of cp1251/koi8 text). Other tokens (numbers, codes like E-07,
punctuation) count for neither side. 1.0 when no token is judged (nothing to judge).
Pure, cheap (one pass), deterministic. ``looks_garbled`` is the run's test (enough text,
under ``GARBAGE_SHARE``; ``pipeline.split`` notes such a PDF in the run report); an OCR step
can use the same functions to decide to read the page images instead.

``sure_ocr_heading(text, confidences)`` is the test a line read by OCR passes before it may be
a title or heading (logos, stamps, handwriting and table rules read as text are large and
short, so the text size alone calls them headings): Tesseract sure of its words (their median
confidence at least ``OCR_SURE``: one misread word does not sink a real heading), little
debris (letters and digits at least ``ALNUM_SHARE`` of its characters but spaces and a leading
«1.2.»), the shape of a heading (starts with a capital, a digit or an opening quote; at least
``HEADING_LETTERS`` letters and one real word of three or more) and words (at least
``HEADING_WORDS`` of its judged tokens read as words, counted by token: an identifier or a
product name like «ClickHouse», no word here, weighs as one). ``ocr_text_is_clean`` is its
first two parts: what a line another joins to make one heading must pass.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Sequence

GARBAGE_SHARE = 0.5  # under this share of real words a text layer is noted as garbage
MIN_TOKENS = 20  # fewer tokens with a letter: too little text to judge
MAX_WORD = 30
OCR_SURE = 80.0  # median word confidence (0-100) of an OCR'd line that may be a heading
HEADING_LETTERS = 4
ALNUM_SHARE = 0.75
HEADING_WORDS = 0.5

_TOKEN = re.compile(r"\S+")
_EDGES = "\"'«»„“”‘’()[]{}<>.,;:!?…—–-*/\\|"
_INNER = re.compile(r"[-'’]")
_VOWELS = {
    "LATIN": set("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœ"),
    "CYRILLIC": set("аеёиоуыэюяіїєў"),
}
_CID = re.compile(r"\(cid:\d+\)")
_NUMBERING = re.compile(r"^\d{1,3}(?:\.\d{1,3})*\.?\s+")  # «1.2. » before a heading's words
_MOJIBAKE = re.compile("[\u00c0-\u00ff]")


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else ""


def _is_word(token: str) -> bool:
    letters = _INNER.sub("", token)
    if not letters.isalpha() or len(letters) > MAX_WORD:
        return False
    if not (letters.islower() or letters.isupper() or letters.istitle()):
        return False
    scripts = {_script(c) for c in letters}
    if len(scripts) != 1:
        return False
    (script,) = scripts
    lower = letters.lower()
    vowels = _VOWELS.get(script)
    if vowels is not None and len(lower) > 3 and not vowels.intersection(lower):
        return False
    return script != "LATIN" or 2 * len(_MOJIBAKE.findall(letters)) <= len(letters)


def _glyph(char: str) -> bool:
    return char == "\ufffd" or unicodedata.category(char) == "Co"


def _judged_tokens(text: str) -> list[str]:
    """The tokens ``real_word_share`` judges (module docstring)."""
    tokens = []
    for match in _TOKEN.finditer(_CID.sub("\ue000", text)):
        token = match.group().strip(_EDGES)
        glyphs = any(_glyph(c) for c in token)
        if glyphs or (any(c.isalpha() for c in token) and not any(c.isdigit() for c in token)):
            tokens.append(token)
    return tokens


def real_word_share(text: str) -> float:
    """The share of the judged tokens' characters in real words (module docstring)."""
    tokens = _judged_tokens(text)
    total = sum(len(t) for t in tokens)
    real = sum(len(t) for t in tokens if _is_word(t))
    return real / total if total else 1.0


def letter_tokens(text: str) -> int:
    """How many tokens of ``text`` ``real_word_share`` judges."""
    return len(_judged_tokens(text))


def looks_garbled(text: str) -> bool:
    """Whether ``text`` is enough text to judge and under ``GARBAGE_SHARE`` real words."""
    return letter_tokens(text) >= MIN_TOKENS and real_word_share(text) < GARBAGE_SHARE


def ocr_text_is_clean(text: str, confidences: Sequence[float]) -> bool:
    """Whether Tesseract is sure of the words of ``text`` and it holds little debris
    (module docstring)."""
    if not confidences or statistics.median(confidences) < OCR_SURE:
        return False
    chars = [c for c in _NUMBERING.sub("", text.strip()) if not c.isspace()]
    return sum(c.isalnum() for c in chars) >= ALNUM_SHARE * len(chars)


def sure_ocr_heading(text: str, confidences: Sequence[float]) -> bool:
    """Whether a line OCR read as ``text`` with its words' ``confidences`` may be a title or
    a heading (module docstring); if not, it stays body text."""
    if not ocr_text_is_clean(text, confidences):
        return False
    words = _NUMBERING.sub("", text.strip())
    first = words.lstrip("«\"„“(")[:1]
    if not (first.isupper() or first.isdigit()):
        return False
    if sum(c.isalpha() for c in words) < HEADING_LETTERS:
        return False
    real = [t for t in _judged_tokens(words) if _is_word(t)]
    if not any(len(t) >= 3 for t in real):
        return False
    return len(real) >= HEADING_WORDS * letter_tokens(words)
