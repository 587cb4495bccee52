"""`bitexact redact` whose removal fails after its claim landed (a full disk): it says the claim is recorded.

The redaction is write-ahead: the claim is appended, then the values are
removed. On a nearly full disk the claim fits and the removal does not; the
command printed only the store's "database or disk is full" with exit 2 (bad
input), never that a claim is on the chain nor what finishes it.

The disk is a real one: a tmpfs mounted for the test (tests run as root in
CI), filled to a few KiB short of full. Where mounting is impossible, the
removal is made to fail the way the store reports a full disk.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bitexact.cli import cli
from bitexact.crypto.keystore import KeyStore
from bitexact.errors import StoreError
from bitexact.recording import Recorder
from bitexact.store import DB_NAME, open_store

DISK = "32m"
"""The tmpfs's size: room for the WAL the store grows on its first commit, and for the run."""
STEPS = 60
"""Steps of the run redacted: each try of the search below redacts the next one."""


def _mounted(point: Path) -> bool:
    """Mount a tmpfs of :data:`DISK` at ``point``; False when this process may not mount."""
    point.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK}", "tmpfs", str(point)],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path | None]:
    """A small real file system to fill (unmounted afterwards), or None where none can be mounted."""
    point = tmp_path / "disk"
    if not _mounted(point):
        yield None
        return
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], capture_output=True, check=False)


def _record(home: Path) -> str:
    """A sealed run of :data:`STEPS` tool calls, each holding an account number to redact."""
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="accounts")
        for i in range(STEPS):
            writer.append("tool_call", {"tool": "t", "args": [i], "result": {"account": f"ACC-{i}", "text": "q" * 200}})
        writer.seal()
        return writer.run_id
    finally:
        store.close()


def _invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"},
                              catch_exceptions=False)


def _fill(disk: Path, leave_kib: int) -> Path:
    """Take all of ``disk``'s free space but ``leave_kib`` KiB (allocated, so the blocks are really taken)."""
    filler = disk / "filler"
    free = os.statvfs(disk)
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.posix_fallocate(fd, 0, max(1, free.f_bavail * free.f_frsize - leave_kib * 1024))
    finally:
        os.close(fd)
    return filler


def _redact_on_a_full_disk(disk: Path, home: Path, run_id: str) -> tuple[Result, str]:
    """Redact one step after another, each time with a little more room left, until a claim lands whose
    removal the disk refuses; the result and the field it claimed. Tries that fit whole, or that cannot
    even append the claim, are set right (resumed) before the next."""
    for attempt, leave in enumerate(range(16, 400, 4)):
        field = f"{attempt + 1}:result.account"
        filler = _fill(disk, leave)
        try:
            result = _invoke(home, "redact", run_id, "--field", field, "--by", "dpo:a", "--reason", f"leave {leave}")
        finally:
            filler.unlink()
        if "is recorded on" in result.output:
            return result, field
        assert _invoke(home, "redact", run_id, "--resume").exit_code == 0
    raise AssertionError("no free space left for the claim but not the removal")


def _redact_with_the_removal_failing(home: Path, run_id: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Result, str]:
    """Where no disk can be mounted: the removal raises what the store raises on a full disk."""
    import bitexact.cli.audit as audit

    def full(*_: object) -> None:
        raise StoreError(f"{home / DB_NAME}: database or disk is full")

    monkeypatch.setattr(audit, "apply_pending", full)
    field = "1:result.account"
    result = _invoke(home, "redact", run_id, "--field", field, "--by", "dpo:a", "--reason", "erasure")
    monkeypatch.undo()
    return result, field


def test_a_removal_the_full_disk_refused_says_the_claim_is_recorded_and_names_resume(
    disk: Path | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = (disk or tmp_path) / "home"
    run_id = _record(home)
    if disk is not None:
        result, field = _redact_on_a_full_disk(disk, home, run_id)
    else:
        result, field = _redact_with_the_removal_failing(home, run_id, monkeypatch)
    said = " ".join(result.output.split())
    assert result.exit_code == 1, said  # an operation that failed, not input that does not read (2)
    assert f"the redaction of {field} is recorded on {run_id} (its claim is on the chain)" in said
    assert "the removal of the values did not finish" in said and "database or disk is full" in said
    assert f"`bitexact redact --resume {run_id}` finishes it" in said
    # What it says is so: the claim is on the chain, its value still stored, and health names it.
    verdict = _invoke(home, "verify", run_id)
    assert verdict.exit_code == 1 and f"redaction of {field} recorded but not applied" in verdict.output
    health = _invoke(home, "health", "--json")
    [finding] = [f for f in json.loads(health.output)["findings"] if f["name"] == "redaction-pending"]
    assert finding["run_id"] == run_id and finding["details"]["fields"] == [field]
    # ... and what it names finishes it.
    resumed = _invoke(home, "redact", run_id, "--resume")
    assert resumed.exit_code == 0 and "1 pending redaction(s) applied" in resumed.output
    assert _invoke(home, "verify", run_id).exit_code == 0
    after = json.loads(_invoke(home, "health", "--json").output)["findings"]
    assert [f for f in after if f["name"] == "redaction-pending"] == []


@pytest.mark.parametrize(("raised", "code", "why"), [
    (OSError(28, "No space left on device"), 1, "OSError: [Errno 28] No space left on device"),
    (KeyboardInterrupt(), 130, "interrupted"),
])
def test_any_failure_after_the_claim_says_it_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: BaseException, code: int, why: str
) -> None:
    """Not only the store's errors: a journal directory that cannot be cleared (an OSError) went out as a
    traceback, and Ctrl-C as a bare "interrupted", though the claim is on the chain either way."""
    import bitexact.cli.audit as audit

    def stopped(*_: object) -> None:
        raise raised

    home = tmp_path / "home"
    run_id = _record(home)
    monkeypatch.setattr(audit, "apply_pending", stopped)
    result = _invoke(home, "redact", run_id, "--field", "2:result.account", "--by", "dpo:a", "--reason", "r")
    said = " ".join(result.output.split())
    assert result.exit_code == code, said
    assert f"the redaction of 2:result.account is recorded on {run_id}" in said and why in said
    assert f"bitexact redact --resume {run_id}" in said
