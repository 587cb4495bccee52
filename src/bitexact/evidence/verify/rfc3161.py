"""RFC 3161 timestamp anchors: the token, its signer and the TSA pin (bundle spec §8, §12.1 step 9).

The token is parsed with ``asn1crypto`` and its signature checked with
``cryptography``. Checks run in the order of §12.1; any parse error inside
the token becomes ``malformed timestamp token: {exc!r}``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from bitexact.evidence.verify.encodings import strict_b64decode
from bitexact.evidence.verify.failure import ASN1CRYPTO_MISSING, CRYPTOGRAPHY_MISSING, CheckFailed, MissingLibrary
from bitexact.evidence.verify.pins import Pins

_DIGESTS = ("sha256", "sha384", "sha512")
_SIGNATURE_HASHES = ("sha224", "sha256", "sha384", "sha512")


def check_rfc3161(anchor: dict[str, Any], pins: Pins) -> None:
    """The anchor's own checks: fields, token content, signer, signature, EKU and pin."""
    try:
        from asn1crypto import cms  # noqa: F401  (probe only)
    except ImportError:
        raise MissingLibrary(ASN1CRYPTO_MISSING) from None
    try:
        from cryptography import x509  # noqa: F401
    except ImportError:
        raise MissingLibrary(CRYPTOGRAPHY_MISSING) from None
    if "hash_alg" in anchor and anchor["hash_alg"] != "sha256":
        raise CheckFailed(
            f"rfc3161 anchor declares hash_alg {anchor['hash_alg']!r}"
            " - only sha256 is defined for the message imprint"
        )
    token = strict_b64decode(anchor.get("token"))
    if token is None:
        raise CheckFailed("rfc3161 anchor token is not valid base64")
    try:
        _check_token(token, anchor, pins)
    except CheckFailed:
        raise
    except Exception as exc:  # asn1crypto parses lazily: errors surface on access
        raise CheckFailed(f"malformed timestamp token: {exc!r}") from None


def _check_token(token: bytes, anchor: dict[str, Any], pins: Pins) -> None:
    from asn1crypto import cms, tsp

    info = cms.ContentInfo.load(token, strict=True)
    if info["content_type"].native != "signed_data":
        raise CheckFailed("timestamp token is not CMS SignedData")
    signed_data = info["content"]
    encap = signed_data["encap_content_info"]
    if encap["content_type"].native != "tst_info":
        raise CheckFailed("timestamp token content is not a TSTInfo")
    tst_der = encap["content"].contents
    tst_info = tsp.TSTInfo.load(tst_der, strict=True)
    _check_imprint_and_nonce(tst_info, anchor)
    signer, certificate = _check_signer(signed_data)
    digest = _check_signed_attributes(signer, tst_der)
    _check_signature(signer, certificate, digest)
    if not _has_timestamping_eku(certificate):
        raise CheckFailed("signer certificate lacks the timeStamping extended key usage")
    if pins.tsa_cert is not None:
        _check_pin(certificate, pins.tsa_cert)


def _has_timestamping_eku(certificate: Any) -> bool:
    usage = certificate.extended_key_usage_value
    return usage is not None and "time_stamping" in usage.native


def _check_imprint_and_nonce(tst_info: Any, anchor: dict[str, Any]) -> None:
    imprint = tst_info["message_imprint"]
    if imprint["hash_algorithm"]["algorithm"].native != "sha256":
        raise CheckFailed("unexpected imprint algorithm")
    if imprint["hashed_message"].native != _head_imprint(anchor.get("head_hash")):
        raise CheckFailed(
            "timestamp imprint does not match the head - the token is for a different head hash"
        )
    if "nonce" in anchor:
        nonce = anchor["nonce"]
        if type(nonce) is not int or nonce != tst_info["nonce"].native:
            raise CheckFailed(
                "timestamp nonce does not match the anchor's - the token answers a different request"
            )


def _head_imprint(head_hash: object) -> bytes | None:
    # SHA-256 of the 32 raw head bytes, never of the hex text (§8).
    if not isinstance(head_hash, str):
        return None
    try:
        return hashlib.sha256(bytes.fromhex(head_hash)).digest()
    except ValueError:
        return None


