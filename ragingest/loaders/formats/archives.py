"""The zip bomb check of ZIP containers (DOCX, PPTX, XLSX, ODT, EPUB), before any parser.

A container's headers declare each member's sizes, and a hostile file lies about them: a
57 KB EPUB declaring 4 KB inflated to gigabytes in pandoc (which reads the deflate streams,
not the headers). So the sizes are checked twice: as declared (cheap: a bomb that says what it
is is refused without inflating a byte), then as really inflated — each deflated member's
stream decompressed here, from its local header, in blocks (constant memory), counting bytes
and stopping at the bound. The bound: ``MAX_UNPACKED_BYTES`` in all, and at most
``MAX_COMPRESSION_RATIO`` times the file's size once past ``RATIO_FLOOR`` (a real office file
compresses 3-20x; a bomb, 1000x; under the floor any ratio is harmless).

Contract: ``check_archive(path, data, format_name)`` returns None, or raises ``ParseError``
(not a ZIP, a member that does not inflate) or ``FileTooLargeError`` (over a bound, declared
or real; the reason says which) naming ``path``.
"""

from __future__ import annotations

import io
import zipfile
import zlib

from ragingest.errors import FileTooLargeError, ParseError

MAX_UNPACKED_BYTES = 256 * 2**20
MAX_COMPRESSION_RATIO = 200
RATIO_FLOOR = 2**20  # under this many inflated bytes the ratio is not checked
_BLOCK = 64 * 2**10  # compressed bytes fed to the decompressor at a time
_LOCAL_HEADER = b"PK\x03\x04"
_ENCRYPTED = 0x1


def unpacked_limit(packed: int) -> int:
    """The most bytes an archive of ``packed`` bytes may inflate to."""
    return min(MAX_UNPACKED_BYTES, max(RATIO_FLOOR, MAX_COMPRESSION_RATIO * max(1, packed)))


def _data_offset(data: bytes, info: zipfile.ZipInfo) -> int | None:
    """Where ``info``'s compressed bytes start (after its local header), None if no header."""
    start = info.header_offset
    if data[start : start + 4] != _LOCAL_HEADER:
        return None
    name_length = int.from_bytes(data[start + 26 : start + 28], "little")
    extra_length = int.from_bytes(data[start + 28 : start + 30], "little")
    return start + 30 + name_length + extra_length


def inflated_size(data: bytes, info: zipfile.ZipInfo, cap: int) -> int:
    """The bytes member ``info`` really inflates to, counted up to just past ``cap`` (then
    the count stops). Stored members are their bytes; other methods go through ``zipfile``
    (which stops at the declared size and then checks the CRC)."""
    if info.compress_type == zipfile.ZIP_STORED or info.flag_bits & _ENCRYPTED:
        return info.compress_size
    offset = _data_offset(data, info) if info.compress_type == zipfile.ZIP_DEFLATED else None
    if offset is None:
        with zipfile.ZipFile(io.BytesIO(data)).open(info) as member:
            total = 0
            while total <= cap and (block := member.read(_BLOCK)):
                total += len(block)
            return total
    view = memoryview(data)
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    total, position = 0, offset
    pending: bytes | memoryview = b""
    while not inflater.eof and total <= cap:
        if not pending:
            if position >= len(data):
                break
            pending = view[position : position + _BLOCK]
            position += _BLOCK
        total += len(inflater.decompress(pending, _BLOCK * 16))
        pending = inflater.unconsumed_tail
    return total


def check_archive(path: object, data: bytes, format_name: str) -> None:
    """A ZIP container that is whole and whose unpacked size, declared and real, is within
    bounds (see the module docstring)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ParseError(
            path,
            f"not a valid {format_name} file ({exc}): it is damaged, truncated or another "
            "format renamed; open and re-save it",
        ) from exc
    limit = unpacked_limit(len(data))
    declared = sum(info.file_size for info in infos)
    if declared > limit:
        raise _bomb(path, format_name, f"unpacks to {_size(declared)}", declared, len(data))
    real = 0
    for info in infos:
        try:
            real += inflated_size(data, info, limit - real)
        except (zlib.error, zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise ParseError(
                path,
                f"member {info.filename} of the {format_name} file does not unpack ({exc}): "
                "the file is damaged; open and re-save it",
            ) from exc
        if real > limit:
            how = f"really unpacks to more than {_size(real)} (declared: {_size(declared)})"
            raise _bomb(path, format_name, how, real, len(data))


def _size(n: int) -> str:
    if n < 2**20:
        return f"{n / 2**10:.0f} KB"
    return f"{n / 2**20:.0f} MiB" if n >= 10 * 2**20 else f"{n / 2**20:.1f} MiB"


def _bomb(path: object, format_name: str, how: str, size: int, packed: int) -> FileTooLargeError:
    return FileTooLargeError(
        path,
        f"{how} ({size / max(1, packed):.0f}x its size), over the limit for {format_name} "
        f"files ({MAX_UNPACKED_BYTES / 2**20:.0f} MiB, and at most {MAX_COMPRESSION_RATIO}x "
        f"its size past {_size(RATIO_FLOOR)}): refused as a possible zip bomb; split the "
        "document if it is real",
    )
