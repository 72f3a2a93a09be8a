"""Entity references in the XML of a DOCX/PPTX package, made plain text before python-docx or
python-pptx read it.

Their parser keeps an entity reference (``&name;``, declared in a ``<!DOCTYPE>``) as a node of
its own and never expands it (good: no external fetch, no billion laughs), but the text API
then stops at that node: every word after the reference in its paragraph was silently lost.
So each XML part that has a DOCTYPE is parsed here with lxml (``resolve_entities=False``,
``no_network=True``, no DTD loading) and each reference is replaced by text: the value of an
internal entity declared as plain text (no markup, no nested references, at most
``MAX_ENTITY_CHARS``; ``MAX_EXPANDED_CHARS`` per part in all), else nothing (an external
entity is never read: ``SYSTEM "file:///etc/passwd"`` stays unread). Parts without a DOCTYPE
(every file Word or PowerPoint writes) are passed through untouched.

Contract: ``without_entities(data)`` returns the package bytes (``data`` itself when no part
has a DOCTYPE); a part that does not parse is left as it was (the parser names the failure).
"""

from __future__ import annotations

import io
import zipfile

MAX_ENTITY_CHARS = 1024
MAX_EXPANDED_CHARS = 2**20
_XML_SUFFIXES = (".xml", ".rels")


def without_entities(data: bytes) -> bytes:
    """The package with its entity references replaced by text (module docstring)."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    changed: dict[str, bytes] = {}
    for info in archive.infolist():
        if not info.filename.endswith(_XML_SUFFIXES):
            continue
        body = archive.read(info)  # its size was checked (``archives.check_archive``)
        if b"<!DOCTYPE" in body or b"<!ENTITY" in body:
            flat = flatten_entities(body)
            if flat is not None:
                changed[info.filename] = flat
    if not changed:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rebuilt:
        for info in archive.infolist():
            rebuilt.writestr(info, changed.get(info.filename) or archive.read(info))
    return out.getvalue()


def _plain_values(tree: object) -> dict[str, str]:
    dtd = getattr(getattr(tree, "docinfo", None), "internalDTD", None)
    values: dict[str, str] = {}
    for entity in dtd.iterentities() if dtd is not None else ():
        content = entity.content or ""
        plain = "&" not in content and "<" not in content and len(content) <= MAX_ENTITY_CHARS
        if entity.system_url is None and plain:
            values[entity.name] = content
    return values


def flatten_entities(body: bytes) -> bytes | None:
    """``body`` with every entity reference replaced by text and no DOCTYPE; None when it
    does not parse."""
    from lxml import etree

    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError:
        return None
    values = _plain_values(root.getroottree())
    budget = MAX_EXPANDED_CHARS
    for entity in list(root.iter(etree.Entity)):
        value = values.get(entity.name.strip("&;"), "")
        value = value if len(value) <= budget else ""
        budget -= len(value)
        _replace_with_text(entity, value + (entity.tail or ""))
    data: bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    return data


def _replace_with_text(node: object, text: str) -> None:
    parent, previous = node.getparent(), node.getprevious()  # type: ignore[attr-defined]
    if previous is not None:
        previous.tail = (previous.tail or "") + text
    else:
        parent.text = (parent.text or "") + text
    parent.remove(node)
