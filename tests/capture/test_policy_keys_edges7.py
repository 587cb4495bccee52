"""Capture policy loading, keys and the capture CLI: regression tests, each for a bug review 7 found.

Contract: capture-controls.md; project docs: docs/capture.md, docs/capture-keys.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli.real_command import run_bitexact

from bitexact.capture import PolicyError, load_policy, scrub_text
from bitexact.capture.policy import parse_policy
from bitexact.crypto.hostkey import load_host_key
from bitexact.crypto.keystore import KeyStore
from bitexact.crypto.sealed import seal
from bitexact.recording import Recorder
from bitexact.store import open_store

# -- 1. a quantifier written in another script's digits ----------------------------------


@pytest.mark.parametrize("pattern", ["ACCT-\\d{\u0668}", "ACCT-\\d{1,\u0668}", "A{\u0663}"])
def test_a_quantifier_in_non_ascii_digits_is_refused(pattern: str) -> None:
    """The validator read {٨} as a quantifier (its regex's \\d takes any script's digits), the regex engine
    reads it as the literal text "{٨}": a pattern outside the language was accepted and never matched."""
    with pytest.raises(PolicyError) as refused:
        parse_policy({"detectors": {"custom": [{"name": "acct", "pattern": pattern}]}}, env={})
    assert refused.value.field == "detectors.custom[0].pattern"


def test_an_ascii_quantifier_still_finds_what_it_names() -> None:
    policy = parse_policy({"detectors": {"custom": [{"name": "acct", "pattern": "ACCT-\\d{8}"}]}}, env={})
    assert scrub_text(policy, "ACCT-12345678") == ("[ACCT]", {"acct": 1})


# -- 2. the capture key pasted where a KMS or token reference goes is quoted back ---------------

KEY_HEX = "5c0ffee0" * 8  # 64 hex characters: a capture key itself
SOFTHSM_LIB = "/usr/lib/softhsm/libsofthsm2.so"


@pytest.mark.parametrize("spec", [
    {"kms_ciphertext": KEY_HEX},
    {"kms_hmac": KEY_HEX},
    {"pkcs11": {"lib": KEY_HEX, "slot": 0, "label": "capture", "pin_env": "EDGES7_PIN"}},
], ids=["kms_ciphertext", "kms_hmac", "pkcs11-lib"])
def test_a_key_pasted_where_its_kms_or_token_reference_goes_is_never_quoted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, spec: dict[str, Any]
) -> None:
    """capture-keys.md: a KeySourceError "never holds key material", and a key given where its file's path goes
    is refused without quoting it. That held for {"file": KEY} only: the key pasted as a KMS-encrypted file's
    path, a KMS key reference or a token library was copied into the refusal (policy check, health, logs)."""
    monkeypatch.setenv("EDGES7_PIN", "1234")
    monkeypatch.chdir(tmp_path)
    for doc in ({"hash_only_key": spec}, {"retired_keys": [spec]}):
        with pytest.raises(PolicyError) as caught:
            parse_policy(doc, env={})
        assert KEY_HEX not in str(caught.value).lower(), str(caught.value)
        assert "look like a key" in str(caught.value)


def _softhsm_token(tmp_path: Path) -> tuple[str, int]:
    """A fresh SoftHSM2 token in its own config, and its slot id. SoftHSM2 reads SOFTHSM2_CONF once per
    process, so the token is used from a `bitexact` process of its own."""
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    conf = tmp_path / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {tokens}\nobjectstore.backend = file\nlog.level = ERROR\n")
    env = {**os.environ, "SOFTHSM2_CONF": str(conf)}
    if not shutil.which("softhsm2-util") or not os.path.exists(SOFTHSM_LIB):
        pytest.fail("PKCS#11 tests need a real token: apt-get install -y softhsm2")
    made = subprocess.run(["softhsm2-util", "--init-token", "--free", "--label", "edges7", "--pin", "4711-edges7",
                           "--so-pin", "so-4711-edges7"], env=env, check=True, capture_output=True, text=True,
                          timeout=60)
    slot = re.search(r"reassigned to slot (\d+)", made.stdout)
    assert slot is not None, made.stdout
    return str(conf), int(slot.group(1))


def test_a_key_pasted_as_a_token_keys_label_is_never_quoted(tmp_path: Path) -> None:
    """The same for a PKCS#11 label: the token finds no key labelled with the capture key's hex, and the
    refusal quoted the label, so `policy check` printed the key."""
    conf, slot = _softhsm_token(tmp_path)
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"hash_only_key": {"pkcs11": {"lib": SOFTHSM_LIB, "slot": slot, "label": KEY_HEX,
                                                               "pin_env": "EDGES7_PIN"}}}))
    checked = run_bitexact(tmp_path / "home", "capture", "policy", "check", str(policy), "--json",
                           SOFTHSM2_CONF=conf, EDGES7_PIN="4711-edges7")
    assert checked.returncode == 1, checked.stderr
    refusal = json.loads(checked.stdout)
    assert refusal["field"] == "hash_only_key" and "no secret key labelled" in refusal["reason"], refusal
    assert KEY_HEX not in checked.stdout + checked.stderr, checked.stdout


# -- 3. `capture journal --show` wrote a journal's escape sequences to the terminal ------------


@pytest.mark.parametrize(("payload", "clear"), [
    (b"data: hi \x1b[2J\x1b]0;pwned\x07 \xe2\x80\xaeevil \xc2\x9b31m\n\n", "\\x1b[2J"),
    (json.dumps({"result": "hi \x1b[2J \u202eevil \x9b31m"}, ensure_ascii=False).encode(), "\\u001b[2J"),
], ids=["text", "json"])
def test_journal_show_never_writes_escape_sequences_from_the_journal(tmp_path: Path, payload: bytes,
                                                                     clear: str) -> None:
    """A journal holds what an agent received (a page, a stream) before the policy ran. `--show` wrote its
    text raw, and its JSON with C1 controls and bidirectional overrides raw, so a page holding `\\x1b[2J`
    cleared the operator's terminal and U+202E reordered it (`-o OUT` is the way to the exact bytes)."""
    home = tmp_path / "home"
    journal = tmp_path / "stream.journal"
    journal.write_bytes(seal(payload, load_host_key(home), purpose="stream-journal"))
    shown = run_bitexact(home, "capture", "journal", str(journal), "--show")
    assert shown.returncode == 0, shown.stderr
    assert not set("\x1b\x07\x9b\u202e") & set(shown.stdout), repr(shown.stdout)
    assert clear in shown.stdout and "\\u202e" in shown.stdout and "\\x9b" in shown.stdout, shown.stdout
    written = tmp_path / "exact.bin"
    assert run_bitexact(home, "capture", "journal", str(journal), "-o", str(written)).returncode == 0
    assert written.read_bytes() == payload


