"""Documentation dialects (VitePress, Docusaurus/MDX, MkDocs Material, GitHub alerts, Sphinx
directives, Hugo shortcodes): the stored text stays the exact slice, the embedded text, the
breadcrumb and the heading metadata carry the words, and a chunk of pure markup is not
embedded alone (``splitters.dialects``)."""

from __future__ import annotations

import itertools

import pytest
from langchain_core.documents import Document

from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.dialects import heading_title, words
from ragingest.splitters.markup_pieces import markup_only

PLAYGROUND = "https://play.vuejs.org/#" + "eNp9kUFLAzEQhf9KyOmnQ0" * 12
VITEPRESS = (
    '---\noutline: deep\n---\n\n<script setup>\nimport { ref } from "vue"\nimport Demo from '
    '"./Demo.vue"\nconst count = ref(0)\n</script>\n\n# Списки {#lists}\n\n'
    "## Фильтрация <Badge type=\"tip\" text=\"3.3+\" /> {#filtering}\n\n"
    "::: tip Совет\nДля фильтрации списка создайте вычисляемое свойство с отфильтрованным "
    "массивом.\n:::\n\n<div class=\"options-api\">\n\nВ Options API свойство объявляют в "
    "разделе computed.\n\n</div>\n\n"
    f"[Попробовать в песочнице]({PLAYGROUND})\n\n## Сортировка {{#sorting}}\n\n"
    "Метод sort меняет исходный массив, поэтому сначала сделайте копию.\n"
)
MDX = (
    "import Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n\n"
    "# Установка\n\n:::note[Важно]\n\nНужен Node.js 18 или новее.\n\n:::\n\n"
    '<Tabs>\n  <TabItem value="npm" label="npm">\n\n```bash\nnpm install ragdoc\n```\n\n'
    "  </TabItem>\n</Tabs>\n\nexport const meta = { draft: true };\n"
)
MKDOCS = (
    '# Настройка\n\n!!! note "Примечание"\n    Файл конфигурации лежит в корне проекта.\n\n'
    '??? tip\n    Скрытый совет: включите кэш.\n\n=== "Linux"\n\n    Запустите команду make.\n'
)
GITHUB = "# Обновление\n\n> [!WARNING]\n> Перед обновлением сделайте резервную копию базы.\n"
SPHINX = "# Справка\n\n.. note:: Заметка\n\n   Переменная окружения задаёт каталог данных.\n"
HUGO = (
    '# Диски\n\n{{< alert level="warning" >}}\nНе удаляйте том во время записи.\n'
    "{{< /alert >}}\n"
)
MARKUP = (":::", "<script", "import ", "!!!", "???", "[!WARNING]", ".. note::", "{{<",
          "<div", "<Tabs", "<Badge", "eNp9", "export const")  # fmt: skip


@pytest.mark.parametrize(
    ("page", "words_kept"),
    [
        (VITEPRESS, ["Совет", "вычисляемое свойство", "Options API", "Попробовать в песочнице"]),
        (MDX, ["Важно", "Node.js 18", "npm install ragdoc"]),
        (MKDOCS, ["Примечание", "Файл конфигурации", "Скрытый совет", "Linux", "make"]),
        (GITHUB, ["резервную копию"]),
        (SPHINX, ["Заметка", "каталог данных"]),
        (HUGO, ["Не удаляйте том"]),
    ],
    ids=["vitepress", "mdx", "mkdocs", "github", "sphinx", "hugo"],
)
def test_the_model_reads_the_words_and_the_store_keeps_the_slice(page, words_kept):
    splitter = HeadingFirstSplitter(1000, 0, 0, unit="chars")
    chunks = splitter.split_documents([Document(page_content=page, metadata={"source": "p.md"})])
    assert chunks
    for chunk in chunks:
        meta = chunk.metadata
        assert page[meta["start_index"] : meta["end_index"]] == chunk.page_content
        for key in ("title", "section_path", "h1", "h2", "h3"):
            assert "{#" not in meta.get(key, "") and "<" not in meta.get(key, ""), meta
    embedded = "\n".join(
        c.embed_text for c in splitter.split_chunks(page.split("---\n\n", 1)[-1])
    )
    for mark in MARKUP:
        assert mark not in embedded, (mark, embedded)
    # heading anchors stay in the embedded text: e5 reads their English words (measured)
    assert ("{#filtering}" in embedded) == (page is VITEPRESS)
    for kept in words_kept:
        assert kept in embedded, (kept, embedded)


