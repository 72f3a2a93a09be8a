"""``markdown_blocks``: the blocks cross-document cleaning may remove are plain paragraphs only."""

from __future__ import annotations

from ragingest.loaders.cleaning.markdown_blocks import markdown_blocks

TEXT = (
    "Шапка документа.\n\n# Заголовок\n\nАбзац в две\nстроки.\n\n```console\n$ run\n\n"
    "INFO: started\n```\n\n| a | b |\n|---|---|\n\n- пункт\n- ещё\n\n    код с отступом\n\n"
    "Абзац\n## заголовок внутри\n\n~~~\nнезакрытый забор\n\nдо конца"
)


def test_blocks_and_their_kinds():
    blocks = markdown_blocks(TEXT)
    got = [(TEXT[b.start : b.end], b.kind) for b in blocks]
    assert got == [
        ("Шапка документа.", "paragraph"),
        ("# Заголовок", "heading"),
        ("Абзац в две\nстроки.", "paragraph"),
        ("```console\n$ run\n\nINFO: started\n```", "code"),
        ("| a | b |\n|---|---|", "structure"),
        ("- пункт\n- ещё", "structure"),
        ("    код с отступом", "structure"),
        ("Абзац\n## заголовок внутри", "structure"),
        ("~~~\nнезакрытый забор\n\nдо конца", "code"),
    ]