# -- 4. the capture commands wrote what a policy file or an argument names with markup escaping only --------


def test_policy_show_check_and_backfill_never_write_escape_sequences(tmp_path: Path) -> None:
    """`policy show` wrote a rule's path and the policy file's name, `policy check` the file's name and
    `backfill` the requester's --by, with rich markup escaping only: a rule for a key holding `\\x1b[2J`
    (as an agent's keys may) cleared the terminal it was shown on. fail() and ok() write them as escapes."""
    home = tmp_path / "home"
    folder = tmp_path / "evil\x1b[2J\u202e"
    folder.mkdir()
    policy = folder / "policy.json"
    policy.write_text(json.dumps({"fields": [{"kind": "*", "path": "a\x1b[2Jb", "mode": "keep"},
                                             {"kind": "*", "path": "*", "mode": "scrub"}]}))
    shown = run_bitexact(home, "capture", "policy", "show", BITEXACT_CAPTURE_POLICY=str(policy))
    checked = run_bitexact(home, "capture", "policy", "check", str(policy))
    for result in (shown, checked):
        assert result.returncode == 0, result.stderr
        assert "\x1b" not in result.stdout and "\u202e" not in result.stdout, repr(result.stdout)
        assert "evil\\x1b[2J\\u202e" in result.stdout, result.stdout
    assert "a\\x1b[2Jb -> keep" in shown.stdout, shown.stdout
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init(), policy=load_policy("off")).start(name="odd")
        writer.append("tool_call", {"tool": "pay", "args": "card 4111 1111 1111 1111"})
        writer.seal()
    finally:
        store.close()
    filed = run_bitexact(home, "capture", "backfill", "--run", writer.run_id, "--by", "alice\x1b]0;owned\x07")
    assert filed.returncode == 0, filed.stderr
    assert "\x1b" not in filed.stdout and "\x07" not in filed.stdout, repr(filed.stdout)
    assert "by alice\\x1b]0;owned\\x07" in filed.stdout, filed.stdout


