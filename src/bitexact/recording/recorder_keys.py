"""Every recorder key of a data directory: the key files, and the keys the store remembers.

The store records the public half of every key that ever signed for it
(`Recorder`, `bitexact keys init|rotate`). A key file deleted by hand (or
lost with a volume) leaves its runs signed by a key no file lists; the next
recording then makes a new key. Listing the store's keys beside the files
keeps those runs verifiable against this home's trust file, and lets
`bitexact health` say that a key is gone.
"""

from __future__ import annotations

from bitexact.crypto import key_id as derive_key_id
from bitexact.crypto.keystore import KeyStore, PublicKeyInfo
from bitexact.store import Store

MISSING = "missing"
"""The status of a key the store recorded whose file is in neither ``keys/`` nor ``keys/retired/``."""


def missing_keys(keys: KeyStore, store: Store) -> list[PublicKeyInfo]:
    """The recorder keys ``store`` recorded that no key file holds, oldest first.

    A row whose key id does not derive from its public key (a damaged
    store) is left out: it could not have verified anything.
    """
    on_disk = {info.key_id for info in keys.public_keys()}
    gone: list[PublicKeyInfo] = []
    for row in store.keys():
        key_id, public_hex = row["key_id"], row["public_key"]
        if row["role"] != "recorder" or key_id in on_disk:
            continue
        try:
            derived = derive_key_id(bytes.fromhex(public_hex))
        except ValueError:
            continue
        if derived == key_id:
            gone.append(PublicKeyInfo(key_id, public_hex, MISSING))
    return gone


def recorder_keys(keys: KeyStore, store: Store | None) -> list[PublicKeyInfo]:
    """The key files' keys (current first, then retired), then the ones the store recorded whose file is
    gone (status :data:`MISSING`: they sign nothing more, and their public half still verifies what they
    signed)."""
    listed = keys.public_keys()
    return listed if store is None else listed + missing_keys(keys, store)
