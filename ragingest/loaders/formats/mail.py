"""E-mail: ``.eml`` (one message) and ``.mbox`` (many), with the stdlib ``email`` package —
it gives the headers a thread needs (Message-ID, In-Reply-To, References), which unstructured's
``partition_email`` keeps only partly.

One document per message: ``# subject`` then the body, with quoted replies and the signature
removed (cleaning rules ``quotes`` and ``signatures``, counted). Metadata: ``subject``,
``from``, ``to``, ``date`` (ISO 8601, also ``doc_date``), ``message_id`` and ``thread_id``
(the first Message-ID in References, else In-Reply-To, else the message's own).
"""

from __future__ import annotations

import email
import email.policy
import mailbox
import re
import tempfile
from collections.abc import Iterator
from email.message import EmailMessage, MIMEPart
from email.utils import parsedate_to_datetime
from pathlib import Path

from langchain_core.documents import Document

from ragingest.errors import ParseError
from ragingest.loaders.base import FileLoader, file_metadata, require_extra
from ragingest.loaders.cleaning.rules import CleaningRules, new_counts
from ragingest.loaders.formats.repair import better_charset
from ragingest.loaders.markdown.blocks import clean_inline, clean_multiline, render
from ragingest.loaders.notes import add_note
from ragingest.schema import CLEANING_HINT, CONTENT_TYPE_HINT, short_hash

