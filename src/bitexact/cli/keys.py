"""`bitexact keys`: the recorder's signing key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import EXIT_FAIL, EXIT_INPUT, console, fail, json_option, ok, print_json, tick, write_exit_code
from bitexact.crypto.keystore import COMPROMISED, KEY_ID, PublicKeyInfo, UnknownKeyError
from bitexact.errors import KeyMaterialError, StoreError
from bitexact.evidence.export import atomic_write
from bitexact.evidence.timefmt import now_iso
from bitexact.recording.recorder_keys import recorder_keys, store_only_keys
from bitexact.store import COMPROMISED_KEY_ROLE, DB_NAME, Store


@click.group("keys")
def keys_group() -> None:
    """Create, show, rotate and publish the recorder key.

    \b
    Examples:
      bitexact keys init
      bitexact keys show --json
      bitexact keys trust-file -o trust.json
      bitexact keys rotate --compromised

    \b
    Exit codes:
      0  done
      1  refused or failed: no recorder key (show, rotate, trust-file), one already there (init),
         a key that does not load, the store does not open
      2  a usage error, an unknown key id, or an -o that cannot be written
    """


@keys_group.command("init")
@json_option("Print the key made as JSON (key_id, public_key, path).")
@pass_app
def keys_init(app: AppContext, as_json: bool) -> None:
    """Create the recorder key (owner-only file); refuses to overwrite one.

    \b
    Examples:
      bitexact keys init
      BITEXACT_HOME=/srv/bitexact bitexact keys init
      bitexact keys init --json | jq -r .public_key

    \b
    Exit codes:
      0  created
      1  a key is already there (or something else is in its place: a directory or a named
         pipe, named as such), or the store does not open or is damaged (no key made)
      2  a usage error
    """
    # Opened first: a store that does not open leaves no key made (a retry would be refused), and a kill once
    # the key file is written leaves the store beside it, never keys with no store (health's store-missing).
    store = app.store
    store.check_intact()  # nor one that is damaged: the key would be made, and its row refused (exit 1)
    try:
        key = app.keys.init()
    except KeyMaterialError as exc:
        fail(str(exc), code=EXIT_FAIL)
    _record_keys(store, f"recorder key {key.key_id} is created at {app.keys.current_path} (the key file is in"
                        " place: `keys init` again would refuse it)",
                 (key.key_id, key.public_hex, now_iso(), None, ROLE, None))
    if as_json:
        print_json({"key_id": key.key_id, "public_key": key.public_hex, "path": str(app.keys.current_path)})
        return
    ok(f"recorder key created at {app.keys.current_path}\n  key id     {key.key_id}\n  public key {key.public_hex}")


@keys_group.command("show")
@json_option("Print as JSON.")
@pass_app
def keys_show(app: AppContext, as_json: bool) -> None:
    """Print the key id and public key of the current and retired recorder keys.

    A key the store recorded whose file is gone is listed as missing: it
    signs nothing more, and its public half still verifies what it signed.
    A key retired as compromised is listed as compromised, with the date:
    its private half is destroyed and trust files leave it out. A store
    that does not open or whose list of keys does not read (damaged) leaves
    the key files' keys listed, with one warning line on stderr.

    \b
    Examples:
      bitexact keys show
      bitexact keys show --json | jq -r '.[] | select(.status == "current") | .public_key'

    \b
    Exit codes:
      0  printed
      1  no recorder key, or one that does not load
      2  a usage error
    """
    keys = _listed_keys(app)
    if not keys:
        fail(f"no recorder key in {app.keys.dir}", hint="Create one with `bitexact keys init`.")
    if as_json:
        print_json([{"key_id": k.key_id, "public_key": k.public_key, "status": k.status,
                     **({"compromised_at": k.compromised_at} if k.compromised_at else {})} for k in keys])
        return
    for k in keys:
        colour = {"current": "green", "missing": "red", COMPROMISED: "red"}.get(k.status, "dim")
        since = f"  since {k.compromised_at}" if k.compromised_at else (
            f"  (the store's mark; {app.keys.compromised_path.name} lost it)" if k.status == COMPROMISED else "")
        # Never wrapped: a key is copied (or cut) from its line whole, whatever the terminal's width.
        console.print(f"[{colour}]{k.status:11}[/] {k.key_id}  {k.public_key}{since}", soft_wrap=True)


def _key_id_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A recorder key id (16 lowercase hex characters), or a usage error (exit 2): a typo never matches."""
    if value is not None and not KEY_ID.fullmatch(value):
        raise click.BadParameter(f"{value!r} is not a recorder key id (16 lowercase hex characters; `bitexact keys"
                                 " show` lists them)")
    return value


