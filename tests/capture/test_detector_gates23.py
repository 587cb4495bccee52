"""perf23: the credentials detector's gates change no finding.

``CredentialsDetector.find`` asks, before each pass, whether the text holds a character every match of the pass's
patterns holds (``:`` before ``NAME: VALUE``, a blank before ``Bearer TOKEN``, ``=`` before ``NAME=VALUE``...) and
skips the pass when it does not. Its passes run ungated when :data:`EVERY_LITERAL` answers the gates (every literal
held): the reference. Over every text the capture tests hold (each string constant of tests/capture/*.py: the leak
rows, the false-positive rows of audits 15 and 16, the vectors), the capture test data files, the hostile rows of
benchmarks/capture_hostile.py, this repository's docs and the detector's own source, and random texts built from
the rules' own literals, the findings (span, token, detector) are the same, alone and joined with NUL as the scanner
joins a step's texts. A gate made too strict (a blank asked as a tab only) fails it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import CredentialsDetector
from bitexact.capture.detectors.credentials import EVERY_LITERAL

ROOT = Path(__file__).resolve().parents[2]
DETECTOR = CredentialsDetector()


def _same(text: str) -> None:
    """The gated passes find what the ungated ones find in ``text``, as a text of its own and as joined texts."""
    for prefilter in (False, True):
        gated = DETECTOR.find(text, Deadline.unlimited(), prefilter=prefilter)
        reference = DETECTOR._find(text, EVERY_LITERAL, Deadline.unlimited(), prefilter)
        assert gated == reference, (text[:200], prefilter)


def _test_strings() -> Iterator[str]:
    """Every string constant (and bytes, decoded) of the capture tests: each leak and false-positive row."""
    for path in sorted((ROOT / "tests" / "capture").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
                yield node.value
            elif isinstance(node, ast.Constant) and isinstance(node.value, bytes) and node.value:
                yield node.value.decode("utf-8", "replace")


def _hostile_rows() -> list[str]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import capture_hostile
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    fragments = {*capture_hostile.FRAGMENTS, *capture_hostile.V12_FRAGMENTS, *capture_hostile.LATEST_FRAGMENTS}
    # Each repeated, as the benchmark repeats it (a few times: the rules read a run of candidates as they read one).
    return sorted(fragment * 5 for fragment in fragments)


def _chunks(text: str, size: int = 2048) -> list[str]:
    """``text`` in pieces, at line starts where one is near: documents hold every literal, a piece only some."""
    pieces, at = [], 0
    while at < len(text):
        end = text.find("\n", at + size)
        end = len(text) if end == -1 else end + 1
        pieces.append(text[at:end])
        at = end
    return pieces


STRINGS = sorted(set(_test_strings()))
DATA = sorted(path for path in (ROOT / "tests" / "capture" / "data").iterdir() if path.is_file())
DOCUMENTS = [
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "src" / "bitexact" / "capture" / "detectors" / "credentials").glob("*.py")),
]


def test_the_corpus_is_read() -> None:
    """The corpus is what it says: thousands of rows, the data files, the hostile rows (a glob gone wrong is no pass)."""
    assert len(STRINGS) > 3000
    assert len(DATA) >= 8
    assert len(_hostile_rows()) > 150


def test_capture_test_strings() -> None:
    """Every string of the capture tests alone, and the rows joined with NUL in runs, as a step's texts are."""
    for text in STRINGS:
        _same(text)
    for start in range(0, len(STRINGS), 7):
        _same("\x00".join(STRINGS[start : start + 7]))


@pytest.mark.parametrize("path", DATA, ids=lambda path: path.name)
def test_capture_data_files(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", "replace")
    _same(text)
    for piece in _chunks(text, 256):
        _same(piece)


def test_hostile_rows() -> None:
    for text in _hostile_rows():
        _same(text)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: path.name)
def test_documents(path: Path) -> None:
    """The docs and the detector's source, in pieces: text and code holding the rules' literals among others."""
    for piece in _chunks(path.read_text(encoding="utf-8")):
        _same(piece)


def test_a_recorded_call() -> None:
    """The joined text of benchmarks/sdk_instructions.py's call (few literals: every gate closed) finds nothing either
    way, and a credential put in it is found gated as ungated."""
    call = "tool\x00args\x00" + "k" * 1000 + "\x00kwargs\x00result\x00answer\x00" + "k" * 24 + "\x00echo\x00status\x00ok"
    _same(call)
    assert DETECTOR.find(call, Deadline.unlimited(), prefilter=True) == []
    for secret in ("Bearer\tabcdef123456", "password=hunter2", "mysql -phunter2", "a: b\npassword: hunter2",
                   "https://bob:hunter2@example.com", "net user bob hunter2", "requirepass\thunter2"):
        text = call.replace("k" * 24, secret)
        _same(text)
        assert DETECTOR.find(text, Deadline.unlimited(), prefilter=True), secret


