"""`bitexact capture journal FILE`: a sealed journal opened with this host's key, summarized, shown on request.

Every file here is sealed with the real envelope (ChaCha20-Poly1305 under a
per-file key wrapped by a real host key in tmp_path); the SDK journal is one
the SDK itself wrote for a large entry while the store was held.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.crypto.hostkey import HostKey, load_host_key
from bitexact.crypto.sealed import CHUNK_BYTES, MAGIC, SealedWriter, seal
from bitexact.recording.journal import JournalRecord, orphan_journals, write_journal
from bitexact.sdk.stores import close_stores
from capture_verdict.support import VISA
from sdk.test_large import store_write_lock  # the store's writer lock, held as another process would

SPACED_VISA = f"{VISA[:4]} {VISA[4:8]} {VISA[8:12]} {VISA[12:]}"
DOCUMENT = {"card": SPACED_VISA, "amount": 3490, "items": ["a", "b"]}


@pytest.fixture(autouse=True)
def _no_host_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BITEXACT_HOST_KEY", raising=False)


@pytest.fixture
def host_key(home: Path) -> HostKey:
    """This host's key, where `bitexact` looks for it by default (beside the data directory)."""
    return load_host_key(home)


def key_file(path: Path) -> HostKey:
    """Another host's key: 64 hex characters in an owner-only file."""
    secret = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secret.hex() + "\n")
    return HostKey(secret, path)


def sealed_file(path: Path, key: HostKey, chunks: list[bytes], *, purpose: str = "stream-journal",
                finish: bool = True) -> Path:
    """A sealed file holding ``chunks`` (one sealed chunk each), ended properly when ``finish``."""
    out = io.BytesIO()
    writer = SealedWriter(out, key, purpose=purpose)
    for chunk in chunks:
        writer.write(chunk)
    if finish:
        writer.finish()
    path.write_bytes(out.getvalue())
    return path


