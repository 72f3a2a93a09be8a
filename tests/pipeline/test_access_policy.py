"""Access policies without a run: the operator's rules read from a config (first match, deny
by default, errors naming the file and rule), principal lists checked, and POSIX read bits and
ACL entries of real files mapped to principals."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import struct
import tempfile
from pathlib import Path

import pytest

from ragingest.config import root_config
from ragingest.pipeline.access_policy import (
    AccessPolicy,
    AccessPolicyError,
    AccessRule,
    check_principals,
    document_access,
)
from ragingest.pipeline.access_unix import (
    ACL_XATTR,
    GROUP,
    GROUP_OBJ,
    MASK,
    OTHER,
    USER,
    USER_OBJ,
    acl_entries,
    unix_readers,
)
from ragingest.schema import NO_READER, PUBLIC_PRINCIPAL


@pytest.fixture
def open_folder():
    """A folder every user may pass through, in one they all may (pytest's own are 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="ragingest-unix-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


CONFIG = """
[access_policy]
default = "deny"

[[access]]
match = "hr/secret/**"   # nobody: a rule that grants no one hides what it matches

[[access]]
match = "hr/**"
groups = ["hr", "ceo"]
users = ["ann"]

[[access]]
match = "*.pdf"
public = true
"""


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ops.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_first_rule_that_covers_a_source_decides(tmp_path):
    policy = AccessPolicy.from_config(config(tmp_path, CONFIG))
    assert policy is not None and not policy.unix and policy.default == "deny"
    assert policy.access_for("hr/pay.md") == ("group:ceo", "group:hr", "user:ann")
    assert policy.access_for("hr/secret/bonus.md") == (NO_READER,)
    assert policy.access_for("hr/pay.pdf") == ("group:ceo", "group:hr", "user:ann")
    assert policy.access_for("legal/deal.pdf") == (PUBLIC_PRINCIPAL,)  # the file name matches
    assert policy.access_for("misc/notes.md") == (NO_READER,)  # deny by default
    public = AccessPolicy(default="public")
    assert public.access_for("misc/notes.md") == (PUBLIC_PRINCIPAL,)


def test_a_config_without_access_tables_has_no_policy(tmp_path):
    assert AccessPolicy.from_config(config(tmp_path, '[content_types]\n"*.md" = "faq"\n')) is None
    only_default = AccessPolicy.from_config(config(tmp_path, '[access_policy]\nunix = true\n'))
    assert only_default == AccessPolicy(unix=True)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[access_policy]\ndefault = "open"\n', "default must be 'deny' or 'public'"),
        ("[access_policy]\nunix = 1\n", "unix must be true or false"),
        ("[access_policy]\nwho = 1\n", r"unknown keys \['who'\]"),
        ('[[access]]\ngroups = ["hr"]\n', r"rule 1: give match"),
        ('[[access]]\nmatch = "a"\ngroups = "hr"\n', "rule 1: groups must be a list"),
        ('[[access]]\nmatch = "a"\nrole = "x"\n', r"rule 1: unknown keys \['role'\]"),
        ('[[access]]\nmatch = "a"\npublic = "yes"\n', "public must be true or false"),
        ('access = "everyone"\n', r"write \[\[access\]\] tables"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_file_and_rule(tmp_path, text, message):
    path = config(tmp_path, text)
    with pytest.raises(AccessPolicyError, match=message) as info:
        AccessPolicy.from_config(path)
    assert str(path) in str(info.value)


def test_principal_lists_are_checked_and_stored_sorted_once():
    assert check_principals(["user:b", "group:a", "user:b"], "d") == ("group:a", "user:b")
    assert check_principals([], "d") == (NO_READER,)  # an empty list: nobody
    assert check_principals(["*", "unix:group:staff"], "d") == ("*", "unix:group:staff")
    for bad in ("group:hr", ["hr"], ["user:"], [3], ["group:" + "x" * 3000]):
        with pytest.raises(ValueError, match="doc 7"):
            check_principals(bad, "doc 7")
    assert document_access([{"source": "a"}], "a") is None
    assert document_access([{"access": ["user:x"]}, {"access": ["user:x"]}], "a") == ("user:x",)
    with pytest.raises(ValueError, match="a: its documents name different readers"):
        document_access([{"access": ["user:x"]}, {"access": ["user:y"]}], "a")


def test_a_config_inside_the_data_is_refused_its_access_rules(tmp_path):
    (tmp_path / ".ragingest.toml").write_text(CONFIG, encoding="utf-8")
    found = root_config(tmp_path)
    assert found.ignored == ("access", "access_policy")
    assert "REFUSED its access rules" in found.ignored_note()


@pytest.mark.parametrize(
    ("mode", "want"),
    [
        (0o600, {"user"}),
        (0o640, {"user", "group"}),
        (0o644, {"user", "group", "*"}),
        (0o004, {"*"}),
        (0o000, set()),
    ],
)
def test_posix_read_bits_map_to_principals(open_folder, mode, want):
    path = open_folder / "f.md"
    path.write_text("x", encoding="utf-8")
    os.chmod(path, mode)
    info = path.stat()
    names = {
        "user": f"unix:user:{pwd.getpwuid(info.st_uid).pw_name}",
        "group": f"unix:group:{grp.getgrgid(info.st_gid).gr_name}",
        "*": PUBLIC_PRINCIPAL,
    }
    assert set(unix_readers(path)) == {names[w] for w in want}
    policy = AccessPolicy((AccessRule("*.md", groups=("hr",)),), unix=True)
    assert policy.access_for("f.md", path) == tuple(sorted({"group:hr"} | set(unix_readers(path))))
    if not want:
        assert AccessPolicy(unix=True).access_for("f.md", path) == (NO_READER,)


def _acl(entries: list[tuple[int, int, int]]) -> bytes:
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def test_posix_acl_entries_map_to_principals_under_the_mask(open_folder):
    path = open_folder / "f.md"
    path.write_text("x", encoding="utf-8")
    os.chmod(path, 0o600)
    none = 0xFFFFFFFF
    raw = _acl([
        (USER_OBJ, 6, none),
        (USER, 4, 54321),  # a user the system does not know: its number
        (USER, 2, 54322),  # may write, not read
        (GROUP_OBJ, 0, none),
        (GROUP, 4, 54323),
        (GROUP, 6, 54324),
        (MASK, 4, none),
        (OTHER, 0, none),
    ])
    try:
        os.setxattr(path, ACL_XATTR, raw)
    except (OSError, AttributeError) as exc:  # no ACLs on this file system or OS
        pytest.skip(f"POSIX ACLs not supported here: {exc}")
    owner = pwd.getpwuid(path.stat().st_uid).pw_name
    assert sorted(unix_readers(path)) == sorted([
        f"unix:user:{owner}", "unix:user:54321", "unix:group:54323", "unix:group:54324"
    ])
    os.setxattr(path, ACL_XATTR, _acl([(USER_OBJ, 6, none), (USER, 4, 54321), (GROUP_OBJ, 0,
                none), (GROUP, 4, 54323), (MASK, 0, none), (OTHER, 4, none)]))  # fmt: skip
    assert sorted(unix_readers(path)) == sorted([f"unix:user:{owner}", PUBLIC_PRINCIPAL])


def test_a_value_that_is_no_acl_leaves_the_mode_bits_to_decide():
    assert acl_entries(b"") == [] and acl_entries(b"\x02\x00\x00\x00\x01") == []
    assert acl_entries(struct.pack("<I", 1) + b"\x00" * 8) == []  # another version
    assert acl_entries(_acl([(USER_OBJ, 4, 7)])) == [(USER_OBJ, 4, 7)]


def test_rules_made_in_python_are_checked_as_a_configs_are():
    rule = AccessRule("hr/**", groups=["hr"], users=("ann",))  # type: ignore[arg-type]
    assert rule.groups == ("hr",) and rule.principals == ("group:hr", "user:ann")
    with pytest.raises(AccessPolicyError, match="'hr/\\*\\*': groups must be a list"):
        AccessRule("hr/**", groups="hr")  # type: ignore[arg-type]
    with pytest.raises(AccessPolicyError, match="needs match"):
        AccessRule("")
    assert AccessPolicy([rule]).rules == (rule,)  # type: ignore[arg-type]
    from ragingest.pipeline.options import IngestOptions

    with pytest.raises(TypeError, match="access_policy must be an AccessPolicy"):
        IngestOptions(Path("db"), "kb", access_policy="ops.toml")  # type: ignore[arg-type]


def test_a_reader_must_also_pass_through_every_folder_above(open_folder):
    inner = open_folder / "hr"
    inner.mkdir()
    path = inner / "f.md"
    path.write_text("x", encoding="utf-8")
    os.chmod(path, 0o644)
    info = path.stat()
    user = f"unix:user:{pwd.getpwuid(info.st_uid).pw_name}"
    group = f"unix:group:{grp.getgrgid(inner.stat().st_gid).gr_name}"
    os.chmod(inner, 0o750)  # others may not enter: the world-readable file is not public
    assert sorted(unix_readers(path)) == sorted([user, group])
    os.chmod(inner, 0o700)
    assert unix_readers(path) == [user]
    os.chmod(inner, 0o711)  # enter without listing is enough to read a file by name
    assert sorted(unix_readers(path)) == sorted([user, group, PUBLIC_PRINCIPAL])


def test_a_long_reader_list_is_stored_whole_and_out_of_the_chunk_id():
    """Other list values are cut to ``MAX_EXTRA_KEYS`` items; readers never (a cut list would
    lose readers silently), and a chunk's id does not change with its readers."""
    from ragingest.chunk import Chunk
    from ragingest.schema import MAX_EXTRA_KEYS, ChunkRecord
    from ragingest.splitters.chunk_metadata import chunk_metadata

    names = [f"group:g{i:03d}" for i in range(MAX_EXTRA_KEYS * 2)]
    chunk = Chunk("text", 0, 4, 1, (), "T", "heading", "text")
    meta = chunk_metadata({"source": "a.md", "access": names, "tags": names}, chunk, 0, 1)
    assert meta["access"] == names and len(meta["tags"]) == MAX_EXTRA_KEYS
    record = ChunkRecord("a.md", "text", meta, "text", "text")
    other = ChunkRecord("a.md", "text", {**meta, "access": ["user:x"]}, "text", "text")
    assert record.id == other.id
