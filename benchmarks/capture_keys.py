"""How long one capture-key HMAC takes from each key source.

Prints microseconds per HMAC-SHA256 of a 48-byte message (a nonce and a
field path) and the ratio to a bare ``hmac.new`` measured in the same run:

    .venv/bin/python benchmarks/capture_keys.py

The KMS figure is against the tests' local KMS on 127.0.0.1 (real HTTP,
SigV4, JSON 1.1), so it is the client's own cost, not AWS's latency. The
PKCS#11 figure is SoftHSM2 (apt-get install softhsm2) in a temp token.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "keysources"))

from local_kms import KmsServer, KmsState  # noqa: E402

from bitexact.crypto.keysources import generate_key_file, load_capture_key  # noqa: E402

MESSAGE = os.urandom(16) + b"tool_call.result.customer.name"[:32]
SOFTHSM_LIB = "/usr/lib/softhsm/libsofthsm2.so"


def per_call_us(fn: Callable[[], object], seconds: float = 1.0) -> float:
    fn()
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(20):
            fn()
        calls += 20
    return elapsed / calls * 1e6


def kms_key() -> tuple[Callable[[], bytes], KmsServer]:
    state = KmsState()
    server = KmsServer(state)
    os.environ.update(AWS_ACCESS_KEY_ID=state.access_key, AWS_SECRET_ACCESS_KEY=state.secret_key,
                      AWS_REGION=state.region, AWS_EC2_METADATA_DISABLED="true",
                      BITEXACT_KMS_ENDPOINT=server.endpoint)
    state.create_key("HMAC_256", alias="alias/bench")
    key = load_capture_key({"kms_hmac": "alias/bench"})
    return lambda: key.hmac_sha256(MESSAGE), server


def token_key(workdir: Path) -> Callable[[], bytes] | None:
    if not os.path.exists(SOFTHSM_LIB):
        return None
    import pkcs11

    (workdir / "tokens").mkdir()
    conf = workdir / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {workdir / 'tokens'}\nlog.level = ERROR\n")
    os.environ["SOFTHSM2_CONF"] = str(conf)
    os.environ["BENCH_PIN"] = "1234"
    subprocess.run(["softhsm2-util", "--init-token", "--free", "--label", "bench", "--pin", "1234",
                    "--so-pin", "5678"], check=True, capture_output=True)
    lib = pkcs11.lib(SOFTHSM_LIB)
    slot = next(s for s in lib.get_slots(token_present=True) if s.get_token().label == "bench")
    with slot.get_token().open(rw=True, user_pin="1234") as session:
        session.generate_key(pkcs11.KeyType.GENERIC_SECRET, 256, label="bench", store=True,
                             template={pkcs11.Attribute.SIGN: True})
    key = load_capture_key({"pkcs11": {"lib": SOFTHSM_LIB, "slot": slot.slot_id,
                                       "label": "bench", "pin_env": "BENCH_PIN"}})
    return lambda: key.hmac_sha256(MESSAGE)


def main() -> None:
    secret = os.urandom(32)
    baseline = per_call_us(lambda: hmac.new(secret, MESSAGE, hashlib.sha256).digest())
    print(f"{'source':<28}{'us/HMAC':>10}{'x baseline':>12}")
    print(f"{'hmac.new (baseline)':<28}{baseline:>10.2f}{1.0:>12.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        generate_key_file(workdir / "capture.key")
        file_key = load_capture_key({"file": str(workdir / "capture.key")})
        rows: list[tuple[str, Callable[[], object]]] = [
            ("file (in process)", lambda: file_key.hmac_sha256(MESSAGE))]
        kms_call, server = kms_key()
        rows.append(("kms_hmac (local KMS)", kms_call))
        token_call = token_key(workdir)
        if token_call is not None:
            rows.append(("pkcs11 (SoftHSM2)", token_call))
        for name, fn in rows:
            us = per_call_us(fn)
            print(f"{name:<28}{us:>10.2f}{us / baseline:>12.1f}")
        if token_call is None:
            print("pkcs11: not measured, SoftHSM2 is not installed (apt-get install softhsm2)")
        server.stop()


if __name__ == "__main__":
    main()
