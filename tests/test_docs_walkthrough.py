"""README.md, docs/sdk.md, docs/store.md and docs/bundle-format.md followed literally, as a new user would.

Each test quotes a claim the walkthrough found false (the document or the code
was then corrected) and asserts the true behaviour, so the two cannot drift
apart again unseen.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# README.md, Settings: "A value BitExact cannot use is refused with a message naming the variable"; for
# BITEXACT_HOME: "(a file there, an empty `--home` or a name the file system cannot hold is refused, naming
# the variable; ...)".
TOO_LONG = "z" * 300  # one name past every Linux file system's 255 bytes


@pytest.fixture
def sdk_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No inherited SDK settings, the capture policy off; the SDK's shared stores closed afterwards."""
    for name in ("BITEXACT_HOST_KEY", "BITEXACT_CONTEXT", "BITEXACT_DRAIN_TIMEOUT", "BITEXACT_CAPTURE_KEY",
                 "BITEXACT_QUEUE_MAX_BYTES", "BITEXACT_JOURNAL_SMALL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    yield
    from bitexact.sdk.stores import close_stores

    close_stores()


def _start_gap(strict: bool) -> str:
    """What an SDK run says when it cannot start: the gap's detail, or strict mode's error."""
    import bitexact
    from bitexact.sdk import RecordingError

    if strict:
        with pytest.raises(RecordingError) as refused:
            with bitexact.run(name="walkthrough", strict=True):
                pass
        return str(refused.value)
    with bitexact.run(name="walkthrough") as r:
        pass
    assert r.run_id is None and len(r.failures.gaps) == 1
    return r.failures.gaps[0].detail


@pytest.mark.parametrize("strict", [False, True])
def test_sdk_run_names_bitexact_home_when_it_is_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sdk_env: None, strict: bool) -> None:
    """An SDK run under a BITEXACT_HOME that is a file said "<path> is a file, not a directory" without
    naming the variable (only `bitexact` and a bare open_store() named it)."""
    a_file = tmp_path / "not-a-directory"
    a_file.write_text("x")
    monkeypatch.setenv("BITEXACT_HOME", str(a_file))
    said = _start_gap(strict)
    assert "BITEXACT_HOME" in said and "is a file" in said, said


def test_open_store_refuses_a_bitexact_home_name_too_long_naming_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """open_store() under a BITEXACT_HOME too long for the file system raised a bare OSError
    ("[Errno 36] File name too long: ..."), not a StoreError, and named no variable."""
    from bitexact.store import StoreError, open_store

    monkeypatch.setenv("BITEXACT_HOME", str(tmp_path / TOO_LONG))
    with pytest.raises(StoreError) as refused:
        open_store().close()
    assert "BITEXACT_HOME" in str(refused.value), str(refused.value)


@pytest.mark.parametrize("strict", [False, True])
def test_sdk_run_names_bitexact_home_when_the_name_is_too_long(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sdk_env: None, strict: bool) -> None:
    """An SDK run under a BITEXACT_HOME too long for the file system declared "OSError: [Errno 36] File
    name too long" without naming the variable."""
    monkeypatch.setenv("BITEXACT_HOME", str(tmp_path / TOO_LONG))
    said = _start_gap(strict)
    assert "BITEXACT_HOME" in said, said


def test_open_store_names_bitexact_home_when_its_directory_cannot_be_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A BITEXACT_HOME under a file ("cannot create the store directory <path>: Not a directory") did not
    name the variable either."""
    from bitexact.store import StoreError, open_store

    (tmp_path / "a-file").write_text("x")
    monkeypatch.setenv("BITEXACT_HOME", str(tmp_path / "a-file" / "home"))
    with pytest.raises(StoreError) as refused:
        open_store().close()
    assert "BITEXACT_HOME" in str(refused.value), str(refused.value)


def test_open_store_with_an_explicit_directory_names_the_directory_not_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side of the rule: a directory passed in code is named as passed, never as the variable."""
    from bitexact.store import StoreError, open_store

    monkeypatch.setenv("BITEXACT_HOME", str(tmp_path / "elsewhere"))
    a_file = tmp_path / "given"
    a_file.write_text("x")
    with pytest.raises(StoreError) as refused:
        open_store(a_file).close()
    assert "BITEXACT_HOME" not in str(refused.value) and str(a_file) in str(refused.value)


def _large_record_warnings(home: Path, caplog: pytest.LogCaptureFixture) -> list[str]:
    """Record one 2 MiB entry (it must be journaled under the host key) and return the SDK's warnings."""
    import bitexact

    caplog.set_level(logging.WARNING, logger="bitexact.sdk")
    with bitexact.run(name="host-key", home=home) as r:
        handle = r.record("tool_call", {"tool": "large", "args": ["x" * (2 << 20)]})
        assert handle.result()["kind"] == "tool_call"  # written all the same, in the call
    return [record.getMessage() for record in caplog.records
            if record.name == "bitexact.sdk" and record.levelno >= logging.WARNING]


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
def test_an_unusable_bitexact_host_key_is_named_with_what_is_wrong(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sdk_env: None, caplog: pytest.LogCaptureFixture) -> None:
    """docs/sdk.md: the host key "is `BITEXACT_HOST_KEY` or `<data dir>.host.key` ... refused when others
    may read it"; README.md: refused "with a message naming the variable". The one warning said only
    "cannot journal large entries (HostKeyError)": neither the variable nor what is wrong with the file."""
    key = tmp_path / "loose.host.key"
    key.write_text("0" * 64 + "\n")
    key.chmod(0o644)
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(key))
    warnings = [w for w in _large_record_warnings(home, caplog) if "cannot journal large entries" in w]
    assert len(warnings) == 1, warnings
    assert "BITEXACT_HOST_KEY" in warnings[0] and "owner-only" in warnings[0], warnings[0]
    assert "0" * 64 not in warnings[0]  # the key itself is never said


def test_the_default_host_key_problem_is_said_without_naming_an_unset_variable(
        home: Path, monkeypatch: pytest.MonkeyPatch, sdk_env: None, caplog: pytest.LogCaptureFixture) -> None:
    """With BITEXACT_HOST_KEY unset, the warning says what is wrong with <data dir>.host.key itself."""
    key = Path(f"{home}.host.key")
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text("not hex\n")
    key.chmod(0o600)
    warnings = [w for w in _large_record_warnings(home, caplog) if "cannot journal large entries" in w]
    assert len(warnings) == 1, warnings
    assert str(key) in warnings[0] and "hex" in warnings[0] and "BITEXACT_HOST_KEY" not in warnings[0], warnings


@pytest.mark.parametrize("strict", [False, True])
def test_sdk_run_refuses_an_empty_home_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sdk_env: None, strict: bool) -> None:
    """README.md: "an empty `--home` ... is refused" (Path("") is the working directory). `bitexact.run(home="")`
    put a store, the recorder key and journals in whatever directory the agent ran in."""
    import bitexact
    from bitexact.sdk import SdkArgumentError

    monkeypatch.chdir(tmp_path)
    if strict:
        with pytest.raises(SdkArgumentError) as refused:
            with bitexact.run(name="empty-home", home="", strict=True):
                pass
        assert refused.value.field == "home"
    else:
        with bitexact.run(name="empty-home", home=" ") as r:
            pass
        assert r.run_id is None and [list(gap.fields or {}) for gap in r.failures.gaps] == [["home"]], \
            r.failures.gaps
    assert list(tmp_path.iterdir()) == [], "a store or key landed in the working directory"