def test_vitepress_headings_lose_their_anchors_in_every_heading_key():
    splitter = HeadingFirstSplitter(120, 0, 0, unit="chars")
    chunks = splitter.split_documents([Document(page_content=VITEPRESS, metadata={"source": "p"})])
    paths = {c.metadata["section_path"] for c in chunks}
    assert "Списки > Фильтрация" in paths and "Списки > Сортировка" in paths, paths
    assert {c.metadata["title"] for c in chunks} == {"Списки"}


def test_a_chunk_of_pure_markup_joins_its_neighbour():
    splitter = HeadingFirstSplitter(120, 0, 0, unit="chars")
    body = VITEPRESS.split("---\n\n", 1)[-1]
    chunks = splitter.split_chunks(body)
    assert not [c.text for c in chunks if markup_only(c.text)]
    # every character still lies in a chunk: the markup joined a neighbour, it was not dropped
    assert any("</div>" in c.text for c in chunks) and any(PLAYGROUND in c.text for c in chunks)
    assert any("<script setup>" in c.text for c in chunks)
    first = next(c for c in chunks if "<script setup>" in c.text)
    assert first.headings, "the script joined the first section, under its heading"


def test_plain_markdown_is_read_as_it_is():
    text = "Обычный текст: a < 5, [ссылка](https://example.com/a) и `<div>` в коде.\n"
    assert words(text) is text
    assert heading_title("Раздел 2.1") == "Раздел 2.1"
    assert not markup_only("Готово.")


def _markup_blocks():
    from hypothesis import strategies as st

    from tests.splitters.test_heading_first_properties import block, paragraph

    markup = st.sampled_from([
        "<script setup>\nimport { ref } from 'vue'\n</script>", "::: tip Совет", ":::",
        '<div class="options-api">', "</div>", "import Tabs from '@theme/Tabs';",
        f"[Песочница]({PLAYGROUND})", '!!! note "Примечание"', "> [!NOTE]", ".. note::",
        '{{< alert level="info" >}}', "{{< /alert >}}", "## Раздел {#razdel}", "<Tabs>",
    ])  # fmt: skip
    parts = st.lists(st.one_of(block, markup, markup, paragraph), min_size=1, max_size=24)
    return parts.map("\n\n".join)


def test_contracts_hold_with_dialect_markup(e5_info):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.splitters.test_heading_first_properties import LIMIT, _splitter

    @settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=_markup_blocks(), size=st.sampled_from([(24, 0, 0), (40, 6, 10), (200, 30, 100)]))
    def check(text, size):
        splitter = _splitter(e5_info, *size)
        chunks = splitter.split_chunks(text)
        covered = bytearray(len(text))
        for chunk in chunks:
            assert text[chunk.start_index : chunk.end_index] == chunk.text
            covered[chunk.start_index : chunk.end_index] = b"\x01" * len(chunk.text)
            assert chunk.parent_span[0] <= chunk.start_index
            assert chunk.end_index <= chunk.parent_span[1]
        assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())
        for left, right in itertools.pairwise(chunks):
            assert left.start_index < right.start_index and left.end_index < right.end_index
        counts = splitter.token_measure.exact([c.embed_text for c in chunks])
        assert max(counts) <= LIMIT

    check()


def test_faq_chunks_lose_anchors_in_their_metadata_too():
    from ragingest.splitters.faq import FaqSplitter

    faq = (
        "# Вопросы {#faq}\n\n## Как вернуть товар? {#return}\n\nЧерез личный кабинет.\n\n"
        "## Как обменять товар? {#exchange}\n\nВ пункте выдачи.\n"
    )
    base = HeadingFirstSplitter(200, 0, 0, unit="chars")
    chunks = FaqSplitter(base).split_chunks(faq)
    assert chunks and all("{#" not in c.section_path for c in chunks)
    assert {c.title for c in chunks} == {"Вопросы"}


