"""PKCS#11 capture keys in a real SoftHSM2 token made at test time."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from keysource_support import ID_MESSAGE, PIN_ENV, Token, import_secret, reference_hmac

from bitexact.crypto.keysources import KeySourceError, KeyUnavailableError, load_capture_key
from bitexact.crypto.keysources.base import CallRunner, GuardedCalls, MessageSizeError
from bitexact.crypto.keysources.pkcs11 import Pkcs11Key, Pkcs11Limits, load_pkcs11_key

NO_COOL_OFF = Pkcs11Limits(cool_off=0.0)


def load(token: Token, label: str, limits: Pkcs11Limits = NO_COOL_OFF,
         slot: int | None = None) -> Pkcs11Key:
    return load_pkcs11_key(token.lib, token.slot if slot is None else slot, label, PIN_ENV,
                           limits=limits)


@pytest.mark.parametrize("label", ["capture", "hmac-typed"])
def test_token_hmac_matches_local_hmac_of_the_imported_secret(softhsm: Token, pin: str,
                                                              label: str) -> None:
    key = load_capture_key(softhsm.spec(label))
    secret = softhsm.secrets[label]
    assert key.key_id == reference_hmac(secret, ID_MESSAGE)[:16].hex()
    for message in (b"n", b"nonce|result", bytes(range(256)) * 16):
        assert key.hmac_sha256(message) == reference_hmac(secret, message)


def test_a_key_generated_in_the_token_never_leaves_it(softhsm: Token, pin: str) -> None:
    first = load_capture_key(softhsm.spec("generated"))
    second = load_capture_key(softhsm.spec("generated"))
    assert first.key_id == second.key_id
    assert first.hmac_sha256(b"m") == second.hmac_sha256(b"m")
    assert first.key_id != load_capture_key(softhsm.spec("capture")).key_id
    p11 = softhsm.p11
    with softhsm.admin_session() as session:
        stored = session.get_key(object_class=p11.ObjectClass.SECRET_KEY, label="generated")
        assert stored[p11.Attribute.SENSITIVE] and not stored[p11.Attribute.EXTRACTABLE]
        with pytest.raises(p11.AttributeSensitive):
            stored[p11.Attribute.VALUE]


def test_wrong_label_is_refused_naming_the_field(softhsm: Token, pin: str) -> None:
    with pytest.raises(KeySourceError) as caught:
        load_capture_key(softhsm.spec("absent"))
    assert str(caught.value) == ("hash_only_key.pkcs11.label: no secret key labelled 'absent' "
                                 f"in token 'bitexact-test' (slot {softhsm.slot})")


def test_duplicate_label_is_refused(softhsm: Token, pin: str) -> None:
    with pytest.raises(KeySourceError, match="2 secret keys are labelled 'twice' in token "
                                             "'bitexact-test'; labels must be unique"):
        load_capture_key(softhsm.spec("twice"))


def test_an_aes_key_is_not_a_capture_key(softhsm: Token, pin: str) -> None:
    with pytest.raises(KeySourceError, match="'aes' is a AES key; a capture key is "
                                             "CKK_GENERIC_SECRET or CKK_SHA256_HMAC"):
        load_capture_key(softhsm.spec("aes"))


def test_a_key_without_sign_is_refused(softhsm: Token, pin: str) -> None:
    with pytest.raises(KeySourceError, match="'no-sign' does not allow CKA_SIGN"):
        load_capture_key(softhsm.spec("no-sign"))


def test_a_key_of_another_length_than_32_bytes_is_refused(softhsm: Token, pin: str) -> None:
    with pytest.raises(KeySourceError, match="'long' is 64 bytes; a capture key is 32 bytes"):
        load_capture_key(softhsm.spec("long"))


def test_missing_pin_variable_is_named(softhsm: Token, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PIN_ENV, raising=False)
    with pytest.raises(KeySourceError) as caught:
        load_capture_key(softhsm.spec("capture"))
    assert str(caught.value) == (f"hash_only_key.pkcs11.pin_env: environment variable {PIN_ENV} "
                                 "is not set (it must hold the token's user PIN)")


def test_wrong_pin_is_refused_naming_the_variable(softhsm: Token,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    softhsm.reinitialize()  # login is per process: log every earlier test's session out
    monkeypatch.setenv(PIN_ENV, "not-the-pin")
    with pytest.raises(KeySourceError, match=f"token 'bitexact-test' refused the PIN in {PIN_ENV} "
                                             r"\(PinIncorrect\)"):
        load_capture_key(softhsm.spec("capture"))


def test_unknown_slot_lists_the_slots(softhsm: Token, pin: str) -> None:
    absent = softhsm.slot + 1 if softhsm.slot + 1 != softhsm.doomed_slot else softhsm.slot + 2
    with pytest.raises(KeySourceError, match=rf"pkcs11\.slot: no token in slot {absent} "
                                             rf"\(slots with a token: .*{softhsm.slot} "
                                             r"\('bitexact-test'\)"):
        load_capture_key(softhsm.spec("capture", slot=absent))


def test_missing_library_is_refused(softhsm: Token, pin: str, tmp_path: Path) -> None:
    spec = softhsm.spec("capture")
    spec["pkcs11"]["lib"] = str(tmp_path / "libabsent.so")
    with pytest.raises(KeySourceError, match=r"hash_only_key\.pkcs11\.lib: cannot load PKCS#11 "
                                             "library"):
        load_capture_key(spec)


def test_session_closed_mid_run_makes_the_key_unavailable_until_reconnected(
        softhsm: Token, pin: str) -> None:
    key = load(softhsm, "capture")
    key._key.session.close()  # the session the key was found in is gone
    with pytest.raises(KeyUnavailableError) as caught:
        key.hmac_sha256(b"m")
    assert caught.value.source == "PKCS#11 token slot %d key 'capture'" % softhsm.slot
    assert type(caught.value.cause).__name__ == "SessionHandleInvalid"
    # No cool-off here: the next call reconnects, checks the key id and answers.
    assert key.hmac_sha256(b"m") == reference_hmac(softhsm.secrets["capture"], b"m")


def test_library_finalized_mid_run_makes_the_key_unavailable(softhsm: Token, pin: str) -> None:
    key = load(softhsm, "capture")
    softhsm.p11.lib(softhsm.lib).finalize()  # C_Finalize: the library is torn down under us
    try:
        with pytest.raises(KeyUnavailableError) as caught:
            key.hmac_sha256(b"m")
        assert "not initialized" in str(caught.value.cause)
    finally:
        softhsm.p11.lib(softhsm.lib)  # initializes it again for what follows
    assert key.hmac_sha256(b"m") == reference_hmac(softhsm.secrets["capture"], b"m")


def test_token_removed_mid_run_stays_unavailable(softhsm: Token, pin: str) -> None:
    key = load(softhsm, "doomed", slot=softhsm.doomed_slot)
    assert key.hmac_sha256(b"m") == reference_hmac(softhsm.secrets["doomed"], b"m")
    doomed = [d for d in softhsm.token_dir.iterdir()
              if b"bitexact-doomed" in (d / "token.object").read_bytes()]
    assert len(doomed) == 1
    shutil.rmtree(doomed[0])
    for _ in range(2):  # the failing call, then the reconnect that cannot find it
        with pytest.raises(KeyUnavailableError):
            key.hmac_sha256(b"m")


def test_a_different_key_under_the_same_label_is_never_used(softhsm: Token, pin: str) -> None:
    key = load(softhsm, "swap")
    p11 = softhsm.p11
    with softhsm.admin_session() as session:
        session.get_key(object_class=p11.ObjectClass.SECRET_KEY, label="swap").destroy()
        import_secret(softhsm, session, "swap", bytes(32))
    with pytest.raises(KeyUnavailableError):
        key.hmac_sha256(b"m")  # its object is gone
    with pytest.raises(KeyUnavailableError, match="no longer the key loaded"):
        key.hmac_sha256(b"m")  # reconnected, found another key by the label: refused


def test_cool_off_fails_fast_without_touching_the_token(softhsm: Token, pin: str) -> None:
    key = load(softhsm, "spare", limits=Pkcs11Limits(cool_off=3600))
    key._key.session.close()
    with pytest.raises(KeyUnavailableError) as first:
        key.hmac_sha256(b"m")
    with pytest.raises(KeyUnavailableError, match="failed recently") as second:
        key.hmac_sha256(b"m")
    assert second.value.cause is first.value.cause


def test_oversize_message_is_refused(softhsm: Token, pin: str) -> None:
    key = load(softhsm, "capture")
    with pytest.raises(MessageSizeError):
        key.hmac_sha256(b"m" * 4097)


def test_repr_names_the_key_not_the_pin(softhsm: Token, pin: str) -> None:
    key = load(softhsm, "capture")
    assert pin not in repr(key) and key.key_id in repr(key)


def test_a_hung_call_costs_its_deadline_and_the_runner_is_replaced() -> None:
    """The mechanism that bounds a source that stops answering without failing."""
    runner = CallRunner("test")
    release = threading.Event()
    with pytest.raises(TimeoutError, match="no answer within 0.2 s"):
        runner.run(release.wait, 0.2)
    assert runner.stuck
    runner.retire()
    release.set()
    assert CallRunner("test-2").run(lambda: 42, 5) == 42


def test_a_hung_source_becomes_key_unavailable_then_recovers() -> None:
    release = threading.Event()
    calls = GuardedCalls("test source", "test", deadline=0.2, cool_off=0.0)
    with pytest.raises(KeyUnavailableError) as caught:
        calls.run(release.wait)
    assert isinstance(caught.value.cause, TimeoutError)
    assert caught.value.source == "test source"
    release.set()
    assert calls.run(lambda: b"answer") == b"answer"  # on a fresh thread