# -- 5. a rule shadowed by an earlier rule with the same where was accepted ---------------------------


@pytest.mark.parametrize(("earlier_where", "later_where"), [
    ({"tool": "kyc_lookup"}, {"tool": "kyc_lookup"}),
    ({"tool": "kyc_lookup"}, {"tool": "kyc_lookup", "status": "ok"}),
    ({"tool": "kyc_lookup", "status": 1}, {"status": 1.0, "tool": "kyc_lookup"}),
], ids=["same", "narrower", "same-json-values"])
def test_a_rule_an_earlier_rule_with_the_same_where_covers_is_refused(
    earlier_where: dict[str, Any], later_where: dict[str, Any]
) -> None:
    """capture-controls.md: "A rule that could never match is refused when the policy is loaded, since the
    value it was written for would be stored as captured". A rule shadowed by an earlier one whose where holds
    on every step the later's does was accepted: here the hash-only rule never ran and `result` was kept."""
    document = {"fields": [
        {"kind": "tool_call", "where": earlier_where, "path": "*", "mode": "keep"},
        {"kind": "tool_call", "where": later_where, "path": "result", "mode": "hash-only"},
    ]}
    with pytest.raises(PolicyError) as refused:
        parse_policy(document, env={})
    assert refused.value.field == "fields[1]" and "could never match" in refused.value.reason


def test_a_rule_after_one_with_another_where_still_loads() -> None:
    document = {"fields": [
        {"kind": "tool_call", "where": {"tool": "kyc_lookup", "status": "ok"}, "path": "*", "mode": "keep"},
        {"kind": "tool_call", "where": {"tool": "kyc_lookup"}, "path": "result", "mode": "hash-only"},
        {"kind": "tool_call", "where": {"tool": "other"}, "path": "result", "mode": "hash-only"},
        {"kind": "*", "where": {"tool": "kyc_lookup"}, "path": "result", "mode": "scrub"},
    ]}
    assert len(parse_policy(document, env={}).rules) == 4


# -- 6. a where value canonical JSON cannot hold escaped as another error ---------------------------


@pytest.mark.parametrize("value", [2**70, -0.0], ids=["past-a-double", "negative-zero"])
def test_a_where_value_canonical_json_cannot_hold_is_a_policy_error_naming_it(tmp_path: Path, value: Any) -> None:
    """A where value the digest's canonical JSON refuses (an integer past 2^53, -0.0) passed the rule check and
    raised CanonicalizationError from the digest: no PolicyError naming the field, `policy check --json` printed
    no JSON, and `bitexact health` reported four failed checks instead of capture-policy-invalid."""
    document = {"fields": [{"kind": "tool_call", "where": {"tool": value}, "path": "result", "mode": "hash-only"}]}
    with pytest.raises(PolicyError) as refused:
        parse_policy(document, env={})
    assert refused.value.field == "fields[0].where.tool"
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(document))
    checked = run_bitexact(tmp_path / "home", "capture", "policy", "check", str(policy), "--json")
    assert checked.returncode == 1, checked.stderr
    assert json.loads(checked.stdout)["field"] == "fields[0].where.tool", checked.stdout
    health = run_bitexact(tmp_path / "home", "health", "--json", BITEXACT_CAPTURE_POLICY=str(policy))
    names = [finding["name"] for finding in json.loads(health.stdout)["findings"]]
    assert "capture-policy-invalid" in names and "health-check-failed" not in names, names