@keys_group.command("rotate")
@click.option("--compromised", is_flag=True,
              help="The current key may have been read by others: destroy its private half and leave it out of "
                   "trust files (its runs no longer verify against a new trust file).")
@click.option("--expect-current", "expect", metavar="KEY_ID", callback=_key_id_option,
              help="Rotate only if KEY_ID is the current key when the rotation takes its lock; otherwise "
                   "refuse (exit 1) naming both (with --compromised: never mark a key another rotation just made).")
@json_option("Print the outcome as JSON (retired and current key ids and public keys, compromised).")
@pass_app
def keys_rotate(app: AppContext, compromised: bool, expect: str | None, as_json: bool) -> None:
    """Make a new recorder key and retire the current one (old runs stay verifiable).

    The retired key is kept owner-only in keys/retired/ and stays in trust
    files. With --compromised (the key was readable by others, or leaked),
    it is retired as compromised instead: its private file is removed, so
    nothing can sign with it here again (a running agent reads the key
    files again at its next run or checkpoint), its public half and the date are
    kept in keys/compromised.json, `keys show` lists it as compromised, and
    `keys trust-file` leaves it out. A trust file has no validity window,
    so runs signed only by that key no longer verify against a trust file
    written after it (`bitexact verify` without a trust file still checks
    their chains; hand relying parties the new trust file).

    Two operators rotating at once are serialized, and --compromised
    retires whichever key is current when it gets the lock: if a plain
    rotation got there first, that is the new key, and the exposed one is
    left retired and trusted. --expect-current KEY_ID (the exposed key's id,
    from `keys show`) refuses then instead, naming both keys.

    \b
    Examples:
      bitexact keys rotate && bitexact keys trust-file -o trust.json
      bitexact keys rotate --compromised && bitexact keys trust-file -o trust.json
      bitexact keys rotate --compromised --expect-current d85aae05937830f1
      bitexact keys rotate --json | jq -r .current.key_id

    \b
    Exit codes:
      0  rotated
      1  no key to rotate, one that does not load, another key current than --expect-current,
         or the store does not open or is damaged (nothing rotated); or the key rotated but the store could not record it (it says so: do not rotate again)
      2  a usage error (--expect-current not a key id)
    """
    app.refuse_unusable_home()
    if not app.keys.exists():  # nothing to rotate: refused before the store (and keys/retired/) is made
        fail(f"no key at {app.keys.current_path}: there is nothing to rotate",
             hint="Create one with `bitexact keys init`.")
    store = app.store  # opened first: a store that does not open rotates nothing (a retry would rotate twice)
    store.check_intact()  # nor one that is damaged: its keys rows would be written onto it (exit 1)
    now = now_iso()
    # The marks the store keeps: a key marked before keys/ was restored from an older backup keeps its first date.
    first = _mark_dates(store.keys()) if compromised else {}
    try:
        old, new = app.keys.rotate(compromised_at=now if compromised else None, expect_current=expect,
                                   first_marked=first)
    except KeyMaterialError as exc:
        fail(str(exc))
    _record_keys(store, f"the key is rotated: {old.key_id} retired{' as compromised' if compromised else ''},"
                        f" {new.key_id} current (the key files are in place: do not rotate again)",
                 (old.key_id, old.public_hex, now, _retired_at(store, old.key_id) or now,
                  COMPROMISED_KEY_ROLE if compromised else ROLE, first.get(old.key_id, now) if compromised else None),
                 (new.key_id, new.public_hex, now, None, ROLE, None),
                 missed=_mark_missed(old.key_id) if compromised else _NOT_RECORDED)
    if as_json:
        print_json({"retired": {"key_id": old.key_id, "public_key": old.public_hex},
                    "current": {"key_id": new.key_id, "public_key": new.public_hex},
                    "compromised": compromised, "at": now})
        return
    if compromised:
        console.print(f"{tick()} rotated: {old.key_id} retired as compromised (its private key is removed),"
                      f" {new.key_id} current.\n  Publish a new trust file (bitexact keys trust-file): it leaves"
                      f" {old.key_id} out, so runs signed only by it no longer verify against it.", soft_wrap=True)
        return
    console.print(f"{tick()} rotated: {old.key_id} retired, {new.key_id} current.\n"
                  "  Publish a new trust file (bitexact keys trust-file) so relying parties accept both.", soft_wrap=True)


