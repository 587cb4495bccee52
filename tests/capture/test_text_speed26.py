"""text26: the credentials detector's gates asked of a long text's skeleton change no finding.

A long ASCII text's gates (``"BEARER" in held``, ``"REQUIREPASS" in held``, ``"-PASS" in held``...) are asked of its
skeleton first (``credentials._Skeleton``: the text without lower-case letters, digits and spaces) and only then of
the text. The reference is the same tree's passes run ungated (:data:`EVERY_LITERAL` answers every gate), so the
comparison holds whatever rules are added behind the gates. Each text below is made long enough for the skeleton
(``held_literals`` returns one: asserted), from: every capture test data file, the strings of
tests/capture/test_false_positives*.py and test_leak_edges*.py, benchmarks/capture_hostile.py's rows,
benchmarks/capture_scan.py's mixed text and JSON step, and random texts of credential names, tool names,
separators, quotes and newlines. A gate made too strict (one that drops a trigger: ``-Pass`` of ``-PASS|-Pass``)
fails it.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import CredentialsDetector
from bitexact.capture.detectors.credentials import EVERY_LITERAL, held_literals

ROOT = Path(__file__).resolve().parents[2]
DETECTOR = CredentialsDetector()
LONG = 16 * 1024 + 1
# Prose with none of the rules' literals: it makes a text long and adds nothing to its skeleton.
FILLER = ("the agent called tool search with query results found customer account order shipped total amount "
          "paid invoice date status ok ")


def _long(text: str) -> str:
    """``text`` then prose on the next line, as long as the skeleton needs."""
    if len(text) >= LONG:
        return text
    return text + "\n" + FILLER * ((LONG - len(text)) // len(FILLER) + 1)


def _same(text: str, prefilters: tuple[bool, ...] = (False, True)) -> None:
    """The gated passes find what the ungated ones do in ``text`` made long, alone (``prefilter`` False: a long text
    is scanned alone) and as joined texts are read (True)."""
    text = _long(text)
    if text.isascii():
        assert not isinstance(held_literals(text), str), "the text is read through its skeleton"
    for prefilter in prefilters:
        gated = DETECTOR.find(text, Deadline.unlimited(), prefilter=prefilter)
        reference = DETECTOR._find(text, EVERY_LITERAL, Deadline.unlimited(), prefilter)
        assert gated == reference, (text[:200], prefilter)


def _strings(pattern: str) -> list[str]:
    """Every string constant of the capture test files matching ``pattern``: their leak and false-positive rows."""
    out: set[str] = set()
    for path in sorted((ROOT / "tests" / "capture").glob(pattern)):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
                out.add(node.value)
    return sorted(out)


def _benchmark(name: str) -> object:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


ROWS = _strings("test_false_positives*.py") + _strings("test_leak_edges*.py")
DATA = sorted(path for path in (ROOT / "tests" / "capture" / "data").iterdir() if path.is_file())


def test_the_corpus_is_read() -> None:
    """Thousands of rows and the data files (a glob gone wrong is no pass)."""
    assert len(ROWS) > 2000
    assert len(DATA) >= 8


def test_the_skeleton_answers_as_the_text_does() -> None:
    """``literal in held`` is ``literal in text`` for a long text's skeleton, for literals it holds and lacks."""
    text = _long("a BEARER x -Pass y REQUIREPASS\tz PRIVATE KEY----- COPY t NET USER u Private-Lines: 1")
    held = held_literals(text)
    assert not isinstance(held, str)
    for literal in ("BEARER", "-Pass", "-PASS", "REQUIREPASS", "MASTERAUTH", "PRIVATE KEY-----", "PRIVATE KEY BLOCK-----",
                    "COPY", "NET USER", "Private-Lines:", "BASIC", "IDENTIFIED", "PASSWORD", "net user", "identified",
                    "-P", ":", "\n", "\t", "x -P", "a BEARER", "BEARERx", "", "é"):
        assert (literal in held) == (literal in text), literal
    assert isinstance(held_literals("a BEARER b"), str), "a short text is asked itself"
    assert isinstance(held_literals(_long("é BEARER")), str), "so is a text that is not ASCII"


def test_rows_each_alone() -> None:
    for text in ROWS:
        _same(text)


def test_rows_joined() -> None:
    """The rows in runs, joined with NUL as a step's texts are and with newlines as a document's lines."""
    for start in range(0, len(ROWS), 40):
        _same("\x00".join(ROWS[start : start + 40]))
        _same("\n".join(ROWS[start : start + 40]))


@pytest.mark.parametrize("path", DATA, ids=lambda path: path.name)
def test_capture_data_files(path: Path) -> None:
    _same(path.read_bytes().decode("utf-8", "replace"))


