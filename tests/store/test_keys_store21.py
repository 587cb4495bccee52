"""The store's record of a recorder key retired as compromised (session 21): once set, it stays."""

from __future__ import annotations

from pathlib import Path

from bitexact.crypto import SigningKey
from bitexact.store import COMPROMISED_KEY_ROLE, open_store


def test_a_compromised_role_outlives_a_later_put_key_naming_another_role(tmp_path: Path) -> None:
    """A plain `keys rotate` after keys/ was restored from before the mark records the leaked key as a plain
    retired "recorder" key: that update rewrote the role, and the store's copy of the mark was gone too."""
    store = open_store(tmp_path / "home")
    leaked = SigningKey.generate()
    store.put_key(leaked.key_id, leaked.public_hex, "recorder", "2031-01-01T00:00:00+00:00")
    store.put_key(leaked.key_id, leaked.public_hex, COMPROMISED_KEY_ROLE, "2031-01-01T00:00:00+00:00",
                  "2031-02-01T00:00:00+00:00")
    store.put_key(leaked.key_id, leaked.public_hex, "recorder", "2031-03-01T00:00:00+00:00",
                  "2031-02-01T00:00:00+00:00")
    store.close()
    reopened = open_store(tmp_path / "home")  # what was committed, not a cached row
    assert reopened.keys() == [{"key_id": leaked.key_id, "public_key": leaked.public_hex,
                                "role": COMPROMISED_KEY_ROLE, "created_at": "2031-01-01T00:00:00+00:00",
                                "retired_at": "2031-02-01T00:00:00+00:00"}]
    reopened.close()