@keys_group.command("mark-compromised")
@click.argument("key_id")
@json_option("Print the key marked as JSON (key_id, public_key, compromised_at).")
@pass_app
def keys_mark_compromised(app: AppContext, key_id: str, as_json: bool) -> None:
    """Retire an already retired recorder key KEY_ID as compromised.

    For a key rotated away from before it was found exposed (a retired
    file others could read, a leaked backup): its private file is removed,
    its public half and the date are kept in keys/compromised.json, `keys
    show` lists it as compromised, and `keys trust-file` leaves it out, so
    runs signed only by it no longer verify against a trust file written
    after this. The current key is refused: `keys rotate --compromised`
    replaces it. Marking a key again keeps its first date (after keys/ was
    restored from a backup older than the mark too: the store keeps it).

    The mark is recorded in the store too, so keys/ restored from a backup
    older than it does not trust the key again (`keys show` and `keys
    trust-file` go by the store's mark, `health` says
    recorder-key-compromise-lost, and this command run again restores the
    file's mark). A store that does not open or is damaged is not written:
    the key files are marked all the same, and stderr says the store was not.

    \b
    Examples:
      bitexact keys mark-compromised d85aae05937830f1 && bitexact keys trust-file -o trust.json
      bitexact keys mark-compromised d85aae05937830f1 --json | jq -r .compromised_at

    \b
    Exit codes:
      0  marked (or already marked)
      1  the current key, a key file that does not load, or a key only the store could name while the
         store does not open or read (a key whose file is here is marked whatever the store's state)
      2  no recorder key KEY_ID here, or a usage error
    """
    app.refuse_unusable_home()
    known, first, unread = _store_only_keys(app)
    try:  # a key the store marked before keys/ was restored from an older backup keeps its first date
        info = app.keys.mark_compromised(key_id, first.get(key_id) or now_iso(), public_hex=known.get(key_id))
    except UnknownKeyError as exc:
        if unread is not None:  # the key may be one only the store remembers: say why it could not be asked
            fail(f"{exc}, and the store, which remembers keys whose file is gone, could not be read ({unread})")
        fail(str(exc), code=EXIT_INPUT)
    except KeyMaterialError as exc:
        fail(str(exc))
    unmarked = _mark_in_store(app, info)
    if unmarked is not None:  # the key files are marked: the mark holds here; only its copy in the store is missing
        click.echo(f"note: the store was not marked ({unmarked}): {app.keys.compromised_path} records {info.key_id}"
                   " as compromised, but restoring keys/ from an older backup would trust it again with no word from"
                   f" `bitexact health`. Once the store is restored, run `bitexact keys mark-compromised {info.key_id}`"
                   " again", err=True)
    if as_json:
        print_json({"key_id": info.key_id, "public_key": info.public_key, "status": info.status,
                    "compromised_at": info.compromised_at})  # as `keys show --json` lists it (the note: stderr)
        return
    ok(f"recorder key {info.key_id} is retired as compromised since {info.compromised_at}: its private key is"
       " removed and trust files leave it out.\n  Publish a new trust file (bitexact keys trust-file).")


