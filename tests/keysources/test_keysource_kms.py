"""AWS KMS key sources against a local KMS speaking the real JSON 1.1 protocol with SigV4."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from keysource_support import Kms, reference_hmac

from bitexact.crypto.keysources import KeySourceError, KeyUnavailableError, load_capture_key
from bitexact.crypto.keysources.base import MessageSizeError
from bitexact.crypto.keysources.kms import KmsHmacKey, KmsLimits, load_kms_hmac

SECRET = bytes(range(100, 132))
KEY_ID = reference_hmac(SECRET, b"bitexact capture key id/1")[:16].hex()
FAST = KmsLimits(connect_timeout=0.5, read_timeout=0.5, max_attempts=2, cool_off=0.0)


def hmac_key(kms: Kms, alias: str = "alias/capture") -> str:
    return kms.state.create_key("HMAC_256", SECRET, alias=alias).key_id


# -- kms_hmac ----------------------------------------------------------------------------------

def test_generate_mac_equals_local_hmac_with_the_same_secret(kms: Kms) -> None:
    hmac_key(kms)
    key = load_capture_key({"kms_hmac": "alias/capture"})
    assert key.key_id == KEY_ID
    for message in (b"n", b"nonce|result", bytes(range(256)) * 16):
        assert key.hmac_sha256(message) == reference_hmac(SECRET, message)
    assert kms.state.calls == ["GenerateMac"] * 4  # the key never left KMS


def test_key_id_arn_alias_and_alias_arn_name_the_same_key(kms: Kms) -> None:
    key_uuid = hmac_key(kms)
    arn = kms.state.arn(key_uuid)
    refs = [key_uuid, arn, "alias/capture", "arn:aws:kms:us-east-1:111122223333:alias/capture"]
    keys = [load_capture_key({"kms_hmac": ref}) for ref in refs]
    assert {k.key_id for k in keys} == {KEY_ID}
    assert {k.key_arn for k in keys} == {arn}  # type: ignore[attr-defined]


def test_the_resolved_key_is_pinned_when_its_alias_moves(kms: Kms) -> None:
    hmac_key(kms)
    key = load_capture_key({"kms_hmac": "alias/capture"})
    other = kms.state.create_key("HMAC_256")
    kms.state.aliases["alias/capture"] = other.key_id
    assert key.hmac_sha256(b"m") == reference_hmac(SECRET, b"m")


@pytest.mark.parametrize("ref, detail", [
    ("alias/absent", "Alias arn:aws:kms:us-east-1:111122223333:alias/absent is not found."),
    ("not-a-key", "Invalid keyId 'not-a-key'"),
    ("1234abcd-12ab-34cd-56ef-1234567890ab",
     "Key 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab' "
     "does not exist"),
])
def test_unknown_key_is_refused_at_load(kms: Kms, ref: str, detail: str) -> None:
    with pytest.raises(KeySourceError) as caught:
        load_capture_key({"kms_hmac": ref})
    assert str(caught.value) == (f"capture key kms_hmac {ref}: KMS GenerateMac failed: "
                                 "NotFoundException: no such key or alias in this account and "
                                 f"region ({detail})")


def test_an_encryption_key_is_not_an_hmac_key(kms: Kms) -> None:
    key = kms.state.create_key("SYMMETRIC_DEFAULT")
    with pytest.raises(KeySourceError, match="InvalidKeyUsageException: not an HMAC_256 key .*"
                                             "ENCRYPT_DECRYPT which is not valid for GenerateMac"):
        load_capture_key({"kms_hmac": key.key_id})


def test_an_hmac_384_key_is_refused(kms: Kms) -> None:
    key = kms.state.create_key("HMAC_384")
    with pytest.raises(KeySourceError, match="InvalidKeyUsageException.*Algorithm HMAC_SHA_256 "
                                             "is incompatible with key spec HMAC_384"):
        load_capture_key({"kms_hmac": key.key_id})


@pytest.mark.parametrize("state, code", [("Disabled", "DisabledException"),
                                         ("PendingDeletion", "KMSInvalidStateException")])
def test_a_key_not_enabled_is_refused_at_load(kms: Kms, state: str, code: str) -> None:
    kms.state.keys[hmac_key(kms)].state = state
    with pytest.raises(KeySourceError, match=f"KMS GenerateMac failed: {code}"):
        load_capture_key({"kms_hmac": "alias/capture"})


def test_server_stopped_mid_run_makes_the_key_unavailable(kms: Kms) -> None:
    hmac_key(kms)
    key = load_kms_hmac("alias/capture", limits=FAST)
    assert key.hmac_sha256(b"before") == reference_hmac(SECRET, b"before")
    kms.server.stop()
    with pytest.raises(KeyUnavailableError) as caught:
        key.hmac_sha256(b"after")
    assert caught.value.source == f"AWS KMS HMAC key {key.key_arn}"
    assert type(caught.value.cause).__name__ == "EndpointConnectionError"
    kms.restart()  # KMS back: the next call answers again
    assert key.hmac_sha256(b"after") == reference_hmac(SECRET, b"after")


def test_a_stalled_server_costs_a_bounded_wait(kms: Kms) -> None:
    hmac_key(kms)
    key = load_kms_hmac("alias/capture", limits=FAST)
    kms.server.hang()
    with pytest.raises(KeyUnavailableError) as caught:
        key.hmac_sha256(b"m")
    assert type(caught.value.cause).__name__ == "ReadTimeoutError"


def test_after_a_failure_calls_fail_fast_during_the_cool_off(kms: Kms) -> None:
    hmac_key(kms)
    key = load_kms_hmac("alias/capture", limits=KmsLimits(cool_off=3600))
    kms.state.keys[key.key_arn.rsplit("/", 1)[1]].state = "Disabled"
    with pytest.raises(KeyUnavailableError) as first:
        key.hmac_sha256(b"m")
    calls = len(kms.state.calls)
    kms.state.keys[key.key_arn.rsplit("/", 1)[1]].state = "Enabled"
    with pytest.raises(KeyUnavailableError, match="failed recently") as second:
        key.hmac_sha256(b"m")
    assert len(kms.state.calls) == calls  # no request was made
    assert second.value.cause is first.value.cause


def test_key_disabled_mid_run_makes_it_unavailable(kms: Kms) -> None:
    key_uuid = hmac_key(kms)
    key = load_kms_hmac("alias/capture", limits=FAST)
    kms.state.keys[key_uuid].state = "Disabled"
    with pytest.raises(KeyUnavailableError, match="DisabledException"):
        key.hmac_sha256(b"m")


def test_concurrent_callers_each_get_their_own_mac(kms: Kms) -> None:
    hmac_key(kms)
    key = load_capture_key({"kms_hmac": "alias/capture"})
    messages = [f"field-{i}".encode() for i in range(24)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        macs = list(pool.map(key.hmac_sha256, messages))
    assert macs == [reference_hmac(SECRET, m) for m in messages]


def test_oversize_message_is_refused_before_any_request(kms: Kms) -> None:
    hmac_key(kms)
    key = load_capture_key({"kms_hmac": "alias/capture"})
    calls = len(kms.state.calls)
    with pytest.raises(MessageSizeError):
        key.hmac_sha256(b"m" * 4097)
    assert len(kms.state.calls) == calls


def test_no_region_is_refused_naming_aws_region(kms: Kms) -> None:
    kms.monkeypatch.delenv("AWS_REGION")
    with pytest.raises(KeySourceError, match="no AWS region; set AWS_REGION"):
        load_capture_key({"kms_hmac": "alias/capture"})


def test_a_key_arn_carries_its_own_region(kms: Kms) -> None:
    arn = kms.state.arn(hmac_key(kms))
    kms.monkeypatch.setenv("AWS_REGION", "eu-west-1")  # SigV4 would be scoped to the wrong one
    assert load_capture_key({"kms_hmac": arn}).key_id == KEY_ID
    with pytest.raises(KeySourceError, match="InvalidSignatureException"):
        load_capture_key({"kms_hmac": "alias/capture"})


def test_no_credentials_is_refused_saying_where_they_come_from(kms: Kms) -> None:
    kms.monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    kms.monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(KeySourceError, match="no AWS credentials"):
        load_capture_key({"kms_hmac": "alias/capture"})


def test_a_key_reference_kms_cannot_take_is_refused(kms: Kms) -> None:
    with pytest.raises(KeySourceError, match="GenerateMac failed: ValidationException: refused "
                                             ".*length less than or equal to 2048"):
        load_capture_key({"kms_hmac": "alias/" + "x" * 3000})


def test_aws_endpoint_url_kms_is_used_and_bitexact_kms_endpoint_wins(kms: Kms) -> None:
    hmac_key(kms)
    kms.monkeypatch.delenv("BITEXACT_KMS_ENDPOINT")
    kms.monkeypatch.setenv("AWS_ENDPOINT_URL_KMS", kms.server.endpoint)
    assert load_capture_key({"kms_hmac": "alias/capture"}).key_id == KEY_ID
    kms.monkeypatch.setenv("AWS_ENDPOINT_URL_KMS", "http://127.0.0.1:9")  # discard port
    kms.monkeypatch.setenv("BITEXACT_KMS_ENDPOINT", kms.server.endpoint)
    assert load_capture_key({"kms_hmac": "alias/capture"}).key_id == KEY_ID


def test_unreachable_kms_at_load_is_a_key_source_error(kms: Kms) -> None:
    kms.monkeypatch.setenv("BITEXACT_KMS_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(KeySourceError, match="cannot reach AWS KMS at http://127.0.0.1:9"):
        load_kms_hmac("alias/capture", limits=FAST)


def test_wrong_secret_key_fails_sigv4(kms: Kms) -> None:
    hmac_key(kms)
    kms.monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    with pytest.raises(KeySourceError, match="InvalidSignatureException"):
        load_capture_key({"kms_hmac": "alias/capture"})


def test_unknown_access_key_is_unrecognized(kms: Kms) -> None:
    hmac_key(kms)
    kms.monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSOMEONEELSE")
    with pytest.raises(KeySourceError, match="UnrecognizedClientException"):
        load_capture_key({"kms_hmac": "alias/capture"})


def _raw_post(kms: Kms, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], dict]:
    request = urllib.request.Request(kms.server.endpoint + "/", data=body, headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def test_local_kms_refuses_an_unsigned_request_as_aws_does(kms: Kms) -> None:
    key_uuid = hmac_key(kms)
    body = json.dumps({"KeyId": key_uuid, "MacAlgorithm": "HMAC_SHA_256",
                       "Message": base64.b64encode(b"m").decode()}).encode()
    status, headers, payload = _raw_post(kms, {
        "X-Amz-Target": "TrentService.GenerateMac",
        "Content-Type": "application/x-amz-json-1.1"}, body)
    assert status == 400
    assert headers["Content-Type"] == "application/x-amz-json-1.1"
    assert payload["__type"] == "MissingAuthenticationTokenException"
    assert kms.state.calls == []


def test_local_kms_speaks_json_1_1_with_base64_blobs(kms: Kms) -> None:
    """A signed request built by botocore's own signer, read back on the wire."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    key_uuid = hmac_key(kms)
    body = json.dumps({"KeyId": key_uuid, "MacAlgorithm": "HMAC_SHA_256",
                       "Message": base64.b64encode(b"wire").decode()}).encode()
    request = AWSRequest("POST", kms.server.endpoint + "/", data=body, headers={
        "X-Amz-Target": "TrentService.GenerateMac",
        "Content-Type": "application/x-amz-json-1.1"})
    SigV4Auth(Credentials(kms.state.access_key, kms.state.secret_key), "kms",
              kms.state.region).add_auth(request)
    status, _, payload = _raw_post(kms, dict(request.headers), body)
    assert status == 200
    assert base64.b64decode(payload["Mac"]) == reference_hmac(SECRET, b"wire")
    assert payload == {"Mac": payload["Mac"], "MacAlgorithm": "HMAC_SHA_256",
                       "KeyId": kms.state.arn(key_uuid)}


