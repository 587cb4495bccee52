"""An identity gap's withheld digest, keyed with the capture key when a policy is in force."""

from __future__ import annotations

from pathlib import Path

import pytest

import bitexact
from bitexact.canon import canonicalize
from bitexact.capture import load_policy, open_withheld
from bitexact.crypto.keysources import generate_key_file, load_key_file
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.sdk import IdentityRefusedError
from bitexact.store import open_store


def test_the_refused_fields_are_keyed_with_the_capture_key_and_open_only_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "capture.key"
    key_id = generate_key_file(key_file)
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", str(key_file))
    home = tmp_path / "policy-home"
    store = open_store(home)
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    recorder = Recorder(store, KeyStore(home).current_or_init(), policy=load_policy())
    with bitexact.run(recorder=recorder) as r:
        r.identity(principal="svc:a", on_behalf_of="", on_behalf_of_type="human")
    gap = list(store.entries(r.run_id))[2]["data"]["gap"]  # type: ignore[arg-type]
    withheld = gap["withheld"]
    refused = canonicalize({"on_behalf_of": "", "on_behalf_of_type": "human"})
    assert withheld["key_id"] == key_id and withheld["length"] == len(refused)
    assert "digest" not in withheld
    key = load_key_file(key_file)
    assert open_withheld(withheld, refused, key) is True
    assert open_withheld(withheld, canonicalize({"on_behalf_of": "x", "on_behalf_of_type": "human"}), key) is False
    store.close()


def test_strict_mode_raises_once_the_gap_is_written() -> None:
    with bitexact.run(strict=True) as r:
        with pytest.raises(IdentityRefusedError) as caught:
            r.identity(interaction_mode="supervised")
        assert caught.value.fields == {"interaction_mode": "interaction_mode must be one of interactive, autonomous"}
    from sdk.conftest import kinds

    assert kinds(r.run_id) == ["run_meta", "marker", "run_end"]
