"""The twenty-sixth session's speed work changes no output: each changed function against the code it replaced.

1. The session redaction's prefilter (:meth:`Redactor.may_match`, :meth:`Redactor.text`): one literal search
   per credential mark instead of one class of common first letters. The old prefilter is kept here as the
   oracle; on every credential shape, near misses, masks, escapes and the benchmark's generated sources the
   decision (and the redacted text) is the same.
2. Parsing (:func:`bitexact.sessions.records.frame`, :func:`bitexact.sessions.parsers.base.parse_objects`):
   every session fixture, through every engine and through detection, and the parse benchmark's generated log
   of every engine give the results 730052e gave (their digests were taken from it); ``decode_located``
   decodes or refuses each located line as ``decode_json`` does.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import hashlib

import orjson
import pytest

from bitexact.sessions import ENGINES, canonical_json, parse
from bitexact.sessions.unify.redact import _PEM_MARKER, _PEM_TEXT, Redactor, _masked

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

# -- 1. the redaction prefilter -------------------------------------------------------------------------

_OLD_CREDENTIAL_PREFIXES = (
    rb"[gsrAxehynSptlwdf](?:h[pousr]_|ithub_pat_|lpat-|k-|k_|KIA|SIA|Iza|ox|yJ|f_|v[sbr]\.|a29\.|pm_|G\."
    rb"|sk_|lrt-|vly-|8_|plx-|ypi-|csk_|ai-|app-|sv2_|in_api_|hsec_|ebhooks/|o[por]_v1_|hp(?:at|ss|ca|pa)_"
    rb"|ecret_|igd_|TATT3|tn_|ooks\.slack\.com/|A)"
    rb"|(?i:earer)(?:[ \t]|\\t)"
)
"""The prefilter as it was at 730052e (redact.py's ``_CREDENTIAL_PREFIXES``)."""


def _old_may_match(redactor: Redactor, raw_json: bytes) -> bool:
    """``Redactor.may_match`` as it was at 730052e."""
    prefilter = re.compile(b"|".join([re.escape(m.encode("utf-8")) for m in redactor.masks] + [_OLD_CREDENTIAL_PREFIXES]))
    if redactor._always_walk or b"\\u" in raw_json or b"\\/" in raw_json or _PEM_MARKER in raw_json:
        return True
    if prefilter.search(raw_json) is None:
        return False
    return redactor._raw_pattern.search(raw_json) is not None


def _old_text(redactor: Redactor, value: str) -> str:
    """``Redactor.text`` as it was at 730052e."""
    prefilter = re.compile("|".join([re.escape(m) for m in redactor.masks] + [_OLD_CREDENTIAL_PREFIXES.decode("ascii")]))
    if _PEM_TEXT not in value and prefilter.search(value) is None:
        return value
    return redactor._pattern.sub(_masked, value)


TOKENS = (
    "ghp_" + "A1b2C3d4E5" * 4, "gho_" + "Z9y8X7w6V5" * 4, "github_pat_11ABCDEFG0_" + "x1Y2z3" * 8,
    "glpat-" + "Ab3_De6-Gh9" * 2, "sk-ant-api03-" + "q1W2e3R4t5" * 5, "sk-proj-" + "Zx9Cv8Bn7M" * 4,
    "sk-" + "a1B2c3D4e5" * 3, "sk_live_" + "51HqLyjWDarj" * 2, "rk_test_" + "51HqLyjWDarj" * 2,
    "AKIAIOSFODNN7EXAMPLE", "ASIA" + "Q3EXAMPLEKEY1234", "xoxb-123456789012-" + "abcdefghij",
    "AIza" + "SyA-abcdefghijklmnopqrstuvwxyz01234",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbm4iLCJpYXQiOjE3MDB9.c2lnbmF0dXJlLWJ5dGVz",
    "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbm4ifQ.", "hf_" + "AbCdEfGhIj" * 3 + "kLmN", "hvs." + "CAESIJx7q9Vd" * 3,
    "ya29.a0AfH6SMBx" + "Kq3_zT-9wE" * 4, "npm_" + "a1B2c3D4e5F6" * 3,
    "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
    "gsk_" + "aB3dE5gH7j" * 5 + "K9", "tvly-dev-" + "Ab12Cd34Ef" * 3 + "G5", "r8_" + "Q7wE5rT3yU" * 3 + "1iOp9aS",
    "pplx-" + "a1S2d3F4g5H6" * 4, "xai-" + "Zq8Xw7Ce6V" * 8, "lsv2_pt_" + "0123456789abcdef" * 2 + "_" + "a1b2c3d4e5",
    "pcsk_" + "3AbCdE_" + "Fg4Hi5Jk6L" * 6, "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "xapp-1-A0123456789-1234567890123-" + "0123456789abcdef" * 4,
    "pypi-AgEIcHlwaS5vcmc" + "CJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsz",
    "dop_v1_" + "0123456789abcdef" * 4, "shpat_" + "0123456789abcdef" * 2, "glrt-" + "t1_Ab3De6Gh9Jk2Mn5Pq8",
    "figd_" + "Ab3_De6-Gh9Jk2" * 3, "ATATT3xFfGF0" + "T2kVz9_Lq-8rW4mN" * 11 + "=A1B2C3D4",
    "lin_api_" + "Ab3De6Gh9J" * 4, "ntn_" + "12345678901" + "AbCdEfGhIj" * 3 + "KlMnO",
    "secret_" + "Ab3De6Gh9J" * 4 + "kLm",
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXslack71XXXXXXXXXXXX",
    "https://discord.com/api/webhooks/1234567890123456789/discordTok72-abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJ",
    "6123456789:AAF-tgTok73abcdefghijklmnopqrstuvw", "Authorization: Bearer abcdefghijklmnop0123",
    "bEaReR\tabcdefghijklmnop0123", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAK\n-----END RSA PRIVATE KEY-----",
)
"""A token of every credential shape (tests/capture's tokens), and bearer and PEM forms."""

NEAR_MISSES = (
    "task-1", "ask-me", "gsk_short_name", "tvly-api", "r8_model_weights", "pplx-7b-online", "xai-sdk", "lsv2_pt_abc",
    "whsec_...", "xapp-1-A01", "pypi-server", "dop_v1_abc", "shpat_xxxx", "glrt-runner", "figd_token", "ATATT3",
    "lin_api_key", "ntn_token", "secret_key_base", "AA", ":AA", "123456:AAshort", "eyJ", "eyJabc.eyJ", "hvs.x",
    "ya29.", "SG.x", "xox", "xoxb-", "bearer", "Bearer x", "bearer\\tshort", "AKIA", "AIza", "hooks.slack.com/",
    "/webhooks/1/x", "gh_", "ghp_", "sk_", "rk_live_", "hf_x", "npm_x", "glpat-x", "sk-x", "tool_use_id",
    "2026-10-02T00:00:01.000Z", "a.b-c_d/e:f", "hunter2", "a/b", "pass\"word",
)
"""Prose and look-alikes: a mark without its shape, a shape too short, a word's tail."""


def _samples() -> list[str]:
    """Every token and near miss alone, inside prose, after an escape, and a seeded mix of them."""
    pieces = [*TOKENS, *NEAR_MISSES]
    out = [*pieces]
    out += [f"the agent ran with {p} and stopped" for p in pieces]
    out += [f"line one\n{p}\tend" for p in pieces]
    out += [f"é {p} \u2028 ✓" for p in pieces]
    rng = random.Random(26)
    fragments = [*NEAR_MISSES, " ", "\n", "\\", "_", "-", ".", "A", "J", "/", ":", "0123456789", "x" * 40]
    for _ in range(300):
        out.append("".join(rng.choice(fragments + [rng.choice(TOKENS)]) for _ in range(rng.randint(1, 12))))
    return out


def _generated_sources() -> list[bytes]:
    """The unify benchmark's generated records (benchmarks/sessions_unify.py), a few of each source."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import sessions_unify
    finally:
        sys.path.remove(str(BENCHMARKS))
    records: list[Any] = []
    for i in range(20):
        access, usage = sessions_unify._firewall(i)
        records += [*sessions_unify._agent_events(i), *sessions_unify._mcp(i), access, usage, sessions_unify._otel(i)]
    lines = [json.dumps(record, separators=(",", ":")).encode("utf-8") for record in records]
    return [*lines, b"\n".join(lines)]


@pytest.mark.parametrize("masks", [(), ("hunter2",), ("hunter2", "a/b", "s3cr3t-value"), ('pass"word',)],
                         ids=["no-masks", "one-mask", "masks", "escaped-mask"])
def test_the_redaction_prefilter_decides_as_the_old_one_did(masks: tuple[str, ...]) -> None:
    redactor = Redactor(masks)
    raws: list[bytes] = _generated_sources()
    for sample in _samples():
        raws += [orjson.dumps({"text": sample}), json.dumps({"text": sample}).encode("utf-8"),
                 json.dumps({sample: [sample]}, ensure_ascii=False).encode("utf-8")]
        assert redactor.text(sample) == _old_text(redactor, sample), sample
    decided = [redactor.may_match(raw) for raw in raws]
    assert decided == [_old_may_match(redactor, raw) for raw in raws]
    assert any(decided) and (redactor._always_walk or not all(decided))  # both ways taken (an escaped mask: always)


def test_every_token_passes_the_prefilter_and_the_generated_sources_do_not() -> None:
    redactor = Redactor()
    for token in TOKENS:
        assert redactor.may_match(orjson.dumps({"text": f"x {token} y"})), token
        assert redactor.text(f"x {token} y") != f"x {token} y", token
    assert not any(redactor.may_match(raw) for raw in _generated_sources())


# -- 2. parsing ----------------------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _result_digest(text: str, engine: str | None) -> str:
    """Everything ``parse`` returns, as one digest: the canonical trace, markdown, flags and diagnostics."""
    result = parse(text, engine)
    whole = json.dumps([canonical_json(result.events), result.markdown, result.mcp_failures, result.max_turns_hit,
                        result.engine, result.diagnostics], ensure_ascii=False)
    return hashlib.sha256(whole.encode("utf-8", "surrogatepass")).hexdigest()


def _fixture_digests() -> str:
    """One digest over every fixture file read by every engine and by detection (sorted paths)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", "replace")
        for engine in (None, *ENGINES):
            digest.update(f"{path.relative_to(FIXTURES).as_posix()} {engine} {_result_digest(text, engine)}\n".encode())
    return digest.hexdigest()


def _generated_digest(engine: str) -> str:
    """The digest of the parse benchmark's generated log of ``engine`` (benchmarks/sessions_parse.py, 60 blocks)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import sessions_parse
    finally:
        sys.path.remove(str(BENCHMARKS))
    block = sessions_parse.GENERATORS[engine]
    text = "".join(block(i) for i in range(60))
    return _result_digest(text, engine)


FIXTURE_DIGEST = "9ae2c13f4cce87e33fbc66b4043c6b766efadcd010eec0f0b00ea3d85b600f48"
"""``_fixture_digests()`` at 730052e, taken again in session 32 (keys32): the diagnostics fold a line's
non-object entries into one note and count a line holding one JSON string as a non-object entry, not text
(tests/sessions/test_diagnostics32.py). Only the diagnostics of 47 of the 1,284 fixture-engine parses changed;
every event, engine and flag is as at 26a320a (compared parse by parse)."""

GENERATED_DIGESTS = {
    "claude": "734efb9184657082fbe03d17f0c4be77bf3d8aee39a6293fba527d83c94ba98c",
    "copilot": "060412b0a4e9f1118391bbf49de0374aad3f8194ae9774b39199aed3303b33b7",
    "codex": "1651a816de49ebf090532b602fd90f94ff06f024b834408a39beacd6e5dab6b3",
    "gemini": "2dff121970453bd55d8c5ac247fce7e828128a33396a635c2fa890033384d8e1",
    "pi": "aa1531b52442e72cb60d1072a197ee463818b981cb1599184021cd558dc649e1",
    "custom": "b47156ceb924ce224df3b840243c18d7b3d23586c6812bce90963484f3a27d69",
    "opencode": "3cadc8d317fd4458206cbc7156061f8435c54e16c7b0ef615c1ee28b949d3d03",
    "goose": "1f532bf766bb5c89ad224003dffe7c34cf4ff6c77e37797fcdab4af869767688",
    "cursor": "4240eb6b7eedcaa9f8b19dbee68b510065e07a75f754125eb6f318c135ef109c",
    "aider": "a07ac38808840b58b2b93d597af53edf95174a5e1510aea0e91b43cbb26d043f",
    "pydantic-ai": "470a2430c32694a0de4c61e013f036271e193aa92ca14faa52386e508a1a8eac",
}
"""``_generated_digest(engine)`` at 730052e."""


def test_every_fixture_parses_as_before_through_every_engine() -> None:
    assert _fixture_digests() == FIXTURE_DIGEST


@pytest.mark.parametrize("engine", ENGINES)
def test_the_benchmarks_generated_log_parses_as_before(engine: str) -> None:
    assert _generated_digest(engine) == GENERATED_DIGESTS[engine]


LOCATED = (
    '{"a": 1}', '{"a": 1} {"b": 2}', '{"a": 1}x', '{"a": NaN}', '{"a": -Infinity}', '{"a": [1, 2', '{', '{}', '{"a": "\\u00e9"}',
    '{"a": 1}]', '{"a": {"b": [true, false, null]}}', '{"a": 1}\u00a0', '{"a": "\ud800"}', "{'a': 1}", '{"a": 1e999}',
    "{" * 500 + "}" * 500, '{"a":' * 401 + "1" + "}" * 401, '{"a":' * 300 + "1" + "}" * 300,
)
"""Located record lines (no whitespace around them): valid, trailing data, non-finite, truncated, too deep."""


@pytest.mark.parametrize("text", LOCATED, ids=range(len(LOCATED)))
def test_decode_located_decodes_and_refuses_as_decode_json(text: str) -> None:
    from bitexact.sessions.records import decode_json, decode_located

    try:
        expected: Any = ("value", decode_json(text))
    except ValueError as error:
        expected = ("refused", isinstance(error, json.JSONDecodeError))
    try:
        found: Any = ("value", decode_located(text))
    except ValueError as error:
        found = ("refused", isinstance(error, json.JSONDecodeError))
    assert found == expected
