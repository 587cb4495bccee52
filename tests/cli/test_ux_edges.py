"""The command line as a user meets it: regression tests, each for a bug a review found.

Most tests run the real `bitexact` console script in a subprocess with
BITEXACT_HOME pointing at a directory under the test's tmp_path.
"""

from __future__ import annotations

import json
import shlex
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli.real_command import clear_bitexact_env, run_bitexact, run_on_terminal
from click.testing import CliRunner

from bitexact.cli import cli
from bitexact.crypto.ed25519 import SigningKey

CLAUDE_LOG = Path(__file__).resolve().parents[1] / "sessions" / "fixtures" / "claude" / \
    "errors_retry_and_denials_without_result.jsonl"


bx = run_bitexact


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_bitexact_env(monkeypatch)


def _runs(home: Path) -> list[dict[str, object]]:
    listed = bx(home, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


# -- the demo's "verify it anywhere" line ------------------------------------------------------------


def test_demo_verify_line_runs_as_printed_when_home_has_a_space(tmp_path: Path) -> None:
    """`bitexact demo` prints `verify it anywhere: bitexact verify PATH ...` to be copied whole
    (cli/demo.py: "The verdict and the command are meant to be copied whole"). The bundle path is not
    shell-quoted, so with a space in BITEXACT_HOME the copied command is `bitexact verify /a/with` plus
    an extra argument `space/...`: click refuses it (exit 2, "Got unexpected extra arguments")."""
    home = tmp_path / "my data" / "bitexact home"
    demo = bx(home, "demo")
    assert demo.returncode == 0, demo.stderr
    line = next(text for text in demo.stdout.splitlines() if text.startswith("verify it anywhere: "))
    argv = shlex.split(line.removeprefix("verify it anywhere: "))
    assert argv[0] == "bitexact"
    verified = bx(home, *argv[1:])
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("OK: ")


@pytest.mark.parametrize("directory", ["data[bold]x", "data[/]x"])
def test_demo_prints_the_real_bundle_path_when_home_has_brackets(tmp_path: Path, directory: str) -> None:
    """The demo prints `bundle: PATH` through rich markup without escaping PATH: `[bold]` in the data
    directory's name vanishes from the printed path (it names a file that does not exist), and `[/]`
    raises rich.errors.MarkupError - a traceback, exit 1 - after the run was already recorded."""
    home = tmp_path / directory
    demo = bx(home, "demo")
    assert "Traceback" not in demo.stderr, demo.stderr
    assert demo.returncode == 0, demo.stderr
    bundle = next(text for text in demo.stdout.splitlines() if text.startswith("bundle: "))
    path = bundle.removeprefix("bundle: ")
    assert Path(path).is_file(), f"the printed bundle path does not exist: {path!r}"
    assert str(home) in path


# -- Settings: a value BitExact cannot use is refused with a message naming the variable ---------------


@pytest.mark.parametrize("setting", [("BITEXACT_CHECKPOINT_EVERY", "abc"), ("BITEXACT_CHECKPOINT_SECONDS", "-1")])
def test_demo_refuses_a_bad_checkpoint_setting_in_one_line(tmp_path: Path, setting: tuple[str, str]) -> None:
    """README Settings: "A value BitExact cannot use is refused with a message naming the variable."
    `bitexact demo` with BITEXACT_CHECKPOINT_EVERY=abc dies with a Python traceback ending in
    `bitexact.config.SettingError: ...`: SettingError is a ValueError, not a BitExactError, so the
    CLI group's handler lets it through."""
    name, value = setting
    demo = bx(tmp_path / "home", "demo", "--json", **{name: value})
    assert demo.returncode != 0
    assert "Traceback" not in demo.stderr, demo.stderr
    assert demo.stderr.startswith("error: "), demo.stderr
    assert name in demo.stderr
    # Under --json stdout holds one document, the error's (docs/cli.md, "--json")
    assert json.loads(demo.stdout) == {"error": demo.stderr.removeprefix("error: ").rstrip("\n"), "exit": 1}


def test_import_session_refuses_a_bad_checkpoint_setting_in_one_line(tmp_path: Path) -> None:
    """The same for `bitexact import session LOG`: BITEXACT_CHECKPOINT_EVERY=abc gives a traceback
    (app.recorder() raises SettingError; the command catches only BitExactError)."""
    imported = bx(tmp_path / "home", "import", "session", str(CLAUDE_LOG), "--json", BITEXACT_CHECKPOINT_EVERY="abc")
    assert imported.returncode != 0
    assert "Traceback" not in imported.stderr, imported.stderr
    assert imported.stderr.startswith("error: "), imported.stderr
    assert "BITEXACT_CHECKPOINT_EVERY" in imported.stderr


def test_bitexact_home_that_is_a_file_is_refused_naming_the_variable(tmp_path: Path) -> None:
    """BITEXACT_HOME naming a file is refused by click as "Invalid value for '--home'": the user set
    the environment variable, never typed --home, and the message does not name BITEXACT_HOME as the
    README's Settings promise ("refused with a message naming the variable")."""
    not_a_dir = tmp_path / "data"
    not_a_dir.write_text("I am a file\n")
    listed = bx(not_a_dir, "runs")
    assert listed.returncode != 0
    assert "BITEXACT_HOME" in listed.stderr, listed.stderr


# -- --json output on a terminal -----------------------------------------------------------------------


def test_demo_json_writes_nothing_but_the_document_to_a_terminal_stdout(tmp_path: Path) -> None:
    """`bitexact demo --json` shows its `recording a claims-agent run…` spinner on the stdout console
    (cli/demo.py: `console.status`), so on a terminal stdout receives cursor-hiding escapes and spinner
    frames before the JSON. print_json: "Machine-readable output on stdout, one document";
    cli/progress.py: progress is drawn "on stderr ... (stdout stays clean for scripts)"."""
    code, shown, err = run_on_terminal(tmp_path / "home", "demo", "--json", stderr_too=False, TERM="xterm-256color")
    assert code == 0, err
    out = shown.replace("\r\n", "\n")
    assert "\x1b" not in out, repr(out[:200])
    json.loads(out)


# -- the demo on a machine like a user's ----------------------------------------------------------------


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but not listening: a connection to it is refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


def test_demo_works_with_an_http_proxy_in_the_environment(tmp_path: Path, closed_port: int) -> None:
    """The demo's HTTP call goes to a claims API it serves on 127.0.0.1 (`demo --help`), but its
    httpx client honours HTTP_PROXY, so with a proxy set (as on many company machines) the loopback
    request is sent to the proxy: httpx.ConnectError traceback, exit 1, and a sealed 7-step run with a
    failed http_call is left in the store, listed by `bitexact runs` like a real one."""
    home = tmp_path / "home"
    proxy = f"http://127.0.0.1:{closed_port}"
    demo = bx(home, "demo", "--json", HTTP_PROXY=proxy, http_proxy=proxy)
    assert "Traceback" not in demo.stderr, demo.stderr[-2000:]
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert json.loads(demo.stdout)["ok"] is True


def test_demo_with_exports_blocked_is_one_error_line(tmp_path: Path) -> None:
    """A file where `<home>/exports` should be (an older layout, a stray file) makes `bitexact demo`
    end in a FileExistsError traceback from run_demo's mkdir - after the run was recorded."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "exports").write_text("not a directory\n")
    demo = bx(home, "demo")
    assert "Traceback" not in demo.stderr, demo.stderr
    assert demo.returncode != 0
    assert demo.stderr.startswith("error: "), demo.stderr
    assert "exports" in demo.stderr


def test_first_demo_survives_another_process_creating_the_recorder_key(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Two `bitexact demo` (or any first recordings) started at once on a fresh data directory race
    to create the recorder key: KeyStore.current_or_init checks `exists()`, then init() saves with
    O_EXCL, and the loser fails with "keys/recorder.key already exists: refusing to overwrite a key"
    (exit 1) although a perfectly good key is now there. The interleaving is made deterministic here:
    the other process's key lands between the check and the save."""
    home = tmp_path / "home"
    key_path = home / "keys" / "recorder.key"
    real_generate = SigningKey.generate.__func__  # type: ignore[attr-defined]

    def racing_generate(cls: type[SigningKey]) -> SigningKey:
        if not key_path.exists():  # the other `bitexact demo` wins the race
            real_generate(cls).save(key_path)
        return real_generate(cls)

    monkeypatch.setattr(SigningKey, "generate", classmethod(racing_generate))
    result = CliRunner().invoke(cli, ["demo", "--json"], env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ok"] is True


# -- -o never overwrites one of BitExact's own keys -----------------------------------------------------


def test_o_refuses_the_capture_key_in_force(tmp_path: Path) -> None:
    """README: "An `-o` that names one of BitExact's own files (the store and its WAL, a key, a journal,
    the host key) is refused with exit 2". The capture key BITEXACT_CAPTURE_KEY names is not in
    AppContext.refuse_own_file's list: `bitexact keys trust-file -o $BITEXACT_CAPTURE_KEY` replaces it
    with a trust file (exit 0), after which the policy cannot load and no hash-only field committed
    under that key can ever be opened again."""
    home = tmp_path / "home"
    capture_key = tmp_path / "secrets" / "capture.key"
    capture_key.parent.mkdir()
    made = bx(home, "capture", "keygen", "-o", str(capture_key))
    assert made.returncode == 0, made.stderr
    original = capture_key.read_bytes()
    assert bx(home, "keys", "init").returncode == 0
    written = bx(home, "keys", "trust-file", "-o", str(capture_key), BITEXACT_CAPTURE_KEY=str(capture_key))
    assert capture_key.read_bytes() == original, "the capture key was overwritten"
    assert written.returncode == 2, written.stdout + written.stderr