def test_hostile_long_lines_are_read_in_one_pass():
    # each of these took minutes with backtracking patterns; linear ones take milliseconds
    n = 200_000
    lines = [
        "x" + "`" * n, "<a" + " " * n + "x", "{#a" + " " * n, "{{<" * (n // 3),
        "y" + " " * n + "z", "[t](" + "a" * n, "::: " + "{#a " * (n // 4), "<" + "b " * n,
    ]  # fmt: skip
    for line in lines:
        assert words("<b>x</b>\n" + line).startswith("x")
        assert heading_title(line[:n]) is not None


def test_a_jsx_tag_over_several_lines_is_markup():
    page = (
        "# Установка\n\n<Tabs\n  groupId=\"package-manager\"\n  defaultValue=\"npm\">\n"
        "  <TabItem\n    value=\"npm\"\n    label=\"npm\">\n\nКоманда установки.\n\n"
        "  </TabItem>\n</Tabs>\n\nЕсли a < b\nи это не тег.\n"
    )
    read = words(page)
    assert "groupId" not in read and "defaultValue" not in read and 'value="npm"' not in read
    assert "Команда установки." in read and "Если a < b\nи это не тег." in read


FASTAPI = (
    "# Первые шаги { #first-steps }\n\nСамый простой файл FastAPI может выглядеть так:\n\n"
    "{* ../../docs_src/first_steps/tutorial001_py39.py hl[3] *}\n\nЗапустите сервер:\n\n"
    '<div class="termy">\n\n```console\n$ <font color="#4E9A06">fastapi</font> dev '
    '<u style="text-decoration-style:solid">main.py</u>\n```\n\n</div>\n\n'
    "/// note | Технические детали\n\nКоманда uvicorn обращается к объекту app.\n\n///\n\n"
    '## Проверка { #check-it .sub }\n\nЭто <abbr title="также известная как: эндпоинт">'
    "операция</abbr> пути.\n\n//// tab | Python 3.10+\n\n```Python\napp = FastAPI()\n```\n\n"
    "////\n"
)


@pytest.mark.parametrize("size", [1000, 90])
def test_mkdocs_variants_leave_the_metadata_and_the_embedded_text(size):
    # as FastAPI writes MkDocs Material: spaced anchors, pymdownx blocks, source includes,
    # a termy console and <abbr>; for_vectorstore embeds what ingest embeds
    from ragingest.splitters import for_vectorstore

    splitter = HeadingFirstSplitter(size, 0, 0, unit="chars")
    docs = for_vectorstore([Document(page_content=FASTAPI, metadata={"source": "p.md"})], splitter)
    assert docs
    for doc in docs:
        meta = doc.metadata
        for key in ("title", "section_path", "h1", "h2", "h3"):
            assert "{" not in meta.get(key, ""), meta
        assert meta["title"] == "Первые шаги" and meta["h1"] == "Первые шаги"
    assert {d.metadata.get("h2") for d in docs} >= {"Проверка"}
    embedded = "\n".join(d.page_content for d in docs)
    assert embedded == "\n".join(c.embed_text for c in splitter.split_chunks(FASTAPI))
    for mark in ("///", "{*", "docs_src", "<font", "<u ", "termy", "<abbr", "| Python"):
        assert mark not in embedded, (mark, embedded)
    for kept in ("Технические детали", "Python 3.10+", "$ fastapi dev main.py", "app = FastAPI()",
                 "операция (также известная как: эндпоинт) пути", "{ #first-steps }"):  # fmt: skip
        assert kept in embedded, (kept, embedded)


def test_mkdocs_variant_rules_one_by_one():
    assert heading_title("Первые шаги { #first-steps }") == "Первые шаги"
    assert heading_title("Проверка { #check-it .sub data-x=1 }") == "Проверка"
    assert words("/// note | Заметка\n\nТекст.\n\n///") == "Заметка\n\nТекст."
    assert words("//// tab | Python 3.10+\n\nТекст.\n\n////") == "Python 3.10+\n\nТекст."
    assert words("/// tip\nТекст.\n///") == "Текст."
    # slashes before prose or a path are not a marker; a directive is dropped as text, the
    # file it names is never opened (it does not exist here)
    assert words("/// это / не блок\nТекст.") == "/// это / не блок\nТекст."
    assert words("До {* ../../docs_src/missing.py *} после.") == "До  после."
    assert words('<abbr title="">API</abbr> и <abbr title="x">Y</abbr>') == "API и Y (x)"
    # a console fence outside a termy div loses its colouring tags; other code keeps them
    assert words("```console\n$ <b>ls</b>\n```") == "```console\n$ ls\n```"
    assert "<b>" in words("```html\n<b>ls</b>\n```\n<i>x</i>")


def test_mkdocs_variant_patterns_are_linear():
    n = 200_000
    lines = ["{ " + " " * n, "{ #a" + " " * n, "{*" + " " * n, "/" * n, "/// " + " " * n + "x",
             "<abbr title=\"" + "a" * n, "{ #" * (n // 3), "///" + "|" * n]  # fmt: skip
    for line in lines:
        assert words("<b>x</b>\n" + line).startswith("x")
        assert heading_title(line[:n]) is not None
