"""`bitexact health`: what needs attention, as a table or JSON.

Exit codes: 0 healthy, 1 warnings only, 2 anything critical.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from bitexact.cli.context import AppContext, pass_app
from bitexact.config import unusable_home
from bitexact.cli.output import console, json_option, kept_whole, plain, print_json
from bitexact.config import SettingError, env_float
from bitexact.health import CRITICAL, Finding, HealthContext, HealthReport, run_health
from bitexact.store import DB_NAME, StoreError
from bitexact.store.sqlite import LOCK_TIMEOUT, LOCK_TIMEOUT_ENV, companions

_MESSAGE_AND_BORDERS = 29
"""The width the health table needs beside its level, check and run cells: a message column of 16, and
the cells' padding and borders (13)."""


def _unreadable_file_hint(exc: StoreError, database: Path) -> str:
    """What to do about a file in the store's place that is no store this BitExact reads (damaged, not a
    database, another application's); empty for a store that did not open for another reason (locked, a
    setting, a directory that cannot be written), whose message says what to do. Never "delete": the file
    may be the only copy of the evidence, which a copy taken aside can still give back."""
    import sqlite3

    cause = exc.__cause__
    damaged = isinstance(cause, sqlite3.DatabaseError) and not isinstance(cause, sqlite3.OperationalError)
    if not damaged and "is not a BitExact store" not in str(exc):
        return ""
    return (f". It is no store this BitExact can read (damaged, or another file in its place): stop every"
            f" process recording into {database.parent}, move the file aside with its -wal and -shm files if"
            f" any (`mv {database} {database}.unreadable`; never delete it, it may be the only copy of the"
            " evidence), then restore the store from a backup, or let the next recording start an empty one")


def _no_store_yet(database: Path) -> bool:
    """True when there is no store to check at ``database``: no file, or the empty file a recording killed
    as it made the store left (nothing in it or in a -wal). Opening that would make the store's tables."""
    if not os.path.lexists(database):
        return True
    try:
        found = os.stat(database)
    except OSError:
        return False  # a dangling symlink, ...: opening it says what is wrong
    if not stat.S_ISREG(found.st_mode) or found.st_size:
        return False
    try:
        (wal,) = companions(database, "-wal")
        return os.path.getsize(wal) == 0
    except OSError:
        return True  # no -wal beside the empty file


