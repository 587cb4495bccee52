"""The cryptography layer (src/bitexact/crypto): regression tests, each for a bug a review found.

Contracts: the bundle format §2 and the capture contract (docs/bundle-format.md, docs/capture.md),
docs/capture-keys.md, docs/sdk.md, docs/capture.md.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bitexact.cli import cli
from bitexact.crypto.ed25519 import SigningKey
from bitexact.crypto.hostkey import load_host_key
from bitexact.errors import KeyMaterialError

# -- helpers ---------------------------------------------------------------------------------


def _pem_with_unknown_key_oid() -> bytes:
    """A well-formed PKCS#8 PEM whose algorithm OID (1.3.101.99) no library knows.

    Made from a real ed25519 PKCS#8 key with its OID 1.3.101.112 (06 03 2b 65 70)
    changed: what a key of a type `cryptography` does not support looks like.
    """
    der = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert bytes.fromhex("06032b6570") in der
    der = der.replace(bytes.fromhex("06032b6570"), bytes.fromhex("06032b6563"))
    body = base64.b64encode(der).decode("ascii")
    return f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n".encode("ascii")


def _invoke(home: Path, *args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(
        cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200", **(env or {})}
    )


# -- ed25519 key files -----------------------------------------------------------------------


def test_from_pem_of_unsupported_key_type_is_key_material_error() -> None:
    """SigningKey.from_pem promises KeyMaterialError for anything that is not an ed25519 PEM key.

    Before the fix `cryptography`'s UnsupportedAlgorithm escapes it (only ValueError and
    TypeError are caught).
    """
    with pytest.raises(KeyMaterialError):
        SigningKey.from_pem(_pem_with_unknown_key_oid(), source="recorder.key")


def test_keys_show_with_recorder_key_of_unknown_type_gives_error_line_not_traceback(tmp_path: Path) -> None:
    """`bitexact keys show` over a recorder.key PEM of an unknown key type must exit 1 with one error line."""
    home = tmp_path / "home"
    assert _invoke(home, "keys", "init").exit_code == 0
    key_file = home / "keys" / "recorder.key"
    key_file.unlink()
    key_file.write_bytes(_pem_with_unknown_key_oid())
    os.chmod(key_file, 0o600)

    result = _invoke(home, "keys", "show")

    # A clean failure is SystemExit(1) from fail(); a traceback leaves the raw exception here.
    assert isinstance(result.exception, SystemExit), f"uncaught {result.exception!r}"
    assert result.exit_code == 1
    assert "recorder.key" in result.output


# -- the host key ----------------------------------------------------------------------------


def test_host_key_of_data_directory_dot_is_beside_it_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BITEXACT_HOME=. (or --home .) names the current directory as the data directory.

    capture-controls.md: the host key is "<data directory>.host.key beside the
    data directory". For data directory /x/data that is /x/data.host.key. Before the fix
    host_key_path takes Path(".").name (empty) and Path(".").parent ("."), so the
    key would be ./.host.key *inside* the data directory, and load_host_key
    refuses with HostKeyError: no journal can be sealed at all.
    """
    monkeypatch.delenv("BITEXACT_HOST_KEY", raising=False)
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.chdir(data)

    key = load_host_key(Path("."))

    assert key.path.resolve() == tmp_path / "data.host.key"
    assert (tmp_path / "data.host.key").is_file()
    assert not (data / ".host.key").exists()


# -- BITEXACT_HASH_ALG -----------------------------------------------------------------------


def test_sdk_gap_for_unsupported_hash_alg_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unknown BITEXACT_HASH_ALG must be refused with a clear message naming the variable.

    The CLI says `BITEXACT_HASH_ALG='md5' is not a supported hash`, but the SDK's
    run-start gap (the only thing the agent's operator sees) says just
    "the run could not start, so nothing is recorded: BitExactError": default_alg
    raises a bare BitExactError, whose message sdk.failures.describe drops (it
    keeps the messages of SettingError, the class for "an environment setting
    BitExact cannot use; the message names the variable").
    """
    import bitexact

    monkeypatch.setenv("BITEXACT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BITEXACT_HASH_ALG", "md5")
    with bitexact.run(name="hash-alg") as r:
        pass
    details = [gap.detail for gap in r.failures.gaps]
    assert details, "the run that could not start declared no gap"
    assert any("BITEXACT_HASH_ALG" in detail for detail in details), details


# -- capture key files -----------------------------------------------------------------------


def test_keygen_under_a_file_does_not_claim_the_key_already_exists(tmp_path: Path) -> None:
    """generate_key_file's "already exists; refusing to overwrite a key" must mean a key is there.

    For -o A/k.key where A is a regular file, nothing exists at A/k.key, but
    path.parent.mkdir raises FileExistsError (about A), which the handler for an
    existing key file catches: the user is told to rotate a key that does not exist.
    """
    from bitexact.crypto.keysources import KeySourceError, generate_key_file

    blocker = tmp_path / "secrets"
    blocker.write_text("not a directory\n")
    target = blocker / "capture.key"

    with pytest.raises(KeySourceError) as caught:
        generate_key_file(target)

    assert not target.exists()
    assert "already exists" not in str(caught.value), str(caught.value)


@pytest.mark.parametrize("target", ["keys/recorder.key", "bitexact.db", "bitexact.db-wal"])
def test_trust_file_never_overwrites_the_key_or_the_store(tmp_path: Path, target: str) -> None:
    home = tmp_path / "home"
    assert _invoke(home, "keys", "init").exit_code == 0
    assert _invoke(home, "runs").exit_code == 0  # the store exists
    path = home / target
    before = path.read_bytes() if path.exists() else None
    result = _invoke(home, "keys", "trust-file", "-o", str(path))
    assert result.exit_code == 2
    assert "one of BitExact's own files" in result.output
    assert (path.read_bytes() if path.exists() else None) == before
    assert _invoke(home, "keys", "show").exit_code == 0