def _check_signer(signed_data: Any) -> tuple[Any, Any]:
    signers = signed_data["signer_infos"]
    if len(signers) != 1:
        raise CheckFailed(f"expected exactly one signer, found {len(signers)}")
    signer = signers[0]
    certificate = _find_certificate(signed_data, signer["sid"])
    if certificate is None:
        raise CheckFailed("signer certificate is not present in the token")
    return signer, certificate


def _find_certificate(signed_data: Any, sid: Any) -> Any:
    certificates = signed_data["certificates"]
    if not certificates:
        return None
    for choice in certificates:
        if choice.name != "certificate":
            continue
        certificate = choice.chosen
        if sid.name == "issuer_and_serial_number":
            wanted = sid.chosen
            if (
                certificate.issuer == wanted["issuer"]
                and certificate.serial_number == wanted["serial_number"].native
            ):
                return certificate
        elif sid.name == "subject_key_identifier":
            if certificate.key_identifier == sid.chosen.native:
                return certificate
    return None


def _check_signed_attributes(signer: Any, tst_der: bytes) -> str:
    attributes = signer["signed_attrs"]
    if not attributes:
        raise CheckFailed("timestamp token has no signed attributes to verify")
    digest: str = signer["digest_algorithm"]["algorithm"].native
    if digest not in _DIGESTS:
        raise CheckFailed(f"unsupported digest algorithm {digest!r}")
    values = {attr["type"].native: attr["values"] for attr in attributes}
    message_digest = values.get("message_digest")
    if not message_digest:
        raise CheckFailed("signed attributes are missing the message-digest")
    if message_digest[0].native != hashlib.new(digest, tst_der).digest():
        raise CheckFailed("signed message-digest does not match the TSTInfo")
    content_type = values.get("content_type")
    if not content_type or content_type[0].native != "tst_info":
        raise CheckFailed("signed content-type attribute is not tst_info")
    return digest


def _check_signature(signer: Any, certificate: Any, digest: str) -> None:
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

    algorithm = signer["signature_algorithm"]["algorithm"].native
    family, _, hash_name = _signature_scheme(algorithm, digest)
    key = x509.load_der_x509_certificate(certificate.dump()).public_key()
    # The signature covers the signed attributes' DER re-tagged as a SET (RFC 5652 §5.4).
    message = b"\x31" + signer["signed_attrs"].dump()[1:]
    signature = signer["signature"].native
    chosen = getattr(hashes, hash_name.upper())()
    try:
        if family == "rsa" and isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, message, padding.PKCS1v15(), chosen)
        elif family == "ec" and isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, message, ec.ECDSA(chosen))
        else:
            raise CheckFailed("signature algorithm does not match the key")
    except InvalidSignature:
        raise CheckFailed("timestamp signature does not verify") from None


def _signature_scheme(algorithm: object, digest: str) -> tuple[str, str, str]:
    """``(family, algorithm, hash)`` for the accepted schemes, else the unsupported message."""
    if algorithm == "rsassa_pkcs1v15":
        return "rsa", algorithm, digest
    if isinstance(algorithm, str):
        hash_name, _, family = algorithm.partition("_")
        if hash_name in _SIGNATURE_HASHES and family in ("rsa", "ecdsa"):
            return ("rsa" if family == "rsa" else "ec"), algorithm, hash_name
    raise CheckFailed(f"unsupported signature algorithm {algorithm!r}")


def _check_pin(certificate: Any, pinned: bytes) -> None:
    from asn1crypto import pem
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature

    try:
        der = pem.unarmor(pinned)[2] if pem.detect(pinned) else pinned
        trusted = x509.load_der_x509_certificate(der)
    except Exception:
        raise CheckFailed("the pinned TSA certificate could not be parsed") from None
    signer_der = certificate.dump()
    if hashlib.sha256(signer_der).digest() == hashlib.sha256(der).digest():
        return
    signer = x509.load_der_x509_certificate(signer_der)
    try:
        signer.verify_directly_issued_by(trusted)
    except (ValueError, TypeError, InvalidSignature):
        raise CheckFailed(
            "signer certificate is neither the trusted TSA certificate nor directly issued by it"
        ) from None