# For each gate, a text a pass finds a credential in through the least the gate lets through (a tab, not a blank; a
# newline, not a blank; quotes, no blank; "=", no blank): a gate asking more fails its row.
GATE_ROWS = (
    "Bearer\tabcdef123456", "Basic\tdXNlcjpwYXNz", "bearer abcdef123456", "basic dXNlcjpwYXNz", "BEARER abcdef123456",
    "BASIC dXNlcjpwYXNz", "sqlplus scott/tiger", "USERID=scott/tiger", "sqlldr scott/tiger@orcl", "a\tPASSWORD\t'hunter2'", "user\talice\ton\t>hunter2\t~*\t+@all",
    "machine\nh\nlogin\nu\npassword\nhunter2", "userid=scott/tiger", "'htpasswd','-b','f','u','pw'",
    "\"htpasswd\",\"-b\",\"f\",\"u\",\"pw\"", "['nmcli','device','wifi','connect','x','password','pw']",
    "chpasswd\t<<<\tbob:hunter2", "echo\tbob:hunter2|chpasswd", "{\"password\":\"hunter2\"}", "{'password':'hunter2'}",
    "a:b\npassword:hunter2", "https://bob:hunter2@example.com", "mysql\t-phunter2", "--password\thunter2",
    "requirepass\thunter2", "127.0.0.1:6379>\x20AUTH\thunter2", "x\nuser\talice\ton\t>hunter2",
    "{password:'hunter2'}", "net user bob hunter2", "Login failed. Password:hunter2",
    "tls-key-file-pass\thunter2", "sentinel\tauth-pass\tm\thunter2", "sentinel\tsentinel-pass\thunter2",
    # rules version 14: the names in upper case / capitalized, a reply with no command line (a newline, ')' and '"')
    "REQUIREPASS\thunter2", "Masterauth\thunter2", "SENTINEL\tAUTH-PASS\tm\thunter2", "Sentinel\tSentinel-Pass\thunter2",
    '1)\x20"requirepass"\n2)\x20"hunter2"', '2#\x20"passwords"\x20=>\x201)\x20"' + "ab" * 32 + '"',
    # rules version 15: the names in a mixed case (a tab, no newline), CONFIG SET's pairs at the prompt
    "rEquirepass\thunter2", "x\nMasterAuth\thunter2", "Tls-Key-File-PaSS\thunter2",
    "127.0.0.1:6379>\x20CONFIG\tSET\ta\tb\tMasterAuth\thunter2",
)


@pytest.mark.parametrize("text", GATE_ROWS)
def test_each_gate_lets_its_least_through(text: str) -> None:
    _same(text)
    assert DETECTOR.find(text, Deadline.unlimited()), text


# The rules' literals and what stands between them: random texts open some gates and not others.
LITERALS = (
    " ", "\t", "\n", "\r", "\r\n", "\x00", ":", "=", '"', "'", "-", "--", "|", "<", ">", "<<<", "{", "}", ",", "/",
    "://", "@", "%", "%3D", "%22", "$", "[", "]", "(", ")", "\\n", "\\", "#", ";", "&", "*", ".", "_",
    "password", "PASSWORD", "Password", "passwd", "token", "api_key", "secret", "key", "auth", "pwd", "PWD", "db",
    "Bearer", "BEARER", "bearer", "Basic", "dXNlcjpwYXNz", "hunter2x9", "Zx81Qw7LmN2pRt5v", "a", "b", "1", "6379",
    "mysql", "-p", "--password", "-u", "curl", "-H", "sshpass", "htpasswd", "-b", "nmcli", "wifi", "rabbitmqctl",
    "add_user", "net user", "NET USER", "requirepass", "masterauth", "-pass", "tls-key-file", "sentinel", "auth-pass", "redis-cli", "> ", "AUTH", "auth", "127.0.0.1",
    "CONFIG GET", "user", "on", ">pw1", "~*", "+@all", "Private-Lines: 1", "Private-MAC: ", "kind: Secret",
    '"kind": "Secret"', "data:", '"data"', "IDENTIFIED BY", "identified by", "create user", "SET PASSWORD",
    "sqlplus", "userid", "conn", "config", "git config", "poetry config", "pypi-token.a", "chpasswd", "echo",
    "machine", "default", "login", "docker login", "--password-stdin", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA1234567890abcdef", "ghp_", "sk-", "eyJ", "AKIA",
    "a:$apr1$abcdefgh$abcdefghij", "bob:$6$saltsalt$hashhashhash:19000:", "{SHA}", "h:5432:db:u:pw", "sensitive",
    '"sensitive": true', '"value"', "<password>", "</password>", "<![CDATA[", "]]>", "=>", "x['password']",
    "id,user,password", "sqlite>", "|---|---|", "+---+", "-[ RECORD 1 ]", "Secret", "mariadb",
    "REQUIREPASS", "Requirepass", "MASTERAUTH", "-PASS", "-Pass", "SENTINEL", "AUTH", '1) "', '2) "', "requirepass\"",
    "redis-cli -3", ".separator ;", "-separator", "\x1b[1m", ".mode quote", ".mode insert", "'id','password'",
    "INSERT INTO t(a,password) VALUES(", "1,'x'", ");", "NULL", ".mode html", "<TR><TH>password</TH>", "<TD>x</TD>",
    "</TR>", '# "passwords" => ', ' 1) "' + "ab" * 32 + '"',
    "rEquirepass", "MasterAuth", "-pAss", "CONFIG SET", ".mode tcl", ".mode ascii", "\x1f", "\x1e", '"password" "x"',
    '.separator " | "', " | ", "-separator '::'", "::", "CREATE TABLE t (", "password TEXT", ".schema", "...> ",
    ".mode insert t", "INSERT INTO t VALUES(", "OK",
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(LITERALS), min_size=1, max_size=24))
def test_random_texts_of_the_rules_literals(parts: list[str]) -> None:
    _same("".join(parts))
