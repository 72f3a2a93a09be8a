"""Fidelity, as a property of random corpora (Markdown, PDF and DOCX files) with exact copies,
near-copies, shared paragraphs, shared console blocks and page headers, cleaned and split as
a run does (the corpus scan, then each file's split stage): every sentence of every source is
in a stored chunk or in the file's removal list with its rule; each chunk's text is the
indexed text at its offsets; every box lies on a page of its chunk. OCR'd scans get the same
checks over one fixed corpus (Tesseract is too slow for random ones)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragingest.loaders.cleaning.rules import CleaningRules, Removal
from ragingest.loaders.markdown.source_offsets import indexed_text
from ragingest.pipeline.plan import make_plan, scan_corpus
from ragingest.pipeline.split import Splitting, split_documents
from ragingest.schema import BOX_MAP_HINT, CLEANING_HINT
from ragingest.splitters.factory import SplitSettings
from ragingest.splitters.heading_first import HeadingFirstSplitter
from tests.scans import cer, tesseract

WORDS = (
    "заявка срок договор клиент оплата доставка склад отчёт архив услуга письмо приказ "
    "сотрудник отдел проверка возврат счёт реестр пропуск график"
).split()
HEADER = "Компания «Ромашка» — внутренний документ, не для третьих лиц"
SHARED = "Общие положения: регламент действует для всех подразделений компании без исключений."
CONSOLE = (
    "```console\n$ make run\n\nINFO: server running on http://127.0.0.1:8000 (quit: CTRL+C)\n```"
)


@dataclass
class Doc:
    """A generated document: its title, paragraphs (lists of sentences), what it shares."""

    title: str
    paragraphs: list[list[str]]
    header: bool = False
    console_at: int | None = None
    kind: str = "md"  # the format written: md, pdf, docx or scan (a PDF of page images)
    notice: str = ""  # a scan's line between its header and its title

    def markdown(self) -> str:
        parts = [HEADER] if self.header else []
        parts.append(f"# {self.title}")
        for i, paragraph in enumerate(self.paragraphs):
            if i == self.console_at:
                parts.append(CONSOLE)
            parts.append(" ".join(paragraph))
        return "\n\n".join(parts) + "\n"

    def write(self, path: Path) -> Path:
        if self.kind == "pdf":
            return self._pdf(path.with_suffix(".pdf"))
        if self.kind == "docx":
            return self._docx(path.with_suffix(".docx"))
        if self.kind == "scan":
            return self._scan(path.with_suffix(".pdf"))
        path = path.with_suffix(".md")
        path.write_text(self.markdown(), encoding="utf-8")
        return path

    def sentences(self) -> list[str]:
        """What the source says: its sentences, title, header and console lines."""
        sentences = [s for p in self.paragraphs for s in p] + [self.title]
        sentences += [self.notice] if self.notice else []
        return sentences + ([HEADER] if self.header else []) + self.console_lines()

    def console_lines(self) -> list[str]:
        """The console block's lines as the format holds them (none in a PDF; a DOCX has no
        fences: one monospace paragraph a line)."""
        if self.console_at is None or self.kind in ("pdf", "scan"):
            return []
        lines = CONSOLE.splitlines()
        if self.kind == "docx":
            return [line for line in lines if line.strip() and not line.startswith("```")]
        return lines

    def _docx(self, path: Path) -> Path:
        import docx

        document = docx.Document()
        if self.header:  # the page header Word repeats on every page
            document.sections[0].header.paragraphs[0].text = HEADER
        document.add_heading(self.title, 0)
        for i, paragraph in enumerate(self.paragraphs):
            if i == len(self.paragraphs) // 2:
                document.add_page_break()
            if i == self.console_at:
                for line in self.console_lines():
                    document.add_paragraph().add_run(line).font.name = "Courier New"
            document.add_paragraph(" ".join(paragraph))
        document.save(str(path))
        return path

    def _scan(self, path: Path) -> Path:
        """A two-page scan (page images, no text layer) of ``scan_pages``."""
        from tests.scans import render_page, scan_pdf

        return scan_pdf(path, [render_page(page, width_in=6.5) for page in self.scan_pages()])

    def scan_pages(self) -> list[list[str]]:
        """The blocks of each page of the scan (``render_page``'s): the header line atop each
        page, then the notice and the title, the first half of the paragraphs on page 1, the
        rest on page 2."""
        header = [HEADER] if self.header else []
        body = [" ".join(paragraph) for paragraph in self.paragraphs]
        half = len(body) // 2
        notice = [self.notice] if self.notice else []
        return [[*header, *notice, f"# {self.title}", *body[:half]], [*header, *body[half:]]]

    def _pdf(self, path: Path) -> Path:
        from fpdf import FPDF

        from tests.docbuilders import _roboto

        header = self.header

        class Paged(FPDF):
            def header(self) -> None:
                if header:
                    self.set_font("Roboto", size=8)
                    self.cell(0, 6, HEADER, new_x="LMARGIN", new_y="NEXT")
                    self.ln(4)

        pdf = Paged(format=(148, 210))
        pdf.add_font("Roboto", "", _roboto())
        pdf.add_font("Roboto", "B", _roboto(bold=True))
        pdf.add_page()
        pdf.set_font("Roboto", "B", 16)
        pdf.multi_cell(0, 8, self.title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Roboto", size=11)
        for i, paragraph in enumerate(self.paragraphs):
            if i == len(self.paragraphs) // 2:
                pdf.add_page()  # two pages at least: a running header repeats
            pdf.multi_cell(0, 6, " ".join(paragraph), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
        pdf.output(str(path))
        return path


sentence_words = st.lists(st.sampled_from(WORDS), min_size=3, max_size=9)


@st.composite
def corpora(draw: st.DrawFn) -> list[Doc]:
    """Distinct documents, then copies and near-copies of some of them."""
    docs = []
    for d in range(draw(st.integers(3, 5))):
        paragraphs = []
        for p in range(draw(st.integers(3, 6))):
            count = draw(st.integers(2, 4))
            paragraphs.append(
                [f"Пункт {d}.{p}.{s}: {' '.join(draw(sentence_words))}." for s in range(count)]
            )
        if draw(st.booleans()):
            paragraphs.insert(draw(st.integers(0, len(paragraphs))), [SHARED])
        docs.append(
            Doc(
                f"Документ {d}",
                paragraphs,
                header=draw(st.integers(0, 3)) > 0,  # mostly: boilerplate to find
                console_at=draw(st.none() | st.integers(0, len(paragraphs) - 1)),
                kind=draw(st.sampled_from(["md", "md", "pdf", "docx"])),
            )
        )
    for original in draw(st.lists(st.sampled_from(range(len(docs))), max_size=3)):
        source = docs[original]
        paragraphs = [list(p) for p in source.paragraphs]
        if draw(st.booleans()):  # a near-copy: one sentence changed
            p = draw(st.integers(0, len(paragraphs) - 1))
            paragraphs[p][-1] = f"Изменённый пункт {len(docs)}: {' '.join(draw(sentence_words))}."
        docs.append(Doc(source.title, paragraphs, source.header, source.console_at, source.kind))
    return docs


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def check_file(document_records: list, removed: list[Removal], sentences: list[str]) -> None:
    stored = []
    for document, records in document_records:
        indexed = indexed_text(document.page_content, document.metadata)
        covered = [False] * len(indexed)
        for record in records:
            meta = record.metadata
            start, end = meta["start_index"], meta["end_index"]
            assert record.text == indexed[start:end]
            covered[start:end] = [True] * (end - start)
            pages = range(meta.get("page_start", 0), meta.get("page_end", 0) + 1)
            boxes = json.loads(meta.get("page_boxes") or "[]")
            assert all(page in pages for page, *_box in boxes)
        # what no chunk holds, blanks between two chunks aside (a line OCR read may run on
        # from one chunk's last sentence to the next one's first)
        kept = "".join(
            c if k or c.isspace() else "\0" for c, k in zip(indexed, covered, strict=True)
        )
        stored.append(flat(kept))
    for sentence in sentences:
        if any(flat(sentence) in text for text in stored):
            continue
        listed = [r for r in removed if flat(sentence) in flat(r.text) and r.rule]
        # a loader removes lines: a sentence may run over two removed lines
        joined = flat(" ".join(r.text for r in removed if r.rule))
        assert listed or flat(sentence) in joined, f"{sentence!r} is neither stored nor listed"


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(docs=corpora())
def test_every_sentence_is_stored_or_listed_as_removed(tmp_path_factory, docs):
    check_corpus(tmp_path_factory.mktemp("corpus"), docs)


def check_corpus(
    root: Path, docs: list[Doc], chunk_chars: int = 300
) -> list[tuple[list, list[Removal]]]:
    """Write ``docs`` into ``root``, scan the corpus and split each file as a run does (chunks
    of at most ``chunk_chars``), check
    every file's chunks and removals against what it was written from; each file's split
    documents and removals, in the order of ``docs``."""
    paths = [doc.write(root / f"doc{i}") for i, doc in enumerate(docs)]
    tasks = make_plan([root], {}).tasks
    rules = CleaningRules()
    corpus = scan_corpus(tasks, rules)
    splitting = Splitting(
        SplitSettings(),
        lambda: HeadingFirstSplitter(chunk_chars, 0, 0, unit="chars"),
        cleaning=rules,
    )
    by_path = {task.path: task for task in tasks}
    out = []
    for path, doc in zip(paths, docs, strict=True):
        removed: list[Removal] = []
        documents, _counts = split_documents(by_path[path], splitting, corpus, removed)
        check_file(
            documents,
            removed,
            read_lines(path, root) if doc.kind == "scan" else doc.sentences(),
        )
        out.append((documents, removed))
    return out


def read_lines(path: Path, root: Path) -> list[str]:
    """The lines of a scan as OCR reads them with no cleaning rule on (each line the span of
    one box): the cleaner must keep or list what was read (the reading's own errors, a Latin
    «H» for «Н», are not its doing)."""
    from ragingest.loaders import loader_for

    loader = loader_for(path, root, cleaning=CleaningRules.parse(["all"]))
    return [
        document.page_content[start:end]
        for document in loader.lazy_load()
        for start, end, *_box in document.metadata[BOX_MAP_HINT]
    ]


SCAN_NOTICE = "Документ носит справочный характер и не является офертой."
SCAN_BODIES = [
    [
        "Книги из общего фонда выдают на четырнадцать дней по читательскому билету.",
        "Газеты и журналы читают только в зале, на дом их не выдают никогда.",
        "Читатель, потерявший книгу, возмещает её стоимость или приносит такую же.",
        "Новый читательский билет оформляют по паспорту за десять минут.",
        "Детям до четырнадцати лет билет оформляют вместе с родителями.",
        "Билет действует три года и продлевается по заявлению читателя.",
    ],
    [
        "Альбомы с красной наклейкой выдают на три дня и не продлевают вовсе.",
        "Продлить книгу можно на абонементе, по телефону или на сайте библиотеки.",
        "Продление возможно один раз, если на книгу нет заявки другого читателя.",
        "За каждый день просрочки начисляют пени по десять рублей за книгу.",
        "Пени оплачивают на абонементе наличными или банковской картой.",
        "Читателю с долгом новые книги не выдают до полного расчёта.",
    ],
    [
        "В читальном зале работает гардероб и есть розетки у каждого стола.",
        "Сумки и пакеты оставляют в камере хранения у входа в читальный зал.",
        "Зал открыт с десяти до двадцати часов, в субботу до восемнадцати часов.",
        "Ноутбуки и планшеты в зал проносить можно, фотоаппараты со вспышкой нельзя.",
        "Редкие издания выдают только в перчатках и под присмотром библиотекаря.",
        "Копии страниц делают на абонементе за отдельную плату по прейскуранту.",
    ],
]


@pytest.mark.slow  # starts Tesseract processes: one fixed corpus, not a random one
def test_every_ocr_sentence_is_stored_or_listed_as_removed(tmp_path, monkeypatch):
    """The same checks over OCR'd two-page scans: three distinct scans with a running header
    atop every page (the file's own header rule) and one notice above each title
    (boilerplate: the margin of three distinct documents; removing it moves every offset,
    page start and box after it), and an exact copy of the first (a copy, not boilerplate:
    its text stays findable)."""
    tesseract()
    monkeypatch.setenv("RAGINGEST_OCR_CACHE", str(tmp_path / "ocr-cache"))
    docs = [
        Doc(f"Правила {n}", [body[0:2], body[2:4], body[4:6]], True, None, "scan", SCAN_NOTICE)
        for n, body in enumerate(SCAN_BODIES)
    ]
    docs.append(Doc(docs[0].title, docs[0].paragraphs, True, None, "scan", SCAN_NOTICE))
    (tmp_path / "scans").mkdir()
    for documents, removed in check_corpus(tmp_path / "scans", docs, chunk_chars=120):
        assert [(r.rule, r.page, r.text) for r in removed] == [
            ("headers_footers", 1, HEADER),
            ("headers_footers", 2, HEADER),
            ("boilerplate", 1, SCAN_NOTICE),
        ]
        for _document, records in documents:
            for record in records:  # every chunk has boxes, and its pages are theirs
                pages = [box[0] for box in json.loads(record.metadata.get("page_boxes") or "[]")]
                assert pages, record.text
                meta = record.metadata
                assert (meta["page_start"], meta["page_end"]) == (min(pages), max(pages))
    for i, doc in enumerate(docs):  # the lines checked are the written text, as read
        written = " ".join(block.lstrip("# ") for page in doc.scan_pages() for block in page)
        read = " ".join(read_lines(tmp_path / "scans" / f"doc{i}.pdf", tmp_path / "scans"))
        assert cer(read, written) < 0.02


def test_numbered_body_lines_are_no_running_header(tmp_path):
    """A PDF whose every page starts and ends with numbered lines alike but for their digits
    (found by the property above): the header/footer rule would take its whole body."""
    from ragingest.loaders import loader_for

    doc = Doc("Документ", [[f"Пункт {p}.{s}: заявка заявка заявка." for s in range(2)]
                           for p in range(3)], kind="pdf")  # fmt: skip
    path = doc.write(tmp_path / "numbered")
    [loaded] = loader_for(path, tmp_path, cleaning=CleaningRules()).lazy_load()
    text = flat(loaded.page_content)
    assert all(sentence in text for paragraph in doc.paragraphs for sentence in paragraph)


def test_a_wrapped_line_atop_one_page_and_at_the_foot_of_another_is_kept(tmp_path):
    """A two-page PDF whose paragraphs wrap to a last line «заявка.» at the foot of page 1 and
    near the top of page 2 (found by the property above): a line repeated on the pages'
    different sides is body text; the header rule took it out of two sentences."""
    from ragingest.loaders import loader_for

    paragraphs = [
        [SHARED],
        ["Пункт 1.0.0: заявка заявка заявка.", "Пункт 1.0.1: заявка заявка заявка."],
        ["Пункт 1.1.0: заявка заявка заявка.", "Пункт 1.1.1: договор склад заявка."],
        ["Пункт 1.2.0: заявка заявка заявка.", "Пункт 1.2.1: пропуск реестр счёт отчёт."],
    ]
    path = Doc("Документ 1", paragraphs, kind="pdf").write(tmp_path / "wrapped")
    [loaded] = loader_for(path, tmp_path, cleaning=CleaningRules()).lazy_load()
    body = " ".join(" ".join(paragraph) for paragraph in paragraphs)
    assert flat(loaded.page_content) == f"# Документ 1 {body} "
    assert loaded.metadata[CLEANING_HINT]["header_footer_lines"] == 0