def frames(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of the header and of each chunk frame of a sealed file, parsed independently."""
    header_end = len(MAGIC) + 4 + int.from_bytes(data[len(MAGIC) : len(MAGIC) + 4], "big")
    spans = [(0, header_end)]
    position = header_end
    while position < len(data):
        size = int.from_bytes(data[position : position + 4], "big")
        spans.append((position, position + 4 + 12 + size))
        position += 4 + 12 + size
    return spans


def run_json(bx: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = bx("capture", "journal", *args, "--json")
    return result.exit_code, json.loads(result.stdout)


def no_card_in(result: Any) -> bool:
    shown = result.stdout + result.stderr
    # "4111" standing alone (a card's first group), never inside a journal token's or a key id's hex.
    return VISA not in shown and SPACED_VISA not in shown and re.search(r"(?<![0-9a-f])4111(?![0-9a-f])", shown) is None


# -- a complete file -------------------------------------------------------------


def test_the_summary_names_what_the_file_is_and_never_prints_its_content(
    bx: Any, host_key: HostKey, tmp_path: Path
) -> None:
    payload = json.dumps(DOCUMENT).encode()
    path = tmp_path / "stream.journal"
    path.write_bytes(seal(payload, host_key, purpose="stream-journal"))
    result = bx("capture", "journal", str(path))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "  purpose      stream-journal" in lines
    assert f"  host key     {host_key.key_id}" in lines
    assert "  chunks       2" in lines  # one holding the payload, and the final one
    assert f"  bytes        {len(payload)} (plaintext)" in lines
    assert "ended properly" in result.stdout
    assert no_card_in(result), "the default output never holds the content"
    assert "--show prints it" in result.stderr


def test_show_pretty_prints_json_content(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    path = tmp_path / "stream.journal"
    path.write_bytes(seal(json.dumps(DOCUMENT).encode(), host_key, purpose="stream-journal"))
    result = bx("capture", "journal", str(path), "--show")
    assert result.exit_code == 0
    assert json.dumps(DOCUMENT, indent=2, ensure_ascii=False) in result.stdout
    assert SPACED_VISA in result.stdout  # printed because the operator asked for it


def test_show_prints_text_as_it_is_and_bytes_with_escapes(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    text = tmp_path / "text.journal"
    text.write_bytes(seal(b"data: {\"partial\": [1, 2\n", host_key, purpose="stream-journal"))
    shown = bx("capture", "journal", str(text), "--show")
    assert shown.exit_code == 0 and 'data: {"partial": [1, 2\n' in shown.stdout
    raw = tmp_path / "raw.journal"
    raw.write_bytes(seal(b"\xff\xfe-binary", host_key, purpose="spool"))
    shown = bx("capture", "journal", str(raw), "--show")
    assert shown.exit_code == 0 and "\\xff\\xfe-binary" in shown.stdout and "not UTF-8" in shown.stderr
    code, document = run_json(bx, str(raw), "--show")
    assert code == 0 and document["content_base64"] == "//4tYmluYXJ5"


def test_json_summary_and_content_on_request(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    big = {"text": "x" * (CHUNK_BYTES + CHUNK_BYTES // 2), "card": VISA}
    payload = json.dumps(big).encode()
    path = tmp_path / "big.journal"
    path.write_bytes(seal(payload, host_key, purpose="stream-journal"))
    code, document = run_json(bx, str(path))
    assert code == 0
    assert document == {
        "file": str(path), "opened": True, "purpose": "stream-journal", "host_key_id": host_key.key_id,
        "chunks": 3, "bytes": len(payload), "complete": True,
        "ending": "ended properly (its final chunk is present)", "sdk_entry": None,
    }
    code, shown = run_json(bx, str(path), "--show")
    assert code == 0 and shown["content"] == big


# -- SDK entry journals ------------------------------------------------------------


def test_a_journal_the_sdk_left_for_a_large_entry(bx: Any, home: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    data = {"tool": "scan", "result": "y" * (1 << 20), "card": SPACED_VISA}
    left = tmp_path / "left-behind.bxj"
    try:
        with bitexact.run() as r:
            r.marker("first")
            with store_write_lock(home):
                r.record("tool_call", data)  # over 1 MiB: journaled in the call, written after it
                (journal,) = orphan_journals(home, r.run_id)
                left.write_bytes(journal.read_bytes())  # what a process killed now would leave
        run_id = r.run_id
    finally:
        close_stores()
    result = bx("capture", "journal", str(left))
    assert result.exit_code == 0, result.stderr
    assert "  purpose      sdk-journal" in result.stdout
    assert f"  host key     {load_host_key(home, create=False).key_id}" in result.stdout
    assert f"  run          {run_id}" in result.stdout
    assert "  record       #2 of the run, kind tool_call, recorded at " in result.stdout
    assert no_card_in(result) and "yyyy" not in result.stdout
    code, document = run_json(bx, str(left), "--show")
    assert code == 0
    assert document["sdk_entry"]["run_id"] == run_id and document["sdk_entry"]["seq"] == 2
    assert document["sdk_entry"]["kind"] == "tool_call"
    assert document["content"] == data  # the entry as the agent recorded it, before any policy


def test_an_sdk_journal_summary_names_its_run_record_and_kind(bx: Any, home: Path, host_key: HostKey) -> None:
    record = JournalRecord("run-7", 5, "http_call", {"url": "https://x", "card": VISA}, steps_before=4,
                           recorded_at="2026-11-29T10:00:00.000000Z")
    path = write_journal(home, host_key, record)
    code, document = run_json(bx, str(path))
    assert code == 0
    assert document["sdk_entry"] == {"run_id": "run-7", "seq": 5, "kind": "http_call", "steps_before": 4,
                                     "recorded_at": "2026-11-29T10:00:00.000000Z"}
    assert VISA not in json.dumps(document)
    shown = bx("capture", "journal", str(path), "--show")
    assert json.dumps({"card": VISA, "url": "https://x"}, indent=2) in shown.stdout


def test_an_sdk_journal_cut_short_says_what_it_holds(bx: Any, home: Path, host_key: HostKey) -> None:
    record = JournalRecord("run-8", 1, "tool_call", {"result": "z" * (CHUNK_BYTES + 10), "card": VISA})
    path = write_journal(home, host_key, record)
    data = path.read_bytes()
    spans = frames(data)
    # Cut inside the last data chunk: the header line and the first MiB of the data survive.
    last = len(spans) - 3  # spans: the header, the data chunks, the final chunk
    path.write_bytes(data[: spans[-2][0] + 40])
    result = bx("capture", "journal", str(path))
    assert result.exit_code == 1
    assert "  run          run-8" in result.stdout and "kind tool_call" in result.stdout
    assert f"cut short inside chunk {last}" in result.stdout and "was cut short" in result.stderr
    assert no_card_in(result)
    shown = bx("capture", "journal", str(path), "--show")
    assert shown.exit_code == 1
    assert shown.stdout.rstrip("\n").endswith("z" * 100)  # what it holds so far, incomplete JSON as text
    assert "incomplete" in shown.stderr


# -- what cannot be opened ---------------------------------------------------------


def test_a_file_sealed_under_another_host_key_names_both_keys(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    other = key_file(tmp_path / "other-host.key")
    path = tmp_path / "foreign.journal"
    path.write_bytes(seal(json.dumps(DOCUMENT).encode(), other, purpose="stream-journal"))
    result = bx("capture", "journal", str(path))
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert f"was sealed under host key {other.key_id}, this host's key is {host_key.key_id}" in message
    assert "--host-key" in message and no_card_in(result)
    code, document = run_json(bx, str(path))
    assert code == 2
    assert document["error"] == "wrong_host_key" and document["sealed_under"] == other.key_id
    assert document["host_key_id"] == host_key.key_id
    opened = bx("capture", "journal", str(path), "--host-key", str(other.path))
    assert opened.exit_code == 0 and f"host key     {other.key_id}" in opened.stdout


def test_the_host_key_variable_names_the_key(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    other = key_file(tmp_path / "named.key")
    path = tmp_path / "a.journal"
    path.write_bytes(seal(b"{}", other, purpose="spool"))
    assert bx("capture", "journal", str(path)).exit_code == 2
    assert bx("capture", "journal", str(path), env={"BITEXACT_HOST_KEY": str(other.path)}).exit_code == 0


def test_with_no_host_key_nothing_opens_and_no_key_is_made(bx: Any, home: Path, tmp_path: Path) -> None:
    other = key_file(tmp_path / "elsewhere.key")
    path = tmp_path / "a.journal"
    path.write_bytes(seal(b"{}", other, purpose="spool"))
    default = home.parent / (home.name + ".host.key")
    result = bx("capture", "journal", str(path))
    assert result.exit_code == 2 and "no host key" in result.stderr
    assert not default.exists(), "opening a journal never makes a host key"
    loose = tmp_path / "loose.key"
    loose.write_text(secrets.token_hex(32) + "\n")
    loose.chmod(0o644)
    refused = bx("capture", "journal", str(path), "--host-key", str(loose))
    assert refused.exit_code == 2 and "owner-only" in " ".join(refused.stderr.split())


def test_files_that_are_not_sealed(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(DOCUMENT))
    result = bx("capture", "journal", str(plain))
    assert result.exit_code == 2 and "not a sealed journal" in result.stderr and no_card_in(result)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert "it is empty" in bx("capture", "journal", str(empty)).stderr
    code, document = run_json(bx, str(plain))
    assert code == 2 and document["error"] == "not_sealed" and document["opened"] is False
    missing = bx("capture", "journal", str(tmp_path / "missing.bxj"))
    assert missing.exit_code == 2 and "cannot read" in missing.stderr


def test_a_flipped_byte_in_any_chunk_is_damage_naming_the_chunk(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    path = sealed_file(tmp_path / "a.journal", host_key, [b"first " + VISA.encode(), b"second"])
    data = path.read_bytes()
    spans = frames(data)
    assert len(spans) == 4  # header, two data chunks, the final chunk
    for index, (start, end) in enumerate(spans[1:]):
        for position in range(start + 4, end):  # the nonce and the sealed bytes of chunk `index`
            damaged = bytearray(data)
            damaged[position] ^= 0x01
            path.write_bytes(bytes(damaged))
            code, document = run_json(bx, str(path))
            assert code == 2, position
            assert document["error"] == "damaged"
            assert f"chunk {index} fails authentication" in document["message"]


def test_no_flipped_byte_anywhere_opens_as_whole(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    path = sealed_file(tmp_path / "a.journal", host_key, [b"first " + VISA.encode(), b"second"])
    data = path.read_bytes()
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x80
        path.write_bytes(bytes(damaged))
        result = bx("capture", "journal", str(path))
        # A length made larger reads as a file that ends early (exit 1); anything else is refused (2).
        assert result.exit_code in (1, 2), position
        assert no_card_in(result)


def test_a_file_cut_at_every_byte(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    chunks = [b"first " + VISA.encode(), b"second chunk"]
    path = sealed_file(tmp_path / "a.journal", host_key, chunks)
    data = path.read_bytes()
    spans = frames(data)
    header_end = spans[0][1]
    for cut in range(len(data)):
        path.write_bytes(data[:cut])
        code, document = run_json(bx, str(path))
        if cut < header_end:
            assert code == 2, cut
            assert document["error"] == ("not_sealed" if cut < len(MAGIC) else "cut_short")
            continue
        assert code == 1, cut
        whole = [i for i, (_, end) in enumerate(spans[1:]) if end <= cut]  # chunks entirely present
        assert document["complete"] is False and document["chunks"] == len(whole)
        assert document["bytes"] == sum(len(chunks[i]) for i in whole if i < len(chunks))
        if cut in (end for _, end in spans):
            assert "its final chunk is missing" in document["ending"] or "holds no chunk" in document["ending"]
        else:
            assert document["ending"].startswith(f"cut short inside chunk {len(whole)}")
    path.write_bytes(data)
    assert run_json(bx, str(path))[0] == 0


def test_a_writer_that_died_before_finishing(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    path = sealed_file(tmp_path / "a.journal", host_key, [b'{"n": 1}'], finish=False)
    result = bx("capture", "journal", str(path))
    assert result.exit_code == 1
    assert "cut short after chunk 0: its final chunk is missing" in result.stdout
    assert "was cut short" in result.stderr


# -- writing the content out --------------------------------------------------------


def test_output_writes_the_exact_bytes_owner_only_and_never_overwrites(
    bx: Any, host_key: HostKey, tmp_path: Path
) -> None:
    payload = json.dumps(DOCUMENT).encode() + b"\n\x00tail"
    path = tmp_path / "a.journal"
    path.write_bytes(seal(payload, host_key, purpose="stream-journal"))
    out = tmp_path / "out.bin"
    result = bx("capture", "journal", str(path), "-o", str(out))
    assert result.exit_code == 0
    assert out.read_bytes() == payload
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert no_card_in(result), "-o writes the content to the file, not to the terminal"
    out.write_bytes(b"kept")
    out.chmod(0o644)
    refused = bx("capture", "journal", str(path), "-o", str(out))
    assert refused.exit_code == 2 and "--force" in refused.stderr
    assert out.read_bytes() == b"kept"
    forced = bx("capture", "journal", str(path), "-o", str(out), "--force")
    assert forced.exit_code == 0 and out.read_bytes() == payload
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


def test_output_never_replaces_the_journal_itself(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    path = tmp_path / "a.journal"
    sealed = seal(b"{}", host_key, purpose="spool")
    path.write_bytes(sealed)
    result = bx("capture", "journal", str(path), "-o", str(path), "--force")
    assert result.exit_code == 2 and "the journal itself" in result.stderr
    assert path.read_bytes() == sealed


def test_output_of_a_file_cut_short_writes_what_it_holds(bx: Any, host_key: HostKey, tmp_path: Path) -> None:
    path = sealed_file(tmp_path / "a.journal", host_key, [b"one", b"two"], finish=False)
    out = tmp_path / "out.bin"
    code, document = run_json(bx, str(path), "-o", str(out))
    assert code == 1 and out.read_bytes() == b"onetwo" and document["written_to"] == str(out)


def test_help_teaches_with_an_example(bx: Any) -> None:
    result = bx("capture", "journal", "--help")
    assert result.exit_code == 0
    assert "Examples:" in result.stdout and "bitexact capture journal FILE --show" in result.stdout
    assert "card numbers" in result.stdout
    for code in ("0  opened", "1  opened, but cut short", "2  cannot be opened"):
        assert code in result.stdout


# -- SDK slots files: one journal per slot --------------------------------


def _slots_with_two_entries(home: Path, key: HostKey) -> tuple[Path, int, int]:
    from bitexact.recording.journal_slots import JournalSlots

    slots = JournalSlots(home, key, "run-slots", count=4)
    first = slots.write(JournalRecord("run-slots", 1, "tool_call", {}), json.dumps(DOCUMENT).encode())
    second = slots.write(JournalRecord("run-slots", 2, "marker", {}), b'{"note":"second"}')
    slots.close(remove=False)
    assert first is not None and second is not None
    return slots.path, first, second


def test_a_slots_file_is_listed_slot_by_slot_without_its_content(bx: Any, home: Path, host_key: HostKey) -> None:
    path, first, second = _slots_with_two_entries(home, host_key)
    result = bx("capture", "journal", str(path))
    assert result.exit_code == 0, result.output
    assert "2 full slot(s)" in result.output
    assert f"#{first}" in result.output and "kind tool_call" in result.output and "kind marker" in result.output
    assert VISA[:4] not in result.output and "second" not in result.output
    listed = json.loads(bx("capture", "journal", str(path), "--json").output)
    assert [(s["slot"], s["sdk_entry"]["seq"], s["opened"]) for s in listed["full_slots"]] == [
        (first, 1, True), (second, 2, True)]


def test_one_slot_opens_as_a_journal_and_shows_on_request(bx: Any, home: Path, host_key: HostKey) -> None:
    path, first, _ = _slots_with_two_entries(home, host_key)
    shown = bx("capture", "journal", f"{path}#{first}", "--show")
    assert shown.exit_code == 0, shown.output
    assert SPACED_VISA in shown.output and "run-slots" in shown.output
    free = bx("capture", "journal", f"{path}#3")
    assert free.exit_code == 2 and "holds no journal" in free.output
    refused = bx("capture", "journal", str(path), "--show")
    assert refused.exit_code == 2 and "#N" in refused.output


def test_a_slot_torn_by_a_kill_is_named_and_the_listing_exits_1(bx: Any, home: Path, host_key: HostKey) -> None:
    path, first, second = _slots_with_two_entries(home, host_key)
    from bitexact.recording.journal_slots import SLOT_BYTES

    with open(path, "r+b") as f:  # the second write stopped part way: its tail never reached the disk
        f.seek(second * SLOT_BYTES + 80)
        f.write(b"\0" * 40)
    result = bx("capture", "journal", str(path))
    assert result.exit_code == 1
    assert f"#{second:<4} does not open" in result.output and "kind tool_call" in result.output
