"""A real local RFC 3161 timestamp authority made with ``openssl ts`` at test time, plus a token forger.

The CA and TSA certificates are made by the openssl CLI; requests are built
with asn1crypto (so the nonce can be a safe integer, §8) and answered by
``openssl ts -reply -token_out``. :class:`Forge` edits a real token and
re-signs it with the TSA key, to reach the checks an honest TSA never trips.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from asn1crypto import algos, cms, tsp
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

_CONFIG = """
[req]
distinguished_name = dn
[dn]
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[tsa_ext]
basicConstraints = critical,CA:FALSE
extendedKeyUsage = critical,timeStamping
keyUsage = critical,digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[plain_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
[tsa]
default_tsa = tsa_config1
[tsa_config1]
serial = {dir}/serial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 1.2.3.4.5
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _newkey(kind: str) -> str:
    return "rsa:2048" if kind == "rsa" else "ec"


class LocalTSA:
    """A CA, a TSA certificate (EKU timeStamping) issued by it, and ``stamp``."""

    def __init__(self, directory: Path, kind: str = "rsa", name: str = "Test") -> None:
        self.dir = directory
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "tsa.cnf").write_text(_CONFIG.format(dir=directory))
        (directory / "serial").write_text("01\n")
        extra = [] if kind == "rsa" else ["-pkeyopt", "ec_paramgen_curve:P-256"]
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
                 "-subj", f"/CN={name} CA", "-days", "3650", "-config", "tsa.cnf", "-extensions", "ca_ext",
                 cwd=directory)
        _openssl("req", "-new", "-newkey", _newkey(kind), *extra, "-nodes", "-keyout", "tsa.key",
                 "-out", "tsa.csr", "-subj", f"/CN={name} TSA", "-config", "tsa.cnf", cwd=directory)
        self._issue("tsa.crt", "tsa_ext")
        self._issue("plain.crt", "plain_ext")  # same key, no EKU: for the EKU check

    def _issue(self, out: str, extensions: str) -> None:
        _openssl("x509", "-req", "-in", "tsa.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", out, "-days", "3650", "-extfile", "tsa.cnf", "-extensions", extensions, cwd=self.dir)

    @property
    def ca_pem(self) -> bytes:
        return (self.dir / "ca.crt").read_bytes()

    @property
    def tsa_pem(self) -> bytes:
        return (self.dir / "tsa.crt").read_bytes()

    def der(self, name: str) -> bytes:
        out = subprocess.run(["openssl", "x509", "-in", name, "-outform", "DER"], cwd=self.dir,
                             check=True, capture_output=True)
        return out.stdout

    @property
    def private_key(self) -> Any:
        return serialization.load_pem_private_key((self.dir / "tsa.key").read_bytes(), None)

    def stamp(self, head_hex: str, *, nonce: int | None = 4711, imprint: str = "sha256",
              cert_req: bool = True) -> bytes:
        """A DER TimeStampToken over ``imprint(raw head bytes)``."""
        digest = hashlib.new(imprint, bytes.fromhex(head_hex)).digest()
        request: dict[str, Any] = {
            "version": "v1",
            "message_imprint": {"hash_algorithm": {"algorithm": imprint}, "hashed_message": digest},
            "cert_req": cert_req,
        }
        if nonce is not None:
            request["nonce"] = nonce
        (self.dir / "req.tsq").write_bytes(tsp.TimeStampReq(request).dump())
        _openssl("ts", "-reply", "-queryfile", "req.tsq", "-config", "tsa.cnf", "-section", "tsa_config1",
                 "-inkey", "tsa.key", "-signer", "tsa.crt", "-token_out", "-out", "tok.der", cwd=self.dir)
        return (self.dir / "tok.der").read_bytes()


class Forge:
    """Edit a token's structures and re-sign its signed attributes with the TSA key."""

    def __init__(self, token: bytes, tsa: LocalTSA) -> None:
        self.info = cms.ContentInfo.load(token)
        self.tsa = tsa

    @property
    def signed_data(self) -> Any:
        return self.info["content"]

    @property
    def signer(self) -> Any:
        return self.signed_data["signer_infos"][0]

    def edit_tst(self, change: Callable[[dict[str, Any]], None], *, update_digest: bool) -> Forge:
        encap = self.signed_data["encap_content_info"]
        native = encap["content"].parsed.native
        change(native)
        der = tsp.TSTInfo(native).dump()
        encap["content"] = cms.ParsableOctetString(der)
        if update_digest:
            self.edit_attrs(lambda attrs: _set_attr(attrs, "message_digest", hashlib.sha256(der).digest()))
        return self

    def edit_attrs(self, change: Callable[[list[Any]], None]) -> Forge:
        """``change`` edits the list of ``CMSAttribute`` objects in place."""
        attrs = [a.copy() for a in self.signer["signed_attrs"]]
        change(attrs)
        self.signer["signed_attrs"] = cms.CMSAttributes(attrs)
        return self

    def resign(self) -> Forge:
        message = b"\x31" + self.signer["signed_attrs"].dump(force=True)[1:]
        key = self.tsa.private_key
        if isinstance(key, rsa.RSAPrivateKey):
            signature = key.sign(message, padding.PKCS1v15(), hashes.SHA256())
        else:
            signature = key.sign(message, ec.ECDSA(hashes.SHA256()))
        self.signer["signature"] = signature
        return self

    def dump(self) -> bytes:
        return self.info.dump(force=True)


def _set_attr(attrs: list[Any], name: str, value: Any) -> None:
    for index, attr in enumerate(attrs):
        if attr["type"].native == name:
            attrs[index] = cms.CMSAttribute({"type": name, "values": [value]})


def drop_attr(attrs: list[Any], name: str) -> None:
    attrs[:] = [a for a in attrs if a["type"].native != name]


def set_attr(attrs: list[Any], name: str, value: Any) -> None:
    _set_attr(attrs, name, value)


def algorithm(name: str) -> Any:
    return algos.DigestAlgorithm({"algorithm": name})
