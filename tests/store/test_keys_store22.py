"""The store's record of a recorder key retired as compromised holds against any writer (session 22): a SQLite
trigger keeps the role, so a BitExact before session 21 rotating the leaked key no longer clears it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bitexact.crypto import SigningKey
from bitexact.store import COMPROMISED_KEY_ROLE, open_store
from bitexact.store.sqlite_schema import COMPROMISE_TRIGGER, SCHEMA_VERSION

# What `put_key` ran for a known key before session 21 (and runs now for any role but a compromised one's):
# a BitExact of then rotating a key records it retired under the role it names, "recorder".
_OLD_PUT_KEY = "UPDATE keys SET role = ?, retired_at = ? WHERE key_id = ?"


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def _trigger_count(database: Path) -> int:
    raw = _raw(database)
    try:
        return int(raw.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = ?",
                               (COMPROMISE_TRIGGER,)).fetchone()[0])
    finally:
        raw.close()


def test_a_store_made_before_the_trigger_gets_it_and_an_older_writer_no_longer_clears_the_mark(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    database = home / "bitexact.db"
    store = open_store(home)
    leaked = SigningKey.generate()
    store.put_key(leaked.key_id, leaked.public_hex, "recorder", "2031-01-01T00:00:00+00:00")
    store.put_key(leaked.key_id, leaked.public_hex, COMPROMISED_KEY_ROLE, "2031-01-01T00:00:00+00:00",
                  "2031-02-01T00:00:00+00:00")
    store.close()
    raw = _raw(database)
    # The store as 0de516f made it: version 3, no such trigger, no compromised_at column.
    raw.execute(f"DROP TRIGGER {COMPROMISE_TRIGGER}")
    raw.execute("ALTER TABLE keys DROP COLUMN compromised_at")
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    raw.close()

    reopened = open_store(home)  # this BitExact opens it: both are added, the version stays (older ones open it)
    assert [row["role"] for row in reopened.keys()] == [COMPROMISED_KEY_ROLE]
    reopened.put_key(leaked.key_id, leaked.public_hex, COMPROMISED_KEY_ROLE, "2031-01-01T00:00:00+00:00",
                     "2031-02-01T00:00:00+00:00", compromised_at="2031-04-01T00:00:00+00:00")
    assert reopened.keys()[0]["compromised_at"] == "2031-04-01T00:00:00+00:00"
    reopened.close()
    assert _trigger_count(database) == 1
    raw = _raw(database)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 3
        # An older BitExact's rotation of the leaked key (keys/ restored from before the mark): its row is
        # updated, its role kept.
        raw.execute(_OLD_PUT_KEY, ("recorder", "2031-03-01T00:00:00+00:00", leaked.key_id))
        assert raw.execute("SELECT role, retired_at FROM keys WHERE key_id = ?", (leaked.key_id,)).fetchone() == (
            COMPROMISED_KEY_ROLE, "2031-03-01T00:00:00+00:00")
    finally:
        raw.close()


def test_a_new_store_has_the_trigger_and_other_keys_roles_are_left_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(home)
    plain, leaked = SigningKey.generate(), SigningKey.generate()
    store.put_key(plain.key_id, plain.public_hex, "recorder", "2031-01-01T00:00:00+00:00")
    store.close()
    assert _trigger_count(home / "bitexact.db") == 1
    raw = _raw(home / "bitexact.db")
    try:
        raw.execute(_OLD_PUT_KEY, ("other", None, plain.key_id))  # a role that was not compromised: as written
        assert raw.execute("SELECT role FROM keys WHERE key_id = ?", (plain.key_id,)).fetchone() == ("other",)
        raw.execute("INSERT INTO keys (key_id, public_key, role, created_at) VALUES (?, ?, ?, ?)",
                    (leaked.key_id, leaked.public_hex, COMPROMISED_KEY_ROLE, "2031-01-01T00:00:00+00:00"))
        raw.execute(_OLD_PUT_KEY, ("recorder", None, leaked.key_id))
        assert raw.execute("SELECT role FROM keys WHERE key_id = ?", (leaked.key_id,)).fetchone() == (
            COMPROMISED_KEY_ROLE,)
    finally:
        raw.close()


def test_a_keys_first_compromise_date_stays(tmp_path: Path) -> None:
    """A mark made again (keys/ restored from a backup older than the first) gave the key a new date; the store
    had no date of the mark to keep (retired_at is the rotation's)."""
    store = open_store(tmp_path / "home")
    leaked, plain = SigningKey.generate(), SigningKey.generate()
    store.put_key(plain.key_id, plain.public_hex, "recorder", "2031-01-01T00:00:00+00:00")
    store.put_key(leaked.key_id, leaked.public_hex, "recorder", "2031-01-01T00:00:00+00:00", "2031-02-01T00:00:00+00:00")
    for at in ("2031-03-01T00:00:00+00:00", "2031-05-01T00:00:00+00:00"):
        store.put_key(leaked.key_id, leaked.public_hex, COMPROMISED_KEY_ROLE, at, "2031-02-01T00:00:00+00:00",
                      compromised_at=at)
    store.close()
    reopened = open_store(tmp_path / "home")
    try:
        by_id = {row["key_id"]: row for row in reopened.keys()}
        assert by_id[leaked.key_id] == {"key_id": leaked.key_id, "public_key": leaked.public_hex,
                                        "role": COMPROMISED_KEY_ROLE, "created_at": "2031-01-01T00:00:00+00:00",
                                        "retired_at": "2031-02-01T00:00:00+00:00",
                                        "compromised_at": "2031-03-01T00:00:00+00:00"}
        assert "compromised_at" not in by_id[plain.key_id]  # listed only where it is set
    finally:
        reopened.close()