# -- kms_ciphertext ----------------------------------------------------------------------------

def encrypted_key_file(kms: Kms, path: Path, plaintext: bytes = SECRET, *,
                       as_base64: bool = False, mode: int = 0o600) -> Path:
    wrapping = kms.state.create_key("SYMMETRIC_DEFAULT", alias="alias/wrap")
    blob = kms.boto_client().encrypt(KeyId=wrapping.key_id, Plaintext=plaintext)["CiphertextBlob"]
    path.write_bytes(base64.b64encode(blob) + b"\n" if as_base64 else blob)
    path.chmod(mode)
    return path


@pytest.mark.parametrize("as_base64", [False, True])
def test_kms_encrypted_file_decrypts_once_and_is_held_in_process(kms: Kms, tmp_path: Path,
                                                                 as_base64: bool) -> None:
    path = encrypted_key_file(kms, tmp_path / "capture.key.enc", as_base64=as_base64)
    key = load_capture_key({"kms_ciphertext": str(path)})
    assert key.key_id == KEY_ID
    kms.server.stop()  # held in process: KMS is not needed any more
    assert key.hmac_sha256(b"m") == reference_hmac(SECRET, b"m")
    assert kms.state.calls == ["Encrypt", "Decrypt"]


def test_tampered_ciphertext_is_refused(kms: Kms, tmp_path: Path) -> None:
    path = encrypted_key_file(kms, tmp_path / "k.enc")
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 1
    path.write_bytes(bytes(blob))
    with pytest.raises(KeySourceError, match=f"KMS-encrypted capture key file {path}: KMS "
                                             "Decrypt failed: InvalidCiphertextException"):
        load_capture_key({"kms_ciphertext": str(path)})