@keys_group.command("trust-file")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the trust file.")
@json_option("Print what was written as JSON (path, the keys listed, the compromised keys left out).")
@pass_app
def keys_trust_file(app: AppContext, output: Path, as_json: bool) -> None:
    """Write a trust file for relying parties: every current and retired key,
    as both bundle and recorder keys (bitexact verify --trust-file F), and
    any key the store recorded whose file is gone, so its runs still verify.
    A key retired as compromised is left out, and stderr names it: runs
    signed only by it no longer verify against this trust file. A store that
    does not open or whose list of keys does not read (damaged) leaves the
    key files' keys, with one warning line on stderr (--json keeps its shape).

    \b
    Examples:
      bitexact keys trust-file -o trust.json
      bitexact verify run.bundle.json --trust-file trust.json --require-sealed
      bitexact keys trust-file -o trust.json --json | jq -r '.keys[].key_id'

    \b
    Exit codes:
      0  written
      1  no recorder key, or one that does not load, or the disk refused the file (full, an I/O error)
      2  -o cannot be written (one of BitExact's own files, not writable), or a usage error
    """
    keys = _listed_keys(app)
    if not keys:
        fail(f"no recorder key in {app.keys.dir}", hint="Create one with `bitexact keys init`.")
    listed = [{"key_id": k.key_id, "public_key": k.public_key} for k in keys if k.status != COMPROMISED]
    if not listed:
        fail(f"every recorder key in {app.keys.dir} is retired as compromised: a trust file would trust none",
             hint="Finish the rotation with `bitexact keys rotate --compromised`.")
    app.refuse_own_file(output)
    document = json.dumps({"bundle_keys": listed, "recorder_keys": listed}, indent=2) + "\n"
    try:
        atomic_write(output, [document.encode("utf-8")])  # a full disk never leaves a trust file cut short
    except OSError as exc:  # -o cannot be used (2), or the disk refused the write: full, an I/O error (1)
        fail(str(exc), code=write_exit_code(exc))  # it names the path: "-o X: cannot write X: ..." said it twice
    if as_json:  # the notes below still go to stderr: they say what a relying party loses
        print_json({"path": str(output), "keys": listed,
                    "left_out": [{"key_id": k.key_id, "public_key": k.public_key, "compromised_at": k.compromised_at}
                                 for k in keys if k.status == COMPROMISED]})
    else:
        ok(f"trust file with {len(listed)} key(s) written to {output}")
    for k in keys:
        if k.status == COMPROMISED:
            when = (f"at {k.compromised_at}" if k.compromised_at else
                    f"(the store records it; {app.keys.compromised_path} does not: restore the mark with `bitexact"
                    f" keys mark-compromised {k.key_id}`)")
            click.echo(f"note: recorder key {k.key_id} was retired as compromised {when} and is left"
                       " out: runs signed only by it no longer verify against this trust file", err=True)


ROLE = "recorder"
"""The store's role of a recorder key (:data:`COMPROMISED_KEY_ROLE` for one retired as compromised)."""


_NOT_RECORDED = ("Only the store's list of keys missed it: the first recording signed with the key adds it there,"
                 " and `keys show` reads the key files. Do not run the command again for it.")


def _record_keys(store: Store, done: str, *keys: tuple[str, str, str, str | None, str, str | None],
                 missed: str = _NOT_RECORDED) -> None:
    """Record ``(key_id, public_hex, created_at, retired_at, role, compromised_at)`` in the store, after the key
    files changed.

    A store that refuses the write now (another program's transaction holding it, a full disk) must not be
    reported as "nothing was written": the key files are already changed, and running the command again
    would rotate a second time (or refuse, for init). The store's rows are bookkeeping: a recording adds
    the key it signs with when it first uses it, and `keys show` reads the files. ``missed`` says what the
    store lacks then and what to run (a compromise mark no recording adds: see `keys rotate`).
    """
    try:
        for key_id, public_hex, created_at, retired_at, role, compromised_at in keys:
            store.put_key(key_id, public_hex, role, created_at, retired_at=retired_at, compromised_at=compromised_at)
    except StoreError as exc:
        fail(f"{done}, but the store did not record it ({exc}). {missed}")


