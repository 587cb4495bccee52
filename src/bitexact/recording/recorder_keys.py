"""Every recorder key of a data directory: the key files, and the keys the store remembers.

The store records the public half of every key that ever signed for it
(`Recorder`, `bitexact keys init|rotate`). A key file deleted by hand (or
lost with a volume) leaves its runs signed by a key no file lists; the next
recording then makes a new key. Listing the store's keys beside the files
keeps those runs verifiable against this home's trust file, and lets
`bitexact health` say that a key is gone.

The store also keeps which keys were retired as compromised (role
:data:`~bitexact.store.COMPROMISED_KEY_ROLE`), beside ``keys/compromised.json``:
restoring ``keys/`` from a backup older than the mark rolls the file back, and
the leaked key would be listed (and trusted) again. A key the store marks is
listed as compromised whatever the key files say.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bitexact.crypto import SigningKey
from bitexact.crypto import key_id as derive_key_id
from bitexact.crypto.keystore import COMPROMISED, CompromisedCurrentKeyError, KeyStore, PublicKeyInfo
from bitexact.store import COMPROMISED_KEY_ROLE, Store

MISSING = "missing"
"""The status of a key the store recorded whose file is in neither ``keys/`` nor ``keys/retired/``."""


def missing_keys(keys: KeyStore, store: Store) -> list[PublicKeyInfo]:
    """The recorder keys ``store`` recorded that no key file holds, oldest first.

    A row whose key id does not derive from its public key (a damaged
    store) is left out: it could not have verified anything.
    """
    return _missing({info.key_id for info in keys.public_keys()}, store.keys())


def _missing(on_disk: set[str], rows: list[dict[str, Any]]) -> list[PublicKeyInfo]:
    """The ``recorder`` rows of the store's keys (``rows``) whose key is not ``on_disk``, oldest first."""
    return [PublicKeyInfo(row["key_id"], row["public_key"], MISSING) for row in rows
            if row["role"] == "recorder" and row["key_id"] not in on_disk and _derives(row["key_id"], row["public_key"])]


def _derives(key_id: str, public_hex: str) -> bool:
    try:
        return derive_key_id(bytes.fromhex(public_hex)) == key_id
    except ValueError:
        return False


def store_compromised(store: Store) -> dict[str, str]:
    """The recorder keys ``store`` records as retired as compromised (key id: public key), oldest first; a row
    whose key id does not derive from its public key (a damaged store) is left out."""
    return _compromised(store.keys())


def _compromised(rows: list[dict[str, Any]]) -> dict[str, str]:
    """:func:`store_compromised` of the store's keys ``rows``."""
    return {row["key_id"]: row["public_key"] for row in rows
            if row["role"] == COMPROMISED_KEY_ROLE and _derives(row["key_id"], row["public_key"])}


def store_only_keys(keys: KeyStore, rows: list[dict[str, Any]]) -> dict[str, str]:
    """The public halves of the keys only the store can name now (key id: public key), from its keys ``rows``
    (:meth:`Store.keys`, read once by the caller): those it recorded whose file is gone, and those it marks
    compromised (whose mark ``keys/`` may have lost)."""
    return {info.key_id: info.public_key for info in _missing({i.key_id for i in keys.public_keys()}, rows)} | (
        _compromised(rows))


def compromise_lost(keys: KeyStore, store: Store) -> dict[str, str]:
    """The keys the store marks compromised that ``keys/compromised.json`` does not (``keys/`` restored from a
    backup older than the mark): key id: public key. Raises what reading either raises."""
    return _lost(keys, _compromised(store.keys()))


def _lost(keys: KeyStore, marked_in_store: dict[str, str]) -> dict[str, str]:
    marked = keys.compromised_ids()
    return {key_id: public for key_id, public in marked_in_store.items() if key_id not in marked}


def recorder_keys(keys: KeyStore, store: Store | None) -> list[PublicKeyInfo]:
    """The key files' keys (current first, then retired), then the ones the store recorded whose file is
    gone (status :data:`MISSING`: they sign nothing more, and their public half still verifies what they
    signed). A key the store marks compromised that the key files do not is listed as compromised (with no
    date: the date is in the file that lost it), wherever its file is, and never trusted. The store's keys
    are read once: :class:`~bitexact.errors.StoreError` when they do not read."""
    listed = keys.public_keys()
    if store is None:
        return listed
    rows = store.keys()
    lost = _lost(keys, _compromised(rows))
    on_disk = {info.key_id for info in listed}
    shown = [PublicKeyInfo(info.key_id, info.public_key, COMPROMISED) if info.key_id in lost else info
             for info in listed]
    return (shown + _missing(on_disk, rows)
            + [PublicKeyInfo(key_id, public, COMPROMISED) for key_id, public in lost.items() if key_id not in on_disk])


def compromised_current_error(key_id: str, path: Path | None) -> CompromisedCurrentKeyError:
    """The refusal of the current key ``key_id`` (its file at ``path``) that the store marks compromised while
    the key files do not: it names the key and the command that replaces it."""
    where = f" ({path})" if path is not None else ""
    return CompromisedCurrentKeyError(
        f"recorder key {key_id}{where} is recorded as compromised in the store, but the key files hold it as the"
        " current key (keys/ restored from a backup older than the mark, or copied from elsewhere): nothing signs"
        f" with it; run `bitexact keys rotate --compromised --expect-current {key_id}` to replace it, then hand"
        " relying parties a new trust file (`bitexact keys trust-file`)"
    )


def current_key(keys: KeyStore, store: Store) -> SigningKey:
    """The key to sign with now (:meth:`KeyStore.current`), refused (:class:`CompromisedCurrentKeyError`) when
    the store marks it compromised: ``keys/`` restored from a backup older than ``keys rotate --compromised``
    made the leaked key current again, and a bundle signed with it would carry a leaked key's signature."""
    key = keys.current()
    if key.key_id in store_compromised(store):
        raise compromised_current_error(key.key_id, keys.current_path)
    return key
