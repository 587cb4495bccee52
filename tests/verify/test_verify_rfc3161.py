"""RFC 3161 anchors (§8, §12.1 step 9) against a real local TSA made with ``openssl ts``."""

from __future__ import annotations

import base64
import hashlib
import sys
from typing import Any

import pytest
from asn1crypto import cms

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_bundle

from .conftest import sample_run
from .producer import Run
from .tsa import Forge, LocalTSA, algorithm, drop_attr, set_attr

OK_TAIL = "sealed, unsigned, 1 RFC 3161 timestamp(s)"
CAVEAT = " (RFC 3161 timestamps not pinned - pass --expect-tsa to trust the time)"


def line(doc: object, pins: Pins = Pins()) -> str:
    return verify_bundle(doc, pins).line


@pytest.fixture
def run() -> Run:
    return sample_run(None)


def stamped(run: Run, der: bytes, nonce: int | None = 4711, **fields: Any) -> dict[str, Any]:
    run.anchors = []
    run.rfc3161_anchor(der, nonce=nonce)
    run.anchors[0].update(fields)
    return run.bundle()


def test_valid_token_rsa(run: Run, tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.head))
    assert line(bundle) == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, " + OK_TAIL + CAVEAT
    )


def test_valid_token_ecdsa(run: Run, tsa_ec: LocalTSA) -> None:
    bundle = stamped(run, tsa_ec.stamp(run.head))
    assert line(bundle).endswith(OK_TAIL + CAVEAT)


def test_token_without_nonce_and_anchor_without_nonce(run: Run, tsa: LocalTSA) -> None:
    assert line(stamped(run, tsa.stamp(run.head, nonce=None), nonce=None)).endswith(OK_TAIL + CAVEAT)
    # An anchor that omits its nonce is not compared with the token's.
    assert line(stamped(run, tsa.stamp(run.head, nonce=99), nonce=None)).endswith(OK_TAIL + CAVEAT)


def test_sha256_imprint_even_for_a_sha256_chain(tsa: LocalTSA) -> None:
    run = sample_run(None, alg="sha256")
    assert line(stamped(run, tsa.stamp(run.head))).endswith(OK_TAIL + CAVEAT)


def test_tsa_pin_matches_the_issuing_ca_or_the_tsa_itself(run: Run, tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.head))
    assert line(bundle, Pins(tsa_cert=tsa.ca_pem)).endswith(OK_TAIL)
    assert line(bundle, Pins(tsa_cert=tsa.tsa_pem)).endswith(OK_TAIL)
    assert line(bundle, Pins(tsa_cert=tsa.der("ca.crt"))).endswith(OK_TAIL)


def test_tsa_pin_mismatch(run: Run, tsa: LocalTSA, unrelated_tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.head))
    for pinned in (unrelated_tsa.ca_pem, unrelated_tsa.tsa_pem):
        assert line(bundle, Pins(tsa_cert=pinned)) == (
            "FAIL: anchor 0: signer certificate is neither the trusted TSA certificate nor directly issued by it"
        )


def test_tsa_pin_that_cannot_be_parsed(run: Run, tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.head))
    assert line(bundle, Pins(tsa_cert=b"not a certificate")) == (
        "FAIL: anchor 0: the pinned TSA certificate could not be parsed"
    )


def test_token_for_another_head(run: Run, tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.entries[0]["hash"]))
    assert line(bundle) == (
        "FAIL: anchor 0: timestamp imprint does not match the head - the token is for a different head hash"
    )


def test_imprint_over_hex_text_is_refused(run: Run, tsa: LocalTSA) -> None:
    # A TSA asked to stamp the head's hex text (not its 32 raw bytes) answers for another imprint.
    forge = Forge(tsa.stamp(run.head), tsa)
    imprint = hashlib.sha256(run.head.encode("ascii")).digest()
    forge.edit_tst(lambda tst: tst["message_imprint"].update(hashed_message=imprint), update_digest=True).resign()
    bundle = stamped(run, forge.dump())
    assert line(bundle).startswith("FAIL: anchor 0: timestamp imprint does not match the head")


def test_wrong_nonce(run: Run, tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.head, nonce=4711), nonce=4712)
    assert line(bundle) == (
        "FAIL: anchor 0: timestamp nonce does not match the anchor's - the token answers a different request"
    )
    bundle = stamped(run, tsa.stamp(run.head, nonce=None), nonce=4711)
    assert line(bundle).startswith("FAIL: anchor 0: timestamp nonce does not match")


