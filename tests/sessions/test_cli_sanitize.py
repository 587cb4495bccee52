"""`bitexact sessions sanitize`: the pre-upload runtime-mask pass from the command line (T-UAS-060)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bitexact.cli import cli

STDIO_SECRET = "stdio-registered-Secret-7f3a"
CALLER_SECRET = "caller-file-Secret-91bd"
OTHER_SECRET = "flag-Secret-c0ffee"
SECRETS = (STDIO_SECRET, CALLER_SECRET, OTHER_SECRET)
GH_TOKEN = "ghp_" + "A1b2C3d4" * 5
"""A GitHub token shape: redacted with no mask registered."""


def _bx(tmp_path: Path, *args: str, stdin: bytes | None = None) -> Result:
    runner = CliRunner()
    return runner.invoke(cli, ["sessions", "sanitize", *args], input=stdin,
                         env={"BITEXACT_HOME": str(tmp_path / "home"), "COLUMNS": "200"}, catch_exceptions=False)


def _tree(root: Path) -> Path:
    files: dict[str, bytes] = {
        "agent-stdio.log": (f"starting\n::add-mask::{STDIO_SECRET}\nusing {STDIO_SECRET} now\n"
                            f"token {GH_TOKEN}\n").encode(),
        "mcp-logs/rpc-messages.jsonl": (
            '{"id":1,"note":"untouched line"}\n'
            # The secret only exists after decoding (\\u escapes): decoded strings are redacted.
            '{"id":2,"params":{"arguments":{"q":"\\u0073tdio-registered-Secret-7f3a"}}}\n'
            f'{{"id":3,"{CALLER_SECRET}":"as a key"}}\n'
        ).encode(),
        "agent/aw_info.json": json.dumps({"run_id": 1, "nested": [{"v": f"x{OTHER_SECRET}y"}]}, indent=2).encode(),
        "notes/summary.md": f"# Summary\n{CALLER_SECRET} and {OTHER_SECRET}\n".encode(),
        "bin/blob.dat": b"\xff\xfe raw " + STDIO_SECRET.encode() + b" \x80\x81\n",
        "clean.txt": b"nothing to see\n",
    }
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def _all_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _mask_file(tmp_path: Path) -> Path:
    path = tmp_path / "masks.txt"
    path.write_text(f"{CALLER_SECRET}\n\n  {OTHER_SECRET}  \n", encoding="utf-8")
    return path


def _no_secret_in(result: Result) -> None:
    for secret in (*SECRETS, GH_TOKEN):
        assert secret not in result.stdout and secret not in result.stderr


@pytest.mark.uas("T-UAS-060")
def test_every_file_loses_every_mask_and_nothing_is_printed(tmp_path) -> None:
    root = _tree(tmp_path / "artifacts")
    result = _bx(tmp_path, str(root), "--mask-file", str(_mask_file(tmp_path)))
    assert result.exit_code == 0, result.stderr
    after = _all_bytes(root)
    for relative, content in after.items():
        for secret in (*SECRETS, GH_TOKEN):
            assert secret.encode() not in content, f"{secret} left in {relative}"
    assert after["clean.txt"] == b"nothing to see\n"
    rpc = after["mcp-logs/rpc-messages.jsonl"].split(b"\n")
    assert rpc[0] == b'{"id":1,"note":"untouched line"}'  # untouched lines stay byte-identical
    assert json.loads(rpc[1]) == {"id": 2, "params": {"arguments": {"q": "***"}}}
    assert json.loads(rpc[2]) == {"id": 3, "***": "as a key"}
    assert after["bin/blob.dat"] == b"\xff\xfe raw *** \x80\x81\n"  # non-UTF-8 bytes pass through
    assert b"::add-mask::***" in after["agent-stdio.log"]
    _no_secret_in(result)
    assert "5 rewritten, 1 unchanged, 0 removed; 3 mask(s) applied" in result.stdout
    assert "rewritten  mcp-logs/rpc-messages.jsonl" in result.stdout


@pytest.mark.uas("T-UAS-060")
def test_masks_from_repeated_flags_and_standard_input(tmp_path) -> None:
    root = _tree(tmp_path / "artifacts")
    result = _bx(tmp_path, str(root), "--mask", OTHER_SECRET, "--mask", "  ", "--mask-file", "-",
                 stdin=f"{CALLER_SECRET}\n".encode())
    assert result.exit_code == 0, result.stderr
    assert not any(s.encode() in c for c in _all_bytes(root).values() for s in SECRETS)
    assert "1 blank value(s) ignored" in result.stderr
    _no_secret_in(result)


@pytest.mark.uas("T-UAS-060")
def test_a_secret_in_a_file_name_is_redacted_in_the_report(tmp_path) -> None:
    root = _tree(tmp_path / "artifacts")
    (root / f"leak-{CALLER_SECRET}.log").write_text(f"{CALLER_SECRET}\n", encoding="utf-8")
    human = _bx(tmp_path, str(root), "--mask", CALLER_SECRET)
    assert human.exit_code == 0
    assert "leak-***.log" in human.stdout
    _no_secret_in(human)


@pytest.mark.uas("T-UAS-060")
def test_json_output_shape(tmp_path) -> None:
    root = _tree(tmp_path / "artifacts")
    result = _bx(tmp_path, str(root), "--mask-file", str(_mask_file(tmp_path)), "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"root", "stdio", "masks", "rewritten", "unchanged", "removed", "unreadable", "ok"}
    assert report["root"] == str(root)
    assert report["stdio"] == {"path": "agent-stdio.log", "found": True}
    assert report["masks"] == 3  # two from the file, one from stdio; never the values
    assert sorted(report["rewritten"]) == ["agent-stdio.log", "agent/aw_info.json", "bin/blob.dat",
                                           "mcp-logs/rpc-messages.jsonl", "notes/summary.md"]
    assert report["unchanged"] == ["clean.txt"]
    assert report["removed"] == [] and report["unreadable"] == [] and report["ok"] is True
    _no_secret_in(result)
    # A second pass finds nothing left to redact.
    again = json.loads(_bx(tmp_path, str(root), "--mask-file", str(_mask_file(tmp_path)), "--json").stdout)
    assert again["rewritten"] == [] and again["ok"] is True


@pytest.mark.uas("T-UAS-060", "T-UAS-059")
def test_symlinks_are_removed_not_followed(tmp_path) -> None:
    root = _tree(tmp_path / "artifacts")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text(f"keep {CALLER_SECRET}\n", encoding="utf-8")
    (root / "link.txt").symlink_to(outside / "target.txt")
    (root / "linked-dir").symlink_to(outside, target_is_directory=True)
    result = _bx(tmp_path, str(root), "--mask", CALLER_SECRET, "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False
    assert sorted(report["removed"], key=lambda r: r["path"]) == [
        {"path": "link.txt", "reason": "not a regular file"},
        {"path": "linked-dir", "reason": "symbolic link"},
    ]
    assert not (root / "link.txt").is_symlink() and not (root / "linked-dir").is_symlink()
    # The link targets were neither read nor rewritten.
    assert (outside / "target.txt").read_text(encoding="utf-8") == f"keep {CALLER_SECRET}\n"
    assert [p.name for p in outside.iterdir()] == ["target.txt"]
    human = _bx(tmp_path, str(_tree(tmp_path / "again")), "--mask", CALLER_SECRET)
    assert human.exit_code == 0
    (tmp_path / "again" / "l").symlink_to(outside / "target.txt")
    human = _bx(tmp_path, str(tmp_path / "again"), "--mask", CALLER_SECRET)
    assert human.exit_code == 1
    assert "removed    l (not a regular file)" in human.stdout
    assert human.stderr.strip().splitlines() == ["error: 1 path(s) could not be sanitized and were removed"]


@pytest.mark.uas("T-UAS-060")
@pytest.mark.parametrize("case", ["missing-dir", "dir-is-file", "missing-mask-file", "binary-mask-file",
                                  "stdio-outside", "stdio-absolute", "stdio-missing"])
def test_unusable_input_exits_2_with_one_line_naming_the_path(tmp_path, case: str) -> None:
    root = _tree(tmp_path / "artifacts")
    before = _all_bytes(root)
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00")
    args, named = {
        "missing-dir": ([str(tmp_path / "nope")], str(tmp_path / "nope")),
        "dir-is-file": ([str(tmp_path / "file.txt")], str(tmp_path / "file.txt")),
        "missing-mask-file": ([str(root), "--mask-file", str(tmp_path / "none.txt")], str(tmp_path / "none.txt")),
        "binary-mask-file": ([str(root), "--mask-file", str(tmp_path / "binary.txt")], str(tmp_path / "binary.txt")),
        "stdio-outside": ([str(root), "--stdio", "../agent-stdio.log"], "../agent-stdio.log"),
        "stdio-absolute": ([str(root), "--stdio", str(root / "agent-stdio.log")], str(root / "agent-stdio.log")),
        "stdio-missing": ([str(root), "--stdio", "logs/stdio.log"], "logs/stdio.log"),
    }[case]
    result = _bx(tmp_path, *args, "--mask", CALLER_SECRET)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0]
    assert result.stdout == ""
    assert _all_bytes(root) == before  # nothing was touched
    _no_secret_in(result)


@pytest.mark.uas("T-UAS-060")
def test_explicit_stdio_path_supplies_the_masks(tmp_path) -> None:
    root = tmp_path / "artifacts"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "run.log").write_text(f"::add-mask::{STDIO_SECRET}\n", encoding="utf-8")
    (root / "out.jsonl").write_text(json.dumps({"v": STDIO_SECRET}) + "\n", encoding="utf-8")
    result = _bx(tmp_path, str(root), "--stdio", "logs/run.log", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["stdio"] == {"path": "logs/run.log", "found": True}
    assert json.loads((root / "out.jsonl").read_text(encoding="utf-8")) == {"v": "***"}
    _no_secret_in(result)


@pytest.mark.uas("T-UAS-060")
def test_help_teaches_with_examples_and_exit_codes(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["sessions", "sanitize", "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.stdout and "bitexact sessions sanitize /tmp/gh-aw" in result.stdout
    assert "--mask-file -" in result.stdout and "Exit codes:" in result.stdout
    assert "sanitize" in CliRunner().invoke(cli, ["sessions", "--help"]).stdout
