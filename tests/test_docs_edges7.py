"""The docs' concrete claims checked against the running code (the seventh review).

Each test quotes a claim a document, a --help text or a docstring made that the code did not do (the
document or the code was then corrected) and asserts the true behaviour, so the two cannot drift apart
again unseen.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sdk.servers import HandlerBase, serve_seen


def bx(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The real ``bitexact`` command on ``home``, with no inherited capture settings."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_")}
    environment.update({"BITEXACT_HOME": str(home), **env})
    return subprocess.run([str(Path(sys.executable).with_name("bitexact")), *args], env=environment,
                          capture_output=True, text=True, timeout=60, check=False)


def _doc(name: str) -> str:
    """A document of the repository with its lines joined, so a claim is found across a line break."""
    return " ".join((Path(__file__).resolve().parents[1] / name).read_text(encoding="utf-8").split())


class _Sized(HandlerBase):
    def do_GET(self) -> None:
        self._send(200, b"hello world " * 512, "text/plain")


def test_a_streamed_response_left_open_is_recorded_when_its_run_ends(sdk_home: Path) -> None:
    """docs/sdk.md's "Limits (known)" said "A streamed response that the agent never closes and never reads
    to the end is never recorded", against its own HTTP section (and the code since a fix): it is recorded
    when its run ends, as it stands (complete false)."""
    import httpx
    import requests

    import bitexact
    from bitexact.store import open_store

    with serve_seen(_Sized) as (url, _):
        with bitexact.run(run_id="left-open") as r:
            client = bitexact.wrap(httpx.Client())
            left = [client.send(client.build_request("GET", url + "/httpx"), stream=True),  # never read
                    bitexact.wrap(requests.Session()).get(url + "/requests", stream=True)]
        for response in left:  # closed only once the run has ended
            response.close()
    assert r.sealed
    with open_store(sdk_home) as store:
        calls = [e["data"] for e in store.entries("left-open") if e["kind"] == "http_call"]
    assert sorted(c["request"]["path"] for c in calls) == ["/httpx", "/requests"]
    assert all(c["response"]["complete"] is False for c in calls), calls
    assert "never reads to the end is never recorded" not in _doc("docs/sdk.md")


def test_capture_backfill_of_a_run_in_a_data_directory_holding_no_store_makes_no_store(home: Path) -> None:
    """docs/store.md: "Only commands that record make a store"; `capture backfill --run RUN` in a data
    directory holding none made an empty store and its lock file before saying there is no such run."""
    home.mkdir()
    result = bx(home, "capture", "backfill", "--run", "no-such-run", "--by", "dpo:alice")
    assert result.returncode == 1, result.stdout + result.stderr  # capture-verify.md: 1, no such run (the contract)
    assert "no run 'no-such-run'" in result.stderr, result.stderr
    assert sorted(os.listdir(home)) == [], "backfill of an unknown run made a store"


@pytest.mark.parametrize("command", [["repair", "RUN", "--by", "ops", "--note", "host lost power"],
                                     ["redact", "RUN", "--field", "1:note", "--by", "dpo", "--reason", "erasure"]])
def test_an_unusable_capture_policy_stops_repair_and_redact_with_exit_1(
        sdk_home: Path, tmp_path: Path, command: list[str]) -> None:
    """docs/architecture.md: with an unusable policy "the CLI prints one line and exits 1"; repair and redact
    exited 2, which the README keeps for what a command was given (a setting is not an argument)."""
    import bitexact
    from bitexact.sdk.stores import close_stores

    with bitexact.run(run_id="policy-broken") as r:
        r.marker("kept")
    close_stores()
    args = ["policy-broken" if a == "RUN" else a for a in command]
    result = bx(sdk_home, *args, BITEXACT_CAPTURE_POLICY=str(tmp_path / "no-such-policy.json"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith("error: capture policy:") and result.stderr.count("\n") == 1, result.stderr


def test_sessions_unify_refuses_an_output_that_is_a_named_pipe(home: Path, tmp_path: Path) -> None:
    """README: "an `-o` that exists and is not a regular file (a device such as `/dev/null`, a named pipe)"
    is refused with exit 2; `sessions unify -o` renamed aw_session.jsonl over it (over /dev/null too)."""
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    result = bx(home, "sessions", "unify", str(artifacts), "-o", str(pipe))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not a regular file" in result.stderr, result.stderr
    assert pipe.is_fifo(), "the named pipe was replaced by the file"


def test_a_failed_unify_never_removes_a_named_pipe_given_as_its_output(tmp_path: Path) -> None:
    """unify() removes a previous output when it fails, so a stale file cannot be uploaded; it removed a
    named pipe (or a device such as /dev/null) given as the output, which is no previous output."""
    from bitexact.errors import BitExactError
    from bitexact.sessions.unify import unify

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(BitExactError):  # no artifact directory: the collection fails
        unify(tmp_path / "no-such-artifacts", pipe)
    assert pipe.is_fifo(), "a failed unify removed the named pipe"


def test_capture_journal_force_never_replaces_a_named_pipe(sdk_home: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """README: an `-o` that exists and is not a regular file is refused (exit 2); `capture journal -o PIPE
    --force` renamed the journal's plaintext over the named pipe (over /dev/null too)."""
    from store.lock_holder import held_by_another_process

    import bitexact
    from bitexact.recording.journal import journal_dir
    from bitexact.sdk.stores import close_stores

    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    with bitexact.run(run_id="journaled") as r:  # noqa: SIM117 - the store is let go before the run's exit
        with held_by_another_process(sdk_home / "bitexact.db.lock"):
            assert r.marker("kept in a journal").gap is not None  # the store stayed locked: journaled
    close_stores()
    journal = next(journal_dir(sdk_home, "journaled").glob("*.bxj"))
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    result = bx(sdk_home, "capture", "journal", str(journal), "-o", str(pipe), "--force")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not a regular file" in result.stderr, result.stderr
    assert pipe.is_fifo(), "the named pipe was replaced by the journal's plaintext"


def test_capture_keygen_refuses_a_named_pipe_with_exit_2(home: Path, tmp_path: Path) -> None:
    """README: an `-o` that exists and is not a regular file is refused with exit 2; `capture keygen -o PIPE`
    said the key file "already exists" and exited 1."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    result = bx(home, "capture", "keygen", "-o", str(pipe))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not a regular file" in result.stderr and pipe.is_fifo(), result.stderr