def test_declared_hash_alg_must_be_sha256(run: Run, tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.head), hash_alg="sha512")
    assert line(bundle) == (
        "FAIL: anchor 0: rfc3161 anchor declares hash_alg 'sha512' - only sha256 is defined for the message imprint"
    )


@pytest.mark.parametrize("token", ["not base64!", "QUJD", "QUI", None, "QUI=\n"])
def test_token_must_be_strict_base64(run: Run, token: object) -> None:
    bundle = stamped(run, b"", token=token)
    if token == "QUJD":  # valid base64 of b"ABC": decodes, then fails to parse
        assert line(bundle).startswith("FAIL: anchor 0: malformed timestamp token: ")
    else:
        assert line(bundle) == "FAIL: anchor 0: rfc3161 anchor token is not valid base64"


def test_garbage_der_is_a_malformed_token(run: Run) -> None:
    bundle = stamped(run, b"\x30\x03\x02\x01")
    assert line(bundle).startswith("FAIL: anchor 0: malformed timestamp token: ")


def test_token_that_is_not_signed_data(run: Run) -> None:
    token = cms.ContentInfo({"content_type": "data", "content": b"hello"}).dump()
    assert line(stamped(run, token)) == "FAIL: anchor 0: timestamp token is not CMS SignedData"


def test_token_content_that_is_not_tst_info(run: Run, tsa: LocalTSA) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    forge.signed_data["encap_content_info"]["content_type"] = "data"
    assert line(stamped(run, forge.dump())) == "FAIL: anchor 0: timestamp token content is not a TSTInfo"


def test_unexpected_imprint_algorithm(run: Run, tsa: LocalTSA) -> None:
    assert line(stamped(run, tsa.stamp(run.head, imprint="sha512"))) == (
        "FAIL: anchor 0: unexpected imprint algorithm"
    )


def test_exactly_one_signer(run: Run, tsa: LocalTSA) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    signer = forge.signer
    forge.signed_data["signer_infos"] = cms.SignerInfos([signer.copy(), signer.copy()])
    assert line(stamped(run, forge.dump())) == "FAIL: anchor 0: expected exactly one signer, found 2"


def test_signer_certificate_must_be_embedded(run: Run, tsa: LocalTSA) -> None:
    token = tsa.stamp(run.head, cert_req=False)
    assert line(stamped(run, token)) == "FAIL: anchor 0: signer certificate is not present in the token"


def test_signed_attributes_are_required(run: Run, tsa: LocalTSA) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    forge.signer["signed_attrs"] = None
    assert line(stamped(run, forge.dump())) == "FAIL: anchor 0: timestamp token has no signed attributes to verify"


def test_unsupported_digest_algorithm(run: Run, tsa: LocalTSA) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    forge.signer["digest_algorithm"] = algorithm("sha1")
    assert line(stamped(run, forge.dump())) == "FAIL: anchor 0: unsupported digest algorithm 'sha1'"


def test_message_digest_attribute_is_required(run: Run, tsa: LocalTSA) -> None:
    token = Forge(tsa.stamp(run.head), tsa).edit_attrs(lambda a: drop_attr(a, "message_digest")).resign().dump()
    assert line(stamped(run, token)) == "FAIL: anchor 0: signed attributes are missing the message-digest"


def test_message_digest_must_match_the_tst_info(run: Run, tsa: LocalTSA) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    forge.edit_tst(lambda tst: tst.update(serial_number=123456), update_digest=False).resign()
    assert line(stamped(run, forge.dump())) == "FAIL: anchor 0: signed message-digest does not match the TSTInfo"


def test_content_type_attribute_must_be_tst_info(run: Run, tsa: LocalTSA) -> None:
    token = Forge(tsa.stamp(run.head), tsa).edit_attrs(lambda a: set_attr(a, "content_type", "data")).resign().dump()
    assert line(stamped(run, token)) == "FAIL: anchor 0: signed content-type attribute is not tst_info"