def test_hostile_rows() -> None:
    """capture_hostile.py's rows, each repeated to a long text as the benchmark repeats it."""
    hostile = _benchmark("capture_hostile")
    fragments = {*hostile.FRAGMENTS, *hostile.V12_FRAGMENTS, *hostile.LATEST_FRAGMENTS}  # type: ignore[attr-defined]
    assert len(fragments) > 150
    for fragment in sorted(fragments):
        _same(fragment * (LONG // len(fragment) + 1), (False,))  # a text this long is scanned alone


def test_capture_scan_steps() -> None:
    """capture_scan.py's mixed text and JSON step (as its canonical text), 256 KiB each."""
    scan = _benchmark("capture_scan")
    _same(scan.mixed_text(1 << 18))  # type: ignore[attr-defined]
    _same(orjson.dumps(scan.json_step(1 << 18)).decode())  # type: ignore[attr-defined]


# For each pass gated through the skeleton, a text it finds a credential in (a gate that drops its trigger fails it).
GATED_ROWS = (
    "BEARER abcdef123456", "BASIC dXNlcjpwYXNz", "REQUIREPASS\thunter2", "MASTERAUTH hunter2",
    "TLS-KEY-FILE-PASS hunter2", "Sentinel Sentinel-Pass hunter2", "NET USER bob hunter2 /add",
    "CREATE USER app WITH PASSWORD 'hunter2';", "GRANT ALL ON db.* TO 'u'@'h' IDENTIFIED BY 'hunter2';",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1y2z3a4b5c6d7e8f9g0h1i2j3k4l5m6n7o8p9\n-----END RSA PRIVATE KEY-----",
    "PuTTY-User-Key-File-3: ssh-rsa\nPrivate-Lines: 1\nAAAAgQDx1y2z3a4b5c6d7e8f9g0h1i2j3k4l5m6n7o8p9\nPrivate-MAC: "
    + "0123456789abcdef" * 4,
    "ok\n" * 80 + "COPY users TO STDOUT WITH CSV HEADER\nid,password\n1,hunter2x\n",  # past a text's first lines
    "note\x00password: hunter2x",
)


@pytest.mark.parametrize("row", GATED_ROWS)
def test_each_skeleton_gate_lets_its_pass_run(row: str) -> None:
    _same(row)
    assert DETECTOR.find(_long(row), Deadline.unlimited()), row


# Credential names, the tools whose forms the rules read, what stands between them.
PIECES = (
    " ", "\t", "\n", "\r\n", "\x00", ":", ": ", "=", '"', "'", "-", "--", "|", ",", "> ", "/", "@", "://", ".",
    "password", "PASSWORD", "Password", "token", "api_key", "secret", "hunter2x9", "S3cr3tPw1234567890abcd",
    "Bearer", "BEARER", "bearer", "Basic", "BASIC", "dXNlcjpwYXNz", "requirepass", "REQUIREPASS", "Requirepass",
    "masterauth", "MASTERAUTH", "Masterauth", "tls-key-file-pass", "TLS-KEY-FILE-PASS", "-PASS", "-Pass", "-pass",
    "sentinel auth-pass m", "SENTINEL AUTH-PASS m", "Sentinel Sentinel-Pass", "redis-cli", "127.0.0.1:6379> ",
    "CONFIG SET", "config set", "AUTH", "1) ", "2) ", "sqlite3", "sqlite> ", ".mode csv", ".headers on", "psql",
    "mysql", "-p", "mariadb", "COPY", "\\copy", "=# COPY t TO STDOUT", "id,user,password", "kubectl", "terraform",
    "kind: Secret", "data:", "htpasswd", "-b", "nmcli", "net user", "NET USER", "IDENTIFIED BY", "identified by",
    "CREATE USER u WITH PASSWORD", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "MIIEowIBAAKCAQEA1234567890abcdef", "-----END RSA PRIVATE KEY-----", "Private-Lines: 1", "Private-MAC: ",
    "AAAAB3NzaC1yc2EAAAADAQABAAABAQ", "0123456789abcdef0123", "curl", "-H", "-u", "git config", "sqlplus",
    "USERID=", "scott/tiger", "ghp_", "sk-", "AKIA", "eyJ",
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=30))
def test_random_texts_of_names_tools_and_separators(parts: list[str]) -> None:
    _same("".join(parts))


# -- the card-number and IBAN sites (detectors/digits.py) ------------------------------------------------------------

from bitexact.capture.detectors import digits  # noqa: E402


def _same_sites(text: str) -> None:
    """The sites found in the written-over copy are ``_SITES.finditer``'s (the pattern kept as the reference)."""
    if text.isascii():
        assert list(digits._ascii_sites(text)) == [site.span() for site in digits._SITES.finditer(text)], text[:200]


def test_sites_of_the_corpus() -> None:
    for text in ROWS:
        _same_sites(text)
    for path in DATA:
        _same_sites(path.read_bytes().decode("utf-8", "replace"))
    scan = _benchmark("capture_scan")
    _same_sites(scan.mixed_text(1 << 18))  # type: ignore[attr-defined]
    _same_sites(orjson.dumps(scan.json_step(1 << 18)).decode())  # type: ignore[attr-defined]
    _same_sites(scan.digits_spaced(1 << 16))  # type: ignore[attr-defined]
    _same_sites(orjson.dumps(scan.digits_array(1 << 16)).decode())  # type: ignore[attr-defined]


def test_sites_past_many_near_misses() -> None:
    """Two digits after glued letters are no site: past 256 of them the rest is read by the reference's own search,
    sites after that point found all the same."""
    text = "%zzab12" * 300 + " 4111 1111 1111 1111 DE89 3704 0044 0532 0130 00 " + "ab12" * 300 + "DE89370400440532013000"
    _same_sites(text)
    assert len(list(digits._ascii_sites(text))) == 4  # the card, the IBAN, " ab12" (not glued: a space), the last


SITE_PIECES = (
    "0", "1", "4", "9", "12", "4111", "1111", "89", " ", "-", "+", "%", "%20", "%2d", "%2D", "%41", "%zz", "d", "D",
    "DE", "GB", "de", "ab", "x", "Z", ".", "/", ":", "\n", "\x00", "_", "DE89", "DE89 3704 0044 0532 0130 00",
    "4111 1111 1111 1111", "4111-1111-1111-1111", "ed", "Dd",
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(SITE_PIECES), min_size=1, max_size=40))
def test_sites_of_random_texts(parts: list[str]) -> None:
    _same_sites("".join(parts))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789 -+%dDeaZ\n", max_size=80))
def test_sites_of_random_characters(text: str) -> None:
    _same_sites(text)
