"""Fixtures for the verifier tests: keys, a sample run, and a real local TSA."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bitexact.crypto import SigningKey

from .producer import Run
from .tsa import LocalTSA


@pytest.fixture(scope="session")
def bundle_key() -> SigningKey:
    return SigningKey.generate()


@pytest.fixture(scope="session")
def recorder_key() -> SigningKey:
    return SigningKey.generate()


@pytest.fixture(scope="session")
def other_key() -> SigningKey:
    return SigningKey.generate()


def sample_run(recorder: SigningKey | None, *, alg: str = "blake2b-256", seal: bool = True,
               run_id: str = "run-1") -> Run:
    """Six entries covering the usual shapes: nested objects, escaped keys, an empty object."""
    run = Run(run_id, alg=alg, recorder=recorder)
    run.append("run_meta", {"python": "3.11.7", "platform": "linux"})
    run.append("identity", {"principal": "alice", "scope": ["read", "write"]})
    run.append("tool_call", {
        "tool": "lookup_policy", "args": ["HX-20931"], "kwargs": {},
        "result": {"a.b": 1, "x~y": "v", "n": 3},
    })
    run.append("http_call", {
        "request": {"method": "POST", "path": "/v1/chat"},
        "response": {"status": 200, "text": "covered"},
    })
    run.append("nondet", {"source": "time.time", "value": 1900000000.25})
    if seal:
        run.seal()
    return run


@pytest.fixture
def make_run(recorder_key: SigningKey) -> Callable[..., Run]:
    def factory(**kwargs: object) -> Run:
        recorder = kwargs.pop("recorder", recorder_key)
        return sample_run(recorder, **kwargs)  # type: ignore[arg-type]
    return factory


@pytest.fixture(scope="session")
def tsa(tmp_path_factory: pytest.TempPathFactory) -> LocalTSA:
    return LocalTSA(tmp_path_factory.mktemp("tsa-rsa"))


@pytest.fixture(scope="session")
def tsa_ec(tmp_path_factory: pytest.TempPathFactory) -> LocalTSA:
    return LocalTSA(tmp_path_factory.mktemp("tsa-ec"), kind="ec", name="Other")


@pytest.fixture(scope="session")
def unrelated_tsa(tmp_path_factory: pytest.TempPathFactory) -> LocalTSA:
    return LocalTSA(tmp_path_factory.mktemp("tsa-unrelated"), name="Unrelated")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