def test_re_signed_token_with_edited_tst_info_verifies(run: Run, tsa: LocalTSA) -> None:
    # The forger holds the TSA key here: proves the checks above fail for their own reason.
    forge = Forge(tsa.stamp(run.head), tsa)
    forge.edit_tst(lambda tst: tst.update(serial_number=123456), update_digest=True).resign()
    assert line(stamped(run, forge.dump())).endswith(OK_TAIL + CAVEAT)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("rsassa_pss", "unsupported signature algorithm 'rsassa_pss'"),
        ("sha1_rsa", "unsupported signature algorithm 'sha1_rsa'"),
        ("sha256_ecdsa", "signature algorithm does not match the key"),
    ],
)
def test_signature_algorithm(run: Run, tsa: LocalTSA, name: str, message: str) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    forge.signer["signature_algorithm"] = {"algorithm": name}
    assert line(stamped(run, forge.dump())) == f"FAIL: anchor 0: {message}"


def test_explicit_sha256_rsa_algorithm_verifies(run: Run, tsa: LocalTSA) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    forge.signer["signature_algorithm"] = {"algorithm": "sha256_rsa"}
    assert line(stamped(run, forge.dump())).endswith(OK_TAIL + CAVEAT)


def test_ecdsa_algorithm_with_rsa_name_does_not_match(run: Run, tsa_ec: LocalTSA) -> None:
    forge = Forge(tsa_ec.stamp(run.head), tsa_ec)
    forge.signer["signature_algorithm"] = {"algorithm": "sha256_rsa"}
    assert line(stamped(run, forge.dump())) == "FAIL: anchor 0: signature algorithm does not match the key"


def test_altered_timestamp_signature(run: Run, tsa: LocalTSA) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    signature = bytearray(forge.signer["signature"].native)
    signature[-1] ^= 1
    forge.signer["signature"] = bytes(signature)
    assert line(stamped(run, forge.dump())) == "FAIL: anchor 0: timestamp signature does not verify"


def test_signer_certificate_needs_the_timestamping_eku(run: Run, tsa: LocalTSA) -> None:
    from asn1crypto import x509

    forge = Forge(tsa.stamp(run.head), tsa)
    plain = x509.Certificate.load(tsa.der("plain.crt"))
    forge.signed_data["certificates"] = cms.CertificateSet([cms.CertificateChoices({"certificate": plain})])
    forge.signer["sid"] = cms.SignerIdentifier({"issuer_and_serial_number": {
        "issuer": plain.issuer, "serial_number": plain.serial_number}})
    forge.resign()
    assert line(stamped(run, forge.dump())) == (
        "FAIL: anchor 0: signer certificate lacks the timeStamping extended key usage"
    )


def test_signer_found_by_subject_key_identifier(run: Run, tsa: LocalTSA) -> None:
    forge = Forge(tsa.stamp(run.head), tsa)
    certificate = forge.signed_data["certificates"][0].chosen
    forge.signer["sid"] = cms.SignerIdentifier({"subject_key_identifier": certificate.key_identifier})
    forge.resign()
    assert line(stamped(run, forge.dump())).endswith(OK_TAIL + CAVEAT)


def test_rfc3161_binding_runs_after_token_checks(run: Run, tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.head), steps=3)
    assert line(bundle) == "FAIL: anchor 0: anchor head does not match the bundle chain at the anchored step"
    bundle = stamped(run, tsa.stamp(run.head), run_id="x")
    assert line(bundle) == "FAIL: anchor 0: anchor run_id does not match the bundle"


def test_rfc3161_anchor_is_no_recorder_material(run: Run, tsa: LocalTSA, recorder_key: SigningKey) -> None:
    bundle = stamped(run, tsa.stamp(run.head))
    assert line(bundle, Pins(recorder_keys=frozenset({recorder_key.public_hex}))) == (
        "FAIL: a recorder key was required but the bundle carries no checkpoints or worm anchors for it to have signed"
    )


def test_anchor_token_is_base64_of_the_token_not_the_response(run: Run, tsa: LocalTSA) -> None:
    bundle = stamped(run, tsa.stamp(run.head))
    assert base64.b64decode(bundle["anchors"][0]["token"])[:1] == b"\x30"


@pytest.mark.parametrize(
    ("module", "message"),
    [
        ("asn1crypto", "verifying RFC 3161 anchors requires 'asn1crypto' - pip install asn1crypto"),
        ("cryptography", "verifying signatures requires the 'cryptography' package - pip install cryptography"),
    ],
)
def test_missing_library_message_stands_alone(
    run: Run, tsa: LocalTSA, monkeypatch: pytest.MonkeyPatch, module: str, message: str
) -> None:
    bundle = stamped(run, tsa.stamp(run.head))
    monkeypatch.setitem(sys.modules, module, None)  # what Python does for a package that is not installed
    assert line(bundle) == f"FAIL: {message}"