def test_ciphertext_of_the_wrong_length_is_refused(kms: Kms, tmp_path: Path) -> None:
    path = encrypted_key_file(kms, tmp_path / "k.enc", plaintext=SECRET[:16])
    with pytest.raises(KeySourceError, match="decrypted to 16 bytes, expected a 32-byte"):
        load_capture_key({"kms_ciphertext": str(path)})


def test_ciphertext_under_a_disabled_key_is_refused(kms: Kms, tmp_path: Path) -> None:
    path = encrypted_key_file(kms, tmp_path / "k.enc")
    kms.state.keys[kms.state.aliases["alias/wrap"]].state = "Disabled"
    with pytest.raises(KeySourceError, match="Decrypt failed: DisabledException"):
        load_capture_key({"kms_ciphertext": str(path)})


def test_ciphertext_file_others_may_read_but_never_write(kms: Kms, tmp_path: Path) -> None:
    assert load_capture_key({"kms_ciphertext": str(
        encrypted_key_file(kms, tmp_path / "r.enc", mode=0o644))}).key_id == KEY_ID
    path = encrypted_key_file(kms, tmp_path / "w.enc", mode=0o662)
    with pytest.raises(KeySourceError, match="let others replace the key"):
        load_capture_key({"kms_ciphertext": str(path)})


def test_empty_or_missing_ciphertext_file(kms: Kms, tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "empty").chmod(0o600)
    with pytest.raises(KeySourceError, match="empty file, expected a KMS ciphertext"):
        load_capture_key({"kms_ciphertext": str(tmp_path / "empty")})
    with pytest.raises(KeySourceError, match="no such file"):
        load_capture_key({"kms_ciphertext": str(tmp_path / "absent")})


def test_kms_hmac_key_is_a_frozen_record(kms: Kms) -> None:
    hmac_key(kms)
    key = load_capture_key({"kms_hmac": "alias/capture"})
    assert isinstance(key, KmsHmacKey)
    with pytest.raises(AttributeError):
        key.key_id = "0" * 32  # type: ignore[misc]