_ATTRIBUTION = re.compile(
    r"^(?:on\b.{0,200}\bwrote:|.{0,200}\b(?:пишет|написал[аи]?|написал\(а\)):)\s*$",
    re.IGNORECASE,
)
_FORWARD_CUT = re.compile(
    r"^\s*-{2,}\s*(?:original message|исходное сообщение|forwarded message|"
    r"пересылаемое сообщение)\s*-{2,}\s*$",
    re.IGNORECASE,
)
_OUTLOOK_FROM = re.compile(r"^\s*(?:from|от):\s+\S", re.IGNORECASE)
_OUTLOOK_NEXT = re.compile(r"^\s*(?:sent|date|отправлено|дата|to|кому):\s", re.IGNORECASE)
_SIG_DASHES = re.compile(r"^--\s?$")
_SIG_CLOSING = re.compile(
    r"^(?:с уважением|с наилучшими пожеланиями|всего доброго|best regards|kind regards|"
    r"regards|best wishes|cheers)\b[\s,.!]*",
    re.IGNORECASE,
)
_SENT_FROM = re.compile(r"^(?:sent from my|отправлено (?:с|из) )", re.IGNORECASE)
_REPLY_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?|отв|пересл)\s*(?:\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_SIGNATURE_MAX_LINES = 6


def strip_reply(body: str, rules: CleaningRules, counts: dict[str, int]) -> str:
    """The new text of a message: quoted replies and the signature cut off."""
    lines = body.split("\n")
    if rules.quotes:
        cut = len(lines)
        for i, line in enumerate(lines):
            if _FORWARD_CUT.match(line):
                cut = i
                break
            if _OUTLOOK_FROM.match(line) and any(
                _OUTLOOK_NEXT.match(x) for x in lines[i + 1 : i + 4]
            ):
                cut = i
                break
        counts["quoted_lines"] += sum(1 for x in lines[cut:] if x.strip())
        lines = lines[:cut]
        kept = []
        for i, line in enumerate(lines):
            quoted = line.lstrip().startswith(">")
            attribution = _ATTRIBUTION.match(line.strip()) and any(
                x.lstrip().startswith(">") for x in lines[i + 1 : i + 3]
            )
            if quoted or attribution:
                counts["quoted_lines"] += 1 if line.strip() else 0
                continue
            kept.append(line)
        lines = kept
    if rules.signatures:
        cut = len(lines)
        for i, line in enumerate(lines):
            rest = [x for x in lines[i + 1 :] if x.strip()]
            if _SIG_DASHES.match(line) or _SENT_FROM.match(line.strip()):
                cut = i
                break
            if _SIG_CLOSING.match(line.strip()) and len(rest) <= _SIGNATURE_MAX_LINES:
                cut = i
                break
        counts["signature_lines"] += sum(1 for x in lines[cut:] if x.strip())
        lines = lines[:cut]
    return "\n".join(lines)


def _body(message: EmailMessage, notes: list[str], path: Path) -> str:
    """The plain-text body; the HTML one (as Markdown) when there is no plain text. Bytes
    that don't decode with the declared charset are decoded with the detected one (a note
    says so) instead of turning into U+FFFD."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    content = _part_text(part, notes)
    if part.get_content_subtype() == "html":
        require_extra(path, "reading an e-mail's HTML body", "mail", ("unstructured", "bs4"))
        from ragingest.loaders.formats.partition import element_blocks, partition

        text, _ = render(element_blocks(partition("html", text=content)))
        return text
    return content


def _part_text(part: MIMEPart, notes: list[str]) -> str:
    payload = part.get_payload(decode=True) or b""
    if not isinstance(payload, bytes):
        return str(payload)
    declared = part.get_content_charset() or "us-ascii"
    try:
        text = payload.decode(declared)
        better = better_charset(payload, declared)
        if better is None:
            return text
        notes.append(
            f"the {part.get_content_type()} part declares charset {declared}, but its bytes "
            f"are {better}: decoded as {better} (detected)"
        )
        return payload.decode(better, errors="replace")
    except LookupError:
        problem = f"unknown charset {declared!r}"
    except UnicodeDecodeError as exc:
        problem = f"bytes not valid {declared} as declared (at byte {exc.start})"
    from charset_normalizer import from_bytes

    best = from_bytes(payload).best()
    where = f"the {part.get_content_type()} part"
    if best is None:
        notes.append(f"{where}: {problem}; undecodable bytes replaced with U+FFFD")
        return payload.decode("utf-8", errors="replace")
    notes.append(f"{where}: {problem}; decoded as {best.encoding} (detected)")
    return str(best)


def _ids(value: object) -> list[str]:
    return re.findall(r"<([^<>\s]+)>", str(value or ""))


def _address(value: object) -> str:
    return clean_inline(str(value or ""))


def message_document(
    message: EmailMessage,
    loader: FileLoader,
    rules: CleaningRules,
    index: int = 0,
) -> Document:
    """The document of one e-mail: a '# subject' heading, the header lines, the body with quotes
    and signatures cleaned as ``rules`` say; the headers as metadata."""
    counts = new_counts()
    notes: list[str] = []
    subject = clean_inline(str(message.get("Subject", "") or ""))
    body = _body(message, notes, loader.path).replace("\r\n", "\n")
    body = clean_multiline(strip_reply(body, rules, counts))
    title = subject or "(без темы)"
    text = f"# {title}\n\n{body}\n" if body else ""
    own = _ids(message.get("Message-ID"))
    references = _ids(message.get("References"))
    reply_to = _ids(message.get("In-Reply-To"))
    message_id = own[0] if own else ""
    thread = (references or reply_to or own or [""])[0]
    if not thread:
        thread = short_hash(_REPLY_PREFIX.sub("", subject).strip().lower())
    date = ""
    try:
        when = parsedate_to_datetime(str(message.get("Date", "")))
        date = when.isoformat(timespec="seconds")
    except (TypeError, ValueError, IndexError):
        pass
    extra = {
        "title": title,
        "doc_date": date or None,
        "subject": subject,
        "from": _address(message.get("From")),
        "to": _address(message.get("To")),
        "date": date,
        "message_id": message_id,
        "thread_id": thread,
        "in_reply_to": reply_to[0] if reply_to else "",
    }
    metadata = file_metadata(loader.path, loader.root, text, **extra)
    for key in ("subject", "from", "to", "date", "message_id", "in_reply_to"):
        metadata.setdefault(key, "")
        if metadata[key] == "":
            del metadata[key]
    if index:
        metadata["doc_id"] = short_hash(metadata["source"], message_id or index)
    metadata[CLEANING_HINT] = counts
    metadata[CONTENT_TYPE_HINT] = "email"
    for note in notes:
        add_note(metadata, f"message {index}: {note}" if index else note)
    return Document(page_content=text, metadata=metadata)


def _is_message(message: EmailMessage) -> bool:
    return any(message.get(h) for h in ("From", "Subject", "Date", "Message-ID", "To"))


class EmailLoader(FileLoader):
    """``.eml`` files: one document per message."""
    suffixes = (".eml",)
    cleaning: CleaningRules = CleaningRules()

    def _documents(self) -> Iterator[Document]:
        data = self.read_bytes()
        if not data.strip():
            return
        message = email.message_from_bytes(data, policy=email.policy.default)
        if not isinstance(message, EmailMessage) or not _is_message(message):
            raise ParseError(
                self.path,
                "not an e-mail message: no From, To, Subject, Date or Message-ID header "
                "(export the mail as .eml with its headers)",
            )
        yield message_document(message, self, self.cleaning)


class MboxLoader(FileLoader):
    """``.mbox`` files: one document per message of the mailbox."""
    suffixes = (".mbox",)
    cleaning: CleaningRules = CleaningRules()

    def _documents(self) -> Iterator[Document]:
        data = self.read_bytes()  # the walk's file, checked; ``mailbox`` reads a private copy
        with tempfile.TemporaryDirectory(prefix="ragingest-mbox-") as private:
            copy = Path(private) / "box.mbox"
            copy.write_bytes(data)
            del data
            yield from self._messages(mailbox.mbox(copy, factory=None, create=False))

    def _messages(self, box: mailbox.mbox) -> Iterator[Document]:
        try:
            found = False
            for index, raw in enumerate(box, 1):
                message = email.message_from_bytes(raw.as_bytes(), policy=email.policy.default)
                if isinstance(message, EmailMessage) and _is_message(message):
                    found = True
                    yield message_document(message, self, self.cleaning, index)
            if not found:
                raise ParseError(self.path, "no messages found: not an mbox file")
        finally:
            box.close()