@click.command("health")
@json_option("Print the findings as JSON.")
@pass_app
def health_command(app: AppContext, as_json: bool) -> None:
    """Check the capture policy, its keys, the stored runs' declarations, left-over journals and the store lock.

    Warns on capture-key-missing, capture-key-unavailable, scrub-failed,
    capture-policy-off, capture-key-revoked, orphan-journals (entries a
    stopped recording journaled but never wrote: fold them with
    `bitexact repair RUN`), store-locked (a stopped or hung process has
    held the store's write lock for over a second, or a program such as a
    sqlite3 shell has held SQLite's own write lock), store-wal-pinned (a
    reader has held one snapshot while 64 MiB or more was written, so the
    write-ahead log grows without bound; it names the processes that have
    the store open, BitExact's own apart), recording-gaps (a
    run declared in the last day that the store or the disk failed its
    recording), run-unsealed (no process records a run that has no seal:
    it was killed or could not seal; `bitexact repair RUN` accepts where
    it ends), entry-time-backwards (an entry of a run is timed before the
    one before it: the clock stepped back mid-run), host-key-unusable
    (the host key file is refused, so nothing is journaled),
    recorder-key-missing (the store knows a
    recorder key no key file holds any more), retired-key-unusable (a
    retired key file does not load: `keys show` and `keys trust-file`
    refuse until it is restored), store-missing (recorder keys are
    here but the store is gone or empty), failures-record-unusable
    (a run's failures record is not a file) and redaction-pending (a redaction claim whose
    values are still stored, or an approval recorded whose claim never landed: finish either
    with `bitexact redact --resume RUN`);
    critical on
    store-unreadable (the store does not open, or a run in it does not read back), store-damaged
    (SQLite's check of the store file finds damaged pages), store-disk-low (under 1 MiB free
    where the data directory is; a warning under 16 MiB), capture-policy-invalid,
    collector-unscrubbed, capture-key-in-data-directory (a copy of the
    store would carry the capture key), environment-unknown (BITEXACT_ENV holds a value
    other than prod), setting-invalid (a BITEXACT_* setting every recording
    reads holds a value it refuses), recorder-key-unusable (others may read
    or write the recorder key, or it is no key: no run starts, nothing is
    signed), recorder-key-retired (the current key is one the store recorded as
    retired by a rotation: keys/ restored from an older backup),
    recorder-key-compromise-lost (the store records a key as compromised that
    keys/compromised.json does not: keys/ restored from before the mark;
    `keys mark-compromised KEY` restores it), retired-key-loose
    (a retired recorder key others may read or write:
    trust files still accept what it signs), journals-unusable (the data directory's journals/ is a file
    or a link to nothing: no run holds its live lock, so none is called
    unsealed and repair refuses), capture-policy-off under BITEXACT_ENV=prod, and
    capture-key-revoked for the active key.

    \b
    Examples:
      bitexact health
      bitexact health --json || alert "bitexact needs attention"

    \b
    Exit codes:
      0  healthy
      1  warnings only
      2  anything critical, or a usage error
    """
    # Health never creates a data directory: with none there are no runs to check.
    store, unreadable = None, []
    if (why := unusable_home(app.home)) is not None:  # a file, a symlink to nowhere, or cannot be made
        unreadable.append(Finding(CRITICAL, "store-unreadable", why))
    elif not _no_store_yet(app.home / DB_NAME):  # a dangling symlink in the store's place is a finding too
        try:
            store = app.store
        except StoreError as exc:  # what is wrong is what health is for: a finding, never a bare error
            unreadable.append(Finding(CRITICAL, "store-unreadable",
                                      f"{exc}; nothing can be recorded or read until it opens again"
                                      f"{_unreadable_file_hint(exc, app.home / DB_NAME)}"))
    else:
        # No store yet: the first recording opens one, and a BITEXACT_LOCK_TIMEOUT the store refuses stops
        # every recording all the same (with a store it shows as the store failing to open, above).
        try:
            env_float(LOCK_TIMEOUT_ENV, LOCK_TIMEOUT)
        except SettingError as exc:
            unreadable.append(Finding(CRITICAL, "store-unreadable",
                                      f"no store can open in {app.home}: {exc}; nothing can be recorded until it"
                                      " is fixed or unset"))
    checked = run_health(HealthContext(env=dict(os.environ), store=store, home=app.home))
    report = HealthReport.of([*unreadable, *checked.findings])
    if as_json:
        # The data directory checked, absolute, as the table's title names it: a script reading several homes
        # (or a relative BITEXACT_HOME) learns which one this report is of.
        document = report.to_json()
        print_json({"status": document["status"], "home": str(app.home), "findings": document["findings"]})
        sys.exit(report.exit_code())
    if not report.findings:
        # The data directory checked, absolute: a relative BITEXACT_HOME names another one from each directory.
        console.print(Text.assemble(("healthy", "green"), f": nothing needs attention in {plain(str(app.home))}"))
        sys.exit(report.exit_code())
    table = Table(title=Text(f"bitexact health - {report.status} - {plain(str(app.home))}"), title_justify="left")
    # A run id stays on one line while the check and a message column keep room (the message wraps
    # instead); on a terminal too narrow for that it folds like the message, never cut short with an
    # ellipsis: the check's name and the run id say what and which.
    others = _MESSAGE_AND_BORDERS + max(len(finding.level) + len(finding.name) for finding in report.findings)
    whole = kept_whole((plain(finding.run_id or "") for finding in report.findings), others)
    table.add_column("level", no_wrap=True)
    table.add_column("check", overflow="fold")
    table.add_column("run", no_wrap=whole, overflow="fold")
    table.add_column("message", overflow="fold")
    for finding in report.findings:
        colour = "red" if finding.level == "critical" else "yellow"
        # Run ids and messages quote recorded data (a field path is an entry's key): plain text, with
        # control characters written as escapes, so nothing recorded can clear or retitle the terminal.
        table.add_row(Text(finding.level, style=colour), finding.name, Text(plain(finding.run_id or "")),
                      Text(plain(finding.message)))
    console.print(table)
    sys.exit(report.exit_code())
