"""Fixtures for key sources: a local KMS speaking the real protocol, fresh SoftHSM2 tokens."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from keysource_support import (
    PIN,
    PIN_ENV,
    SOFTHSM_LIB,
    Kms,
    Token,
    import_secret,
    init_token,
    require_boto3,
    require_softhsm,
)
from local_kms import KmsServer, KmsState

# Anything that could point boto3 at a real account or a slow metadata lookup.
_AWS_VARS = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION",
             "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_KMS", "AWS_ROLE_ARN",
             "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
             "AWS_CONTAINER_CREDENTIALS_FULL_URI")


@pytest.fixture
def kms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Kms]:
    """A local KMS on 127.0.0.1 and an AWS environment that points at it and nowhere else."""
    require_boto3()
    state = KmsState()
    server = KmsServer(state)
    for name in _AWS_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", state.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", state.secret_key)
    monkeypatch.setenv("AWS_REGION", state.region)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("BITEXACT_KMS_ENDPOINT", server.endpoint)
    env = Kms(state, server, monkeypatch)
    yield env
    for running in [server, *env.extra]:
        running.stop()


@pytest.fixture(scope="session")
def softhsm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Token]:
    """Two fresh tokens in a temp dir ("bitexact-test", "bitexact-doomed"), keys imported.

    SoftHSM2 reads SOFTHSM2_CONF when the library initializes, once per
    process, so the tokens are made once per session and each test uses its
    own labels.
    """
    p11 = require_softhsm()
    base = tmp_path_factory.mktemp("softhsm")
    token_dir = base / "tokens"
    token_dir.mkdir()
    conf = base / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {token_dir}\nobjectstore.backend = file\n"
                    "log.level = ERROR\nslots.removable = false\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOFTHSM2_CONF", str(conf))
        init_token(dict(os.environ), "bitexact-test")
        init_token(dict(os.environ), "bitexact-doomed")
        lib = p11.lib(SOFTHSM_LIB)
        lib.reinitialize()  # in case this process loaded SoftHSM2 with another conf
        slots = {s.get_token().label: s.slot_id for s in lib.get_slots(token_present=True)}
        token = Token(SOFTHSM_LIB, slots["bitexact-test"], slots["bitexact-doomed"], token_dir,
                      {}, p11)
        with token.admin_session() as session:
            for label in ("capture", "swap", "spare"):
                token.secrets[label] = os.urandom(32)
                import_secret(token, session, label, token.secrets[label])
            token.secrets["hmac-typed"] = os.urandom(32)
            import_secret(token, session, "hmac-typed", token.secrets["hmac-typed"],
                          key_type=p11.KeyType.SHA256_HMAC)
            import_secret(token, session, "aes", os.urandom(32), key_type=p11.KeyType.AES)
            import_secret(token, session, "no-sign", os.urandom(32), sign=False)
            import_secret(token, session, "long", os.urandom(64))
            import_secret(token, session, "twice", os.urandom(32))
            import_secret(token, session, "twice", os.urandom(32))
            session.generate_key(p11.KeyType.GENERIC_SECRET, 256, label="generated", store=True,
                                 template={p11.Attribute.SIGN: True,
                                           p11.Attribute.SENSITIVE: True,
                                           p11.Attribute.EXTRACTABLE: False})
        with token.admin_session(token.doomed_slot) as session:
            token.secrets["doomed"] = os.urandom(32)
            import_secret(token, session, "doomed", token.secrets["doomed"])
        yield token
        lib.reinitialize()  # drop our sessions before the token files go


@pytest.fixture
def pin(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(PIN_ENV, PIN)
    return PIN