def _mark_missed(key_id: str) -> str:
    """What the store lacks when a `keys rotate --compromised` could not record it, and what to run: no
    recording adds a compromise mark, so the first recording adding the new key is not the remedy."""
    return (f"The key files hold the rotation, and the first recording signed with the new key adds it to the"
            f" store; but the store does not hold {key_id}'s compromise mark, so keys/ restored from a backup older"
            f" than now would trust {key_id} again with no word from `bitexact health`. Once the store takes"
            f" writes, run `bitexact keys mark-compromised {key_id}`, which records the mark there (do not rotate"
            " again).")


def _mark_in_store(app: AppContext, info: PublicKeyInfo) -> str | None:
    """Record ``info``'s key as compromised in the store too (best-effort, after the key files): the mark then
    outlives ``keys/`` restored from a backup older than it (`keys show`, `keys trust-file` and `health` read
    it). Returns why the store was not marked (it does not open, is damaged, refused the write), or None. A
    data directory with no store yet has nothing to mark, and none is made for it."""
    try:
        store = _made_store(app)
        if store is None:
            return f"{app.home / DB_NAME} does not exist yet"
        store.check_intact()  # a damaged store is not written onto (ops19): the key files' mark is enough now
        at = info.compromised_at or now_iso()
        store.put_key(info.key_id, info.public_key, COMPROMISED_KEY_ROLE, at,
                      retired_at=_retired_at(store, info.key_id) or at, compromised_at=at)
    except StoreError as exc:
        return str(exc)
    return None


def _retired_at(store: Store, key_id: str) -> str | None:
    """When the store recorded ``key_id`` retired, if it did: a key retired by a rotation whose keys/ was then
    rolled back (restored from an older backup) is retired again by the next rotation, and the store keeps
    the first date (a later one was refused: "a retired key stays retired", after the key files changed)."""
    try:
        return next((str(row["retired_at"]) for row in store.keys()
                     if row["key_id"] == key_id and row.get("retired_at")), None)
    except StoreError:
        return None  # the write below says what is wrong with the store


def _listed_keys(app: AppContext) -> list[PublicKeyInfo]:
    """The key files' keys, then those the store recorded whose file is gone (a data directory with no store
    yet has none, and listing makes none). A store that does not open or whose keys do not read (a damaged
    page) leaves the key files' keys, with one warning line on stderr: the key files are what signs and what a
    trust file lists, and refusing kept `keys show` and `keys trust-file` from working until it was restored."""
    app.refuse_unusable_home()  # no data directory: no key files either, and the refusal says why
    try:
        return recorder_keys(app.keys, _made_store(app))
    except StoreError as exc:
        click.echo(f"warning: the store's list of keys could not be read ({exc}): listed from the key files in"
                   f" {app.keys.dir} alone, so a key only the store remembers (its file gone, or a compromise mark"
                   " that keys/ lost) is not listed; `bitexact health` says what else is wrong", err=True)
        return app.keys.public_keys()


def _store_only_keys(app: AppContext) -> tuple[dict[str, str], dict[str, str], StoreError | None]:
    """The public halves of the keys the store recorded whose file is gone (key id: public key), the dates of
    the compromise marks it keeps (key id: date), and why the store could not be read, when it could not
    (then none). `keys mark-compromised` writes only key files, so a store that does not open or read
    (damaged, not a store) must not stop it marking a key whose file is here: that refusal kept a leaked key
    in every trust file until the store was restored."""
    try:
        store = _made_store(app)
        if store is None:
            return {}, {}, None
        rows = store.keys()
        # A key the store marks compromised whose file is gone and whose mark keys/ lost: marked again from here.
        return store_only_keys(app.keys, rows), _mark_dates(rows), None
    except StoreError as exc:
        return {}, {}, exc


def _mark_dates(rows: list[dict[str, Any]]) -> dict[str, str]:
    """The first compromise date of each key the store's keys ``rows`` give one (stores from session 22 on)."""
    return {str(row["key_id"]): str(row["compromised_at"]) for row in rows if row.get("compromised_at")}


def _made_store(app: AppContext) -> Store | None:
    """The data directory's store when one was made (asking for keys makes none); refused when the data
    directory cannot be (an unmounted data directory is no empty one: it is not told to make a key)."""
    app.refuse_unusable_home()
    return app.store if (app.home / DB_NAME).exists() else None
