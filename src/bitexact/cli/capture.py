"""`bitexact capture`: the capture policy in force, trying a policy, keys, backfilling a run, journals.

Exit codes: 0 done; 1 refused or failed (a policy that cannot be used, a
scan that could not finish, and every backfill refusal the contract lists:
policy off, a request already pending, BITEXACT_REQUIRE_DUAL_CONTROL); 2
usage errors, unreadable input files and a run id the store does not hold.
`capture journal` has its own: 0 opened and complete, 1 opened but cut
short, 2 cannot be opened.
"""

from __future__ import annotations

import base64
import io
import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.markup import escape

from bitexact import config
from bitexact.canon import DEFAULT_MAX_BYTES, loads, read_limited
from bitexact.capture import (
    CapturePolicy,
    PolicyError,
    load_policy,
    read_policy_file,
)
from bitexact.capture.backfill import BackfillError, plan_backfill
from bitexact.capture.policy import PRESETS
from bitexact.capture.rules import GOVERNED_KINDS
from bitexact.capture.trial import DEFAULT_KIND, DEFAULT_PATH, FieldTrial, TrialInputError, try_field
from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import EXIT_FAIL, EXIT_INPUT, console, fail, json_option, plain, print_json, tick
from bitexact.crypto.hostkey import HostKey, HostKeyError, load_host_key, read_host_key
from bitexact.crypto.sealed import MAGIC, SealedEnvelopeError, WrongHostKeyError, iter_chunks
from bitexact.errors import KeyMaterialError, RunNotFoundError, StrictJSONError
from bitexact.private_files import file_kind, is_special, write_private_file
from bitexact.recording.journal import PURPOSE as SDK_JOURNAL
from bitexact.recording.journal import JournalError
from bitexact.recording.journal_slots import is_slots_file, slot_blobs, slot_count
from bitexact.recording.requests import (
    ENV_DUAL_CONTROL,
    RequestError,
    dual_control_required,
    file_request,
    pending_request,
)


@click.group("capture")
def capture_group() -> None:
    """The capture policy: what the record keeps of each field.

    \b
    Examples:
      bitexact capture policy show
      bitexact capture policy check policy.json
      bitexact capture test "paid with 4111 1111 1111 1111"
      bitexact capture keygen -o /run/secrets/bitexact-capture.key
      bitexact capture backfill --run RUN --by alice
      bitexact capture journal ~/.bitexact/journals/RUN/000000000002-1a2b3c4d.bxj

    \b
    Exit codes:
      0  done
      1  refused or failed: the policy cannot be used, a scan could not finish, a backfill refused
         (policy off, a request already pending, BITEXACT_REQUIRE_DUAL_CONTROL)
      2  a usage error, an input file that cannot be read, no such run
         (`capture journal` has its own: see its --help)
    """


def _policy_in_force() -> CapturePolicy:
    try:
        return load_policy()
    except PolicyError as exc:
        fail(str(exc), code=EXIT_FAIL, hint="Nothing records under a policy that cannot be used; fix "
             "BITEXACT_CAPTURE_POLICY (try `bitexact capture policy check FILE`).")


def _policy_from(source: str) -> CapturePolicy:
    """A policy file, or a preset name (default, pci, off) when no such file exists."""
    if not Path(source).exists() and (source in PRESETS or source == "off"):
        return load_policy(source)
    return read_policy_file(source)


def _summary(policy: CapturePolicy) -> dict[str, object]:
    if policy.off:
        return {"policy": "off", "digest": None}
    return {
        "policy": policy.name,
        "digest": policy.digest,
        "detectors": sorted(policy.detectors),
        "rules": len(policy.rules),
        "budget_ms": policy.budget_ms,
        "key_id": policy.key_id,
        "retired_key_ids": [k.key_id for k in policy.retired],
        "revoked_keys": dict(policy.revoked),
        "linkable_rules": [r.index for r in policy.rules if r.linkable],
    }


@capture_group.group("policy")
def policy_group() -> None:
    """Show the policy in force, or try one before it is deployed.

    \b
    Examples:
      bitexact capture policy show
      bitexact capture policy check policy.json

    \b
    Exit codes:
      0  done
      1  the policy cannot be used
      2  a usage error
    """


@policy_group.command("show")
@json_option("Print as JSON.")
def policy_show(as_json: bool) -> None:
    """Print the policy in force: detectors, rules (a linkable rule says so), key id, digest.

    A policy with no scrub rule says so ("no rule scrubs: every field is kept as captured"), and
    --json lists the scrub rules' indexes as scrubbing_rules ([] then).

    \b
    Examples:
      bitexact capture policy show
      BITEXACT_CAPTURE_POLICY=pci bitexact capture policy show --json

    \b
    Exit codes:
      0  printed
      1  the policy in force cannot be used
      2  a usage error
    """
    policy = _policy_in_force()
    described = policy.describe()
    scrubbing = [rule.index for rule in policy.rules if rule.mode == "scrub"]
    if as_json:
        print_json(described if policy.off else {**described, "scrubbing_rules": scrubbing})
        return
    if policy.off:
        console.print("[yellow]capture policy: off[/] - runs keep every value as captured "
                      "(only an agent's hints make a field stricter)")
        return
    # The digest is compared against a run's run_meta by hand: never wrapped, whatever the terminal's width.
    # What the policy file names (its path, a rule's keys) is written with control characters as escapes.
    console.print(f"capture policy [bold]{escape(plain(policy.name))}[/]  digest {policy.digest}", soft_wrap=True)
    console.print(f"  detectors  {', '.join(sorted(policy.detectors))}")
    console.print(f"  budget     {policy.budget_ms} ms per MiB")
    console.print(f"  key        {policy.key_id or 'none (hash-only fields can never be opened)'}")
    for key in policy.retired:
        console.print(f"  retired    {key.key_id}")
    for key_id, date in sorted(policy.revoked.items()):
        console.print(f"  [red]revoked[/]    {key_id} from {date}")
    for rule in policy.rules:
        where = f" where {rule.to_json()['where']}" if rule.where else ""
        linkable = " [yellow](linkable: equal values give equal commitments)[/]" if rule.linkable else ""
        said = escape(plain(f"{rule.kind} {rule.path} -> {rule.mode}{where}"))
        console.print(f"  rule {rule.index}     {said}{linkable}")
    if not scrubbing:
        # With no scrub rule the detectors listed above scrub no field: a card number is stored as sent.
        hashed = any(rule.mode == "hash-only" for rule in policy.rules)
        console.print("  [yellow]no rule scrubs[/]: every field "
                      + ("no hash-only rule names " if hashed else "")
                      + "is kept as captured (only an agent's scrub hint scrubs its field)")


@policy_group.command("check")
@click.argument("source", metavar="FILE")
@json_option("Print as JSON.")
def policy_check(source: str, as_json: bool) -> None:
    """Load FILE as the recorder would (keys included); exit 0 usable, 1 not, naming the field.

    \b
    Examples:
      bitexact capture policy check policy.json
      bitexact capture policy check policy.json --json

    \b
    Exit codes:
      0  usable
      1  not usable (the field is named)
      2  a usage error
    """
    try:
        policy = _policy_from(source)
    except PolicyError as exc:
        if as_json:
            print_json({"ok": False, "field": exc.field, "reason": exc.reason, "error": str(exc)})
            raise SystemExit(EXIT_FAIL) from None
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json({"ok": True, **_summary(policy)})
        return
    if policy.off:
        console.print("[yellow]usable[/]: off - nothing is removed")
        return
    console.print(f"{tick()} usable: {escape(plain(source))} - digest {policy.digest}, "
                  f"{len(policy.rules)} rule(s), key {policy.key_id or 'none'}", soft_wrap=True)


@policy_group.command("digest")
@click.argument("source", metavar="FILE")
@json_option('Print {"digest": ...} as JSON.')
def policy_digest(source: str, as_json: bool) -> None:
    """Print FILE's digest (what run_meta records): keys named by id, never by where they are kept.

    \b
    Examples:
      bitexact capture policy digest policy.json
      bitexact capture policy digest policy.json --json

    \b
    Exit codes:
      0  printed
      1  FILE cannot be used, or is the policy off (which has no digest)
      2  a usage error
    """
    try:
        policy = _policy_from(source)
    except PolicyError as exc:
        fail(str(exc), code=EXIT_FAIL)
    if policy.digest is None:
        fail("the policy off has no digest (run_meta records `off`)", code=EXIT_FAIL)
    if as_json:
        print_json({"digest": policy.digest})
        return
    click.echo(policy.digest)


def _where_option(items: tuple[str, ...]) -> dict[str, Any]:
    """``--where NAME=VALUE`` pairs: VALUE read as a JSON scalar when it is one (1, true, null, "x"), else as text."""
    out: dict[str, Any] = {}
    for item in items:
        name, equals, raw = item.partition("=")
        if not equals or not name:
            fail(f"--where {item!r}: write NAME=VALUE (a field of the step a rule's where reads)", code=EXIT_INPUT)
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        if isinstance(value, (dict, list)):
            value = raw  # a where compares scalars: the text as written
        out[name] = value
    return out


_MODE_WORDS = {
    "scrub": "scrubbed",
    "keep": "kept as captured",
    "hash-only": "hash-only: committed, the value not stored",
    "withheld": "withheld",
    "unscanned": "kept unscanned",
}


@capture_group.command("test")
@click.argument("text", required=False)
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), help="Read the text from a file ('-' reads standard input).")
@click.option("--kind", "kind", type=click.Choice(GOVERNED_KINDS), default=DEFAULT_KIND, show_default=True,
              help="The step kind the text is recorded in.")
@click.option("--path", "path", default=DEFAULT_PATH, show_default=True,
              help="The field the text is recorded at: KEY or KEY.SUBKEY (a dot in a key is ~1).")
@click.option("--where", "where", multiple=True, metavar="NAME=VALUE",
              help="A field of the step beside it, for a rule's where (repeatable; VALUE a JSON scalar or text).")
@json_option("Print as JSON.")
def capture_test(text: str | None, file: Path | None, kind: str, path: str, where: tuple[str, ...],
                 as_json: bool) -> None:
    """Show what a recording stores of TEXT (or --file) under the policy in force.

    The text is recorded as the string at --path of a --kind step (by default
    a tool call's result) and goes through the same function every recording
    does, so the policy's rules apply as in a run: it is printed as stored
    (scrubbed, kept as captured, [hash-only] or [withheld]) on stdout, and
    what was done and which rule decided on stderr. A rule with a where
    applies when --where gives the step those fields.

    \b
    Examples:
      bitexact capture test 'card 4111 1111 1111 1111, password=hunter2'
      bitexact capture test --file response.json --json
      printf 'IBAN DE89 3704 0044 0532 0130 00' | bitexact capture test --file -
      bitexact capture test --kind tool_call --path result --where tool=kyc_lookup 'Jane Roe'
      bitexact capture test --kind identity --path on_behalf_of 'user:7f3a9c'
      bitexact capture test -- '-rw------- 1 bob  .pgpass'   (-- before a TEXT opening with -)

    \b
    Exit codes:
      0  shown (scrubbed, kept, hash-only)
      1  the policy cannot be used, or a recording would withhold the field (its scan could not finish)
      2  neither or both of TEXT and --file, --file cannot be read (too large, not UTF-8, a named pipe
         nothing was written into), a --path or --where that names no field
    """
    if (text is None) == (file is None):
        fail("give TEXT or --file, one of them", code=EXIT_INPUT)
    if file is not None:
        try:
            # '-' is standard input, as for `sessions sanitize --mask-file -`: `cmd | bitexact capture test
            # --file -` said "cannot read: No such file or directory".
            raw = sys.stdin.buffer.read(DEFAULT_MAX_BYTES + 1) if str(file) == "-" else read_limited(file)
            if len(raw) > DEFAULT_MAX_BYTES:  # a device or a stuck pipe: never read, nor scanned, whole
                fail(f"--file {file}: over {DEFAULT_MAX_BYTES} bytes; test a smaller sample", code=EXIT_INPUT)
            if not raw and str(file) != "-" and _is_pipe(file):
                # read_limited does not wait for a writer: a FIFO nobody writes into reads as empty at once, and
                # showing what an empty text is stored as would answer a question nobody asked.
                fail(f"--file {file} is a named pipe (FIFO) and nothing was read from it (no writer had it open,"
                     " or it wrote nothing): start the writer first (`CMD > FIFO &`), or give a regular file",
                     code=EXIT_INPUT)
            text = raw.decode("utf-8")
        except OSError as exc:
            fail(f"--file {file}: cannot read: {exc.strerror}", code=EXIT_INPUT)
        except UnicodeDecodeError as exc:
            fail(f"--file {file}: not UTF-8 text ({exc.reason} at byte {exc.start})", code=EXIT_INPUT)
    assert text is not None
    fields = _where_option(where)
    policy = _policy_in_force()
    try:
        trial = try_field(policy, text, kind=kind, path=path, where=fields)
    except TrialInputError as exc:
        fail(str(exc), code=EXIT_INPUT)
    if as_json:
        print_json({"policy": policy.run_meta_value, **trial.to_json()})
    else:
        stored = trial.stored
        if stored is not None:  # None: the entry holds nothing at --path (stderr says where it went)
            click.echo(stored if isinstance(stored, str) else json.dumps(stored, ensure_ascii=False))
        click.echo(_explain(trial), err=True)
    if trial.mode == "withheld":
        raise SystemExit(EXIT_FAIL)


def _is_pipe(file: Path) -> bool:
    """True when ``file`` is a named pipe (or a shell's ``<(...)``, which is one too)."""
    try:
        return stat.S_ISFIFO(os.stat(file).st_mode)
    except OSError:
        return False


def _explain(trial: FieldTrial) -> str:
    """The stderr line: what a recording does with the field, and which rule decided."""
    said = f"-- {trial.kind} {trial.path}: {_MODE_WORDS.get(trial.mode, trial.mode)}"
    if trial.mode == "scrub":
        detail = ", ".join(f"{name} {n}" for name, n in trial.found.items())
        said += f", {sum(trial.found.values())} found ({detail})" if trial.found else ", nothing found"
    own = trial.declared.get(trial.path, next(iter(trial.declared.values()), {}))
    if trial.mode == "withheld":
        said += f" ({own.get('cause', 'invalid_argument')}: {own.get('reason', 'see the gap')}), never stored"
    if trial.mode == "hash-only" and own.get("unopenable"):
        said += f" (never openable: {own['unopenable']})"
    if trial.stored is None:
        said += f"; the entry holds nothing at {trial.path} (declared: {', '.join(trial.declared) or 'none'})"
    return f"{said}; {trial.decided_by()}"


@capture_group.command("keygen")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the key (64 hex characters, owner-only); never overwritten.")
@json_option("Print as JSON.")
@pass_app
def capture_keygen(app: AppContext, output: Path, as_json: bool) -> None:
    """Make a capture key file: 32 random bytes as 64 hex characters, mode 0600.

    Keep it apart from the evidence (never under the data directory): it is
    what makes a hash-only field unguessable. Name it in the policy's
    hash_only_key, or in BITEXACT_CAPTURE_KEY.

    \b
    Examples:
      bitexact capture keygen -o /run/secrets/bitexact-capture.key
      BITEXACT_CAPTURE_KEY=/run/secrets/bitexact-capture.key bitexact capture policy show

    \b
    Exit codes:
      0  written
      1  the key could not be made (the file is already there, not writable)
      2  -o unusable: a directory, a device or a pipe, under the data directory, or one of
         BitExact's own files
    """
    from bitexact.crypto.keysources import generate_key_file

    if not output.name:  # '' reads as '.': there is no file name to write the key under
        fail(f"-o {output}: names a directory, not a file; name the key file", code=EXIT_INPUT)
    app.refuse_own_file(output)
    if is_special(output):  # refused as every -o is (README), not as a key already there
        fail(f"-o {output}: not a regular file (a device or a pipe); name a file", code=EXIT_INPUT)
    if config.inside(output, app.home):
        # A copy of the data directory would carry the key that makes its hash-only fields unguessable.
        fail(f"-o {output}: a capture key never goes under the data directory {app.home}; keep it apart",
             code=EXIT_INPUT)
    try:
        key_id = generate_key_file(output)
    except KeyMaterialError as exc:
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json({"path": str(output), "key_id": key_id})
        return
    console.print(f"{tick()} capture key written to {escape(plain(str(output)))} (owner-only)\n  key id {key_id}",
                  soft_wrap=True)  # the path and the key id are copied into a policy: never wrapped


@capture_group.command("backfill")
@click.option("--run", "run_id", required=True, help="The recorded run to check against the policy in force.")
@click.option("--by", required=True, help="Who requests the redaction (a different principal approves it).")
@json_option("Print as JSON.")
@pass_app
def capture_backfill(app: AppContext, run_id: str, by: str, as_json: bool) -> None:
    """File one dual-control redaction request for what the policy in force removes from RUN.

    Never rewrites the run: the request names every stored field the policy
    keeps hash-only or a detector finds something in, by STEP:PATH, and
    `bitexact redaction approve RUN --by OTHER` destroys them. Under
    BITEXACT_REQUIRE_DUAL_CONTROL it refuses: there --by is typed, not
    authenticated, so request it in the viewer.

    \b
    Examples:
      bitexact capture backfill --run RUN --by dpo:alice
      bitexact redaction approve RUN --by dpo:bob

    \b
    Exit codes:
      0  filed, or nothing to request
      1  refused or failed: the policy is off or cannot be used, a request is already pending,
         BITEXACT_REQUIRE_DUAL_CONTROL set, no such run (as the capture contract says;
         other commands exit 2 for it), the store does not open
      2  --by empty, or a usage error
    """
    try:
        required = dual_control_required()
    except ValueError as exc:
        fail(f"{exc}; refusing rather than guessing", code=EXIT_FAIL)
    if required:
        fail(f"{ENV_DUAL_CONTROL} is set: --by is typed, not authenticated, so request the redaction in the viewer",
             code=EXIT_FAIL)
    if not by.strip():
        fail("--by must name who requests the redaction", code=EXIT_INPUT)  # a bad argument: usage, exit 2
    policy = _policy_in_force()
    if policy.off:
        fail("the capture policy is off: there is nothing to backfill against", code=EXIT_FAIL)
    try:
        waiting = pending_request(app.run_store, run_id)  # no store here holds no run: none is made
        if waiting is not None:
            fail(f"run {run_id} already has a pending redaction request ({waiting.request_id}, by"
                 f" {waiting.requested_by}); approve or reject it first (`bitexact redaction status {run_id}`)",
                 code=EXIT_FAIL)
        plan = plan_backfill(app.store, run_id, policy)
        if not plan.fields:
            if as_json:
                print_json({"run_id": run_id, "policy": policy.digest, "request": None, "fields": []})
            else:
                console.print(f"nothing to request: {escape(plain(run_id))} holds nothing the capture policy in"
                              " force removes")
            return
        request = file_request(app.store, run_id, plan.tokens, by=by, reason=plan.reason)
    except RunNotFoundError:
        app.no_run(run_id, code=EXIT_FAIL)  # the capture contract: "Backfill exits 1 when ... the run does not exist"
    except (BackfillError, RequestError) as exc:
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json({"run_id": run_id, "policy": policy.digest, "request": request.request_id,
                    "fields": [{"field": f.token, "why": f.why} for f in plan.fields]})
        return
    console.print(f"{tick()} redaction request {request.request_id} filed on {escape(plain(run_id))} by "
                  f"{escape(plain(by))}: {len(plan.fields)} field(s) (policy {policy.digest})", soft_wrap=True)
    for item in plan.fields:
        # A field's path is the recorded data's own keys: its control characters are shown as escapes.
        console.print(f"  {escape(plain(item.token))}  [dim]{escape(plain(item.why))}[/]", soft_wrap=True)
    # The command is copied from its line whole: never wrapped (nor the step paths above).
    console.print("Nothing changes until a different principal approves: `bitexact redaction approve "
                  f"{escape(plain(run_id))} --by NAME` (or `bitexact redaction reject ...`).", soft_wrap=True)


# -- bitexact capture journal ---------------------------------------------------

EXIT_CUT_SHORT = 1
EXIT_UNOPENED = 2


class _WatchedReads(io.BytesIO):
    """A file's bytes that remember whether a read came up short (the file ended inside a frame).

    The envelope reader raises the same error for a file cut short and for
    one altered; a short read before the error is what tells them apart.
    """

    short = False

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        if size is not None and size >= 0 and len(data) < size:
            self.short = True
        return data


class _Unopened(Exception):
    """FILE cannot be opened; ``reason`` is a stable word for scripts, the message says why."""

    def __init__(self, reason: str, message: str, **detail: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class _Journal:
    """What a sealed file holds, as far as it could be read."""

    purpose: str
    host_key_id: str
    chunks: int
    """Chunks opened and authenticated, the final (empty) one included when present."""
    payload: bytes
    complete: bool
    ending: str
    """How the file ends: properly, or where and how it was cut short."""


def _host_key_for(app: AppContext, path: Path | None) -> HostKey:
    """The key from --host-key PATH, else this host's (BITEXACT_HOST_KEY or beside the data directory)."""
    try:
        if path is not None:
            return read_host_key(path)  # the same checks as the host's own key
        return load_host_key(app.home, create=False)  # opening a journal never makes a key
    except HostKeyError as exc:
        raise _Unopened("no_host_key", f"no host key to open it with: {exc}") from None


def _header_of(data: bytes) -> dict[str, Any]:
    """The header of a file whose header the envelope reader has already accepted."""
    start = len(MAGIC) + 4
    size = int.from_bytes(data[len(MAGIC) : start], "big")
    header = loads(data[start : start + size])
    return header if isinstance(header, dict) else {}


JOURNAL_READ_MAX = 1 << 30
"""The largest file ``capture journal`` reads (1 GiB). A journal holds one SDK entry's JSON as the agent
recorded it, before the capture policy ran, so BITEXACT_MAX_BODY_BYTES (64 MiB a field) does not bound it;
the SDK's queue bound (BITEXACT_QUEUE_MAX_BYTES, 256 MiB) is the size past which an entry waits alone. This
is four times that; a larger one is left to `bitexact repair`, which folds it."""
_READ_PIECE = 16 << 20


def _too_large(file: Path, size: int) -> _Unopened:
    return _Unopened("too_large", f"{file} is {size:,} bytes, over the {JOURNAL_READ_MAX:,} bytes (1 GiB) this"
                                  " command reads; `bitexact repair RUN` folds a journal that large")


def _open_regular(file: Path) -> tuple[io.FileIO, int]:
    """``file`` open for reading, and its size; refused (exit 2) when it is not a regular file (a device such
    as /dev/zero or a pipe never ends; a directory holds no bytes), before anything is read. Opened without
    blocking, so a FIFO with no writer opens, and is refused."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _Unopened("unreadable", f"{file}: cannot read: {exc.strerror or exc}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise _Unopened("unreadable", f"{file} is {file_kind(status.st_mode)}, not a file: a journal or spool"
                                          " is a regular file (nothing was read from it)")
        return io.FileIO(fd, "rb"), status.st_size
    except BaseException:
        os.close(fd)
        raise


def _checked_slots_file(file: Path) -> None:
    """Refuse a slots file that is not a regular file, or is larger than this command reads, before a byte of
    it is read (a slots file is a few MiB; a link to /dev/zero under its name never ends)."""
    stream, size = _open_regular(file)
    stream.close()
    if size > JOURNAL_READ_MAX:
        raise _too_large(file, size)


def _read_sealed_file(file: Path) -> bytes:
    """A journal or spool file's bytes: refused unless it is a regular file, its first bytes read and checked
    for the sealed-envelope magic before anything else (a file that is not sealed is refused having read
    only those), then read in pieces up to :data:`JOURNAL_READ_MAX` (Ctrl-C stops it between pieces)."""
    stream, size = _open_regular(file)
    with stream:
        try:
            head = stream.read(len(MAGIC)) or b""
            if head != MAGIC:  # nothing more is read
                what = "it is empty" if not head else "it does not start with the sealed-envelope magic"
                raise _Unopened("not_sealed", f"{file} is not a sealed journal or spool: {what}")
            if size > JOURNAL_READ_MAX:
                raise _too_large(file, size)
            pieces, total = [head], len(head)
            while piece := stream.read(_READ_PIECE):
                total += len(piece)
                if total > JOURNAL_READ_MAX:  # it grew while being read
                    raise _too_large(file, total)
                pieces.append(piece)
        except OSError as exc:
            raise _Unopened("unreadable", f"{file}: cannot read: {exc.strerror or exc}") from None
    return b"".join(pieces)


def _sealed_bytes(file: Path) -> bytes:
    """FILE's sealed bytes; for ``SLOTS#N`` (a slot of an SDK slots file), that slot's."""
    name, hash_sign, number = file.name.rpartition("#")
    if hash_sign and is_slots_file(file.with_name(name)) and not file.exists():
        slots_path = file.with_name(name)
        if not (number.isascii() and number.isdigit()):
            raise _Unopened("no_such_slot", f"{file}: {number!r} is not a slot number (SLOTS#N, N from 0)")
        if slots_path.exists():
            _checked_slots_file(slots_path)
        try:
            count = slot_count(slots_path)
            full = {index: (blob, problem) for index, blob, problem in slot_blobs(slots_path)}
        except (OSError, JournalError) as exc:
            raise _Unopened("unreadable", f"{slots_path}: cannot read its slots: {exc}") from None
        if int(number) >= count:
            raise _Unopened("no_such_slot", f"{slots_path} has {count} slot{'s' if count != 1 else ''}"
                                            f" (#0 to #{count - 1}): there is no slot {number}")
        if int(number) not in full:
            raise _Unopened("empty_slot", f"slot {number} of {slots_path} holds no journal (it is free)")
        blob, problem = full[int(number)]
        if problem is not None:
            raise _Unopened("damaged", problem)
        return blob
    return _read_sealed_file(file)


def _open_journal(file: Path, key: HostKey, data: bytes | None = None) -> _Journal:
    data = _sealed_bytes(file) if data is None else data
    if not data.startswith(MAGIC):
        what = "it is empty" if not data else "it does not start with the sealed-envelope magic"
        raise _Unopened("not_sealed", f"{file} is not a sealed journal or spool: {what}")
    header_end = len(MAGIC) + 4 + int.from_bytes(data[len(MAGIC) : len(MAGIC) + 4], "big")
    if len(data) < header_end:
        raise _Unopened("cut_short", f"{file} was cut short inside its header: nothing in it can be opened")
    stream = _WatchedReads(data)
    plain: list[bytes] = []
    chunks = 0
    complete = False
    ending = "ended properly (its final chunk is present)"
    try:
        for chunk, final in iter_chunks(stream, key):
            chunks += 1
            if final:
                complete = True
            else:
                plain.append(chunk)
        if not complete:
            ending = (f"cut short after chunk {chunks - 1}: its final chunk is missing"
                      if chunks else "cut short after its header: it holds no chunk")
    except WrongHostKeyError:
        sealed_under = str(_header_of(data).get("host_key_id"))
        raise _Unopened(
            "wrong_host_key",
            f"{file} was sealed under host key {sealed_under}, this host's key is {key.key_id} ({key.path}): "
            "a journal opens only on the host that sealed it",
            sealed_under=sealed_under, host_key_id=key.key_id,
        ) from None
    except SealedEnvelopeError as exc:
        if not stream.short:
            raise _Unopened("damaged", f"{file} cannot be opened: {exc}") from None
        # The file ends inside a chunk: its writer stopped part way through writing it.
        ending = f"cut short inside chunk {chunks}: that chunk is incomplete and was not opened"
    header = _header_of(data)
    return _Journal(str(header.get("purpose")), str(header.get("host_key_id")), chunks, b"".join(plain),
                    complete, ending)


def _sdk_entry(journal: _Journal) -> tuple[dict[str, Any] | None, bytes]:
    """An SDK entry journal's record header (run, record number, kind) and the entry's data bytes.

    Its payload is the record header as one line of canonical JSON, a
    newline, then the entry's data as JSON (recording/journal.py).
    """
    if journal.purpose != SDK_JOURNAL:
        return None, journal.payload
    head, newline, body = journal.payload.partition(b"\n")
    if not newline:
        return {"unreadable": "its record header was cut short"}, b""
    try:
        doc = loads(head)
    except StrictJSONError as exc:
        return {"unreadable": f"its record header is not JSON: {exc}"}, body
    if not isinstance(doc, dict):
        return {"unreadable": "its record header is not a JSON object"}, body
    fields = ("run_id", "seq", "kind", "steps_before", "recorded_at")
    return {name: doc.get(name) for name in fields}, body


def _content(body: bytes) -> tuple[str, Any]:
    """How to show ``body``: ("json", value), ("text", str) or ("bytes", str with escapes)."""
    try:
        return "json", loads(body, max_bytes=len(body) + 1)
    except StrictJSONError:
        pass
    try:
        return "text", body.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes", body.decode("utf-8", "backslashreplace")


def _check_output(output: Path, file: Path, force: bool) -> None:
    """Refuse an -o target before anything is opened: FILE itself, a directory, a device or a named pipe, or
    (without ``force``) an existing file."""
    if not (output.exists() or output.is_symlink()):
        return
    # FILE#N names a slot of a slots file: the file read is FILE, which -o must never replace either.
    read = file if file.exists() else Path(str(file).rpartition("#")[0] or str(file))
    if read.exists() and output.exists() and os.path.samefile(output, read):
        fail(f"-o {output} is the journal itself: its plaintext must never replace the sealed file",
             code=EXIT_INPUT)
    if output.is_dir():
        fail(f"-o {output} is a directory; name a file", code=EXIT_INPUT)
    if is_special(output):  # --force or not: the rename would replace a device or a pipe
        fail(f"-o {output}: not a regular file (a device or a pipe would be replaced by the file); name a file",
             code=EXIT_INPUT)
    if not force:
        fail(f"-o {output} already exists; pass --force to replace it", code=EXIT_INPUT)


def _summary_lines(file: Path, journal: _Journal, entry: dict[str, Any] | None) -> list[str]:
    lines = [
        f"{file}",
        f"  purpose      {journal.purpose}",
        f"  host key     {journal.host_key_id}",
        f"  chunks       {journal.chunks}",
        f"  bytes        {len(journal.payload):,} (plaintext)",
        f"  ending       {journal.ending}",
    ]
    if entry is not None:
        if "unreadable" in entry:
            lines.append(f"  entry        {entry['unreadable']}")
        else:
            lines.append(f"  run          {entry['run_id']}")
            lines.append(f"  record       #{entry['seq']} of the run, kind {entry['kind']}, recorded at "
                         f"{entry['recorded_at']} (the chain held {entry['steps_before']} when it was recorded)")
    return lines


def _refuse(file: Path, as_json: bool, reason: str, message: str, code: int) -> NoReturn:
    """A slots file that is not listed: JSON when asked for (``opened: false`` and a stable reason), else text."""
    if as_json:
        print_json({"file": str(file), "opened": False, "error": reason, "message": message})
        raise SystemExit(code)
    fail(message, code=code)


def _list_slots(app: AppContext, file: Path, host_key_file: Path | None, *, as_json: bool, asked: bool) -> None:
    """A slots file: one summary per full slot (``FILE#N`` opens one slot as a journal)."""
    if asked:
        _refuse(file, as_json, "slots_file", f"{file} holds one journal per slot: name one as {file.name}#N to"
                " --show it or write it with -o", EXIT_INPUT)
    try:
        _checked_slots_file(file)
        key = _host_key_for(app, host_key_file)
        blobs = slot_blobs(file)
    except _Unopened as exc:
        _refuse(file, as_json, exc.reason, str(exc), EXIT_UNOPENED)
    except (OSError, JournalError) as exc:
        _refuse(file, as_json, "unreadable", f"{file}: not a slots file this BitExact can read: {exc}",
                EXIT_UNOPENED)
    slots: list[dict[str, Any]] = []
    for index, _, _ in blobs:
        label = file.with_name(f"{file.name}#{index}")
        try:
            journal = _open_journal(label, key)
        except _Unopened as exc:
            slots.append({"slot": index, "opened": False, "error": exc.reason, "message": str(exc)})
            continue
        entry, _ = _sdk_entry(journal)
        slots.append({"slot": index, "opened": True, "purpose": journal.purpose, "bytes": len(journal.payload),
                      "complete": journal.complete, "sdk_entry": entry})
    code = 0 if all(slot["opened"] and slot["complete"] for slot in slots) else EXIT_CUT_SHORT
    if as_json:
        print_json({"file": str(file), "slots_file": True, "full_slots": slots})
        raise SystemExit(code)
    click.echo(f"{file}: {len(slots)} full slot(s) (an SDK slots file; FILE#N opens one)")
    for slot in slots:
        if not slot["opened"]:
            click.echo(f"  #{slot['slot']:<4} does not open: {slot['message']}")
            continue
        entry = slot["sdk_entry"] or {}
        click.echo(f"  #{slot['slot']:<4} run {entry.get('run_id')}, record #{entry.get('seq')}, kind "
                   f"{entry.get('kind')}, {slot['bytes']:,} bytes, recorded at {entry.get('recorded_at')}")
    if code:
        click.echo("warning: a slot that does not open was being written when its process stopped "
                   "(its call never returned)", err=True)
    raise SystemExit(code)


@capture_group.command("journal")
@click.argument("file", type=click.Path(path_type=Path))  # a directory is "unreadable" (exit 2, JSON with --json)
@click.option("--host-key", "host_key_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Open with the host key in this file instead of this host's "
                   "(BITEXACT_HOST_KEY, else <data directory>.host.key).")
@click.option("--show", is_flag=True,
              help="Also print what it holds (JSON pretty-printed). It is evidence from before the capture "
                   "policy ran: it may hold card numbers.")
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="Write its exact plaintext bytes to this new file (owner-only, 0600).")
@click.option("--force", is_flag=True, help="Let -o replace an existing file.")
@json_option("Print as JSON.")
@pass_app
def capture_journal(
    app: AppContext, file: Path, host_key_file: Path | None, show: bool, output: Path | None, force: bool,
    as_json: bool,
) -> None:
    """Open a sealed journal or spool FILE with this host's key and summarize it.

    A journal holds evidence from before the capture policy ran on it (a
    large SDK entry whose process died, a stream a failed finalization left
    behind), so it is sealed under the host key and opens only on the host
    that wrote it. By default only a summary is printed: its purpose label,
    the host key it was sealed under, how many chunks and bytes it holds,
    whether it ended properly or was cut short, and for an SDK entry journal
    the run, record number and kind it holds - never its content. Printing
    the content is an explicit act: --show prints it (JSON pretty-printed),
    -o OUT writes its exact bytes to a new owner-only file.

    An SDK slots file (``slots-<token>-<KiB>k.bxs``, one journal per slot)
    is listed slot by slot; ``FILE#N`` opens slot N as a journal.

    FILE must be a regular file: a device (/dev/zero), a named pipe or a
    directory is refused before anything is read from it. Its first bytes
    are checked for the sealed-envelope magic before the rest is read, and
    at most 1 GiB is read (a journal holds one SDK entry as recorded, which
    BITEXACT_MAX_BODY_BYTES does not bound; a larger one is left to
    `bitexact repair`, which folds it).

    \b
    Examples:
      bitexact capture journal ~/.bitexact/journals/RUN/000000000002-1a2b3c4d.bxj
      bitexact capture journal ~/.bitexact/journals/RUN/slots-0a1b2c3d-16k.bxs
      bitexact capture journal ~/.bitexact/journals/RUN/slots-0a1b2c3d-16k.bxs#3 --show
      bitexact capture journal FILE --show
      bitexact capture journal FILE -o entry.bin
      bitexact capture journal FILE --host-key /secure/other-host.key --json

    \b
    Exit codes:
      0  opened, and it ended properly
      1  opened, but cut short (its writer stopped): what it holds so far is summarized
      2  cannot be opened: not a regular file (a device such as /dev/zero, a pipe, a directory:
         nothing is read from it), not a sealed file (only its first bytes are read), over 1 GiB,
         a damaged chunk, sealed under another host's key, no host key; also -o refused (the file
         exists, without --force; a device or a pipe, even with it)
    """
    if is_slots_file(file) and file.exists():
        _list_slots(app, file, host_key_file, as_json=as_json, asked=show or output is not None)
        return
    if output is not None:
        _check_output(output, file, force)  # first: "the journal itself" says more than "one of BitExact's files"
        app.refuse_own_file(output)
    try:
        data = _sealed_bytes(file)  # first: a FILE that is no journal is named as such, host key or none
        key = _host_key_for(app, host_key_file)
        journal = _open_journal(file, key, data)
    except _Unopened as exc:
        if as_json:
            print_json({"file": str(file), "opened": False, "error": exc.reason, "message": str(exc), **exc.detail})
            raise SystemExit(EXIT_UNOPENED) from None
        hint = ("Run it on the host that sealed the file, or pass that host's key with --host-key PATH."
                if exc.reason == "wrong_host_key" else None)
        fail(str(exc), code=EXIT_UNOPENED, hint=hint)
    entry, body = _sdk_entry(journal)
    if output is not None:
        try:
            # Owner-only, whole or absent; an existing file is replaced (atomically) only with --force.
            write_private_file(output, journal.payload, replace=force)
        except OSError as exc:
            fail(f"-o {output}: cannot write: {exc.strerror or exc}", code=EXIT_INPUT)
    code = 0 if journal.complete else EXIT_CUT_SHORT
    if as_json:
        document: dict[str, Any] = {
            "file": str(file), "opened": True, "purpose": journal.purpose, "host_key_id": journal.host_key_id,
            "chunks": journal.chunks, "bytes": len(journal.payload), "complete": journal.complete,
            "ending": journal.ending, "sdk_entry": entry,
        }
        if output is not None:
            document["written_to"] = str(output)
        if show:
            form, value = _content(body)
            document[{"json": "content", "text": "content_text", "bytes": "content_base64"}[form]] = (
                base64.b64encode(body).decode("ascii") if form == "bytes" else value
            )
        print_json(document)
        raise SystemExit(code)
    for line in _summary_lines(file, journal, entry):
        click.echo(line)
    if output is not None:
        click.echo(f"  written to   {output} (owner-only; {len(journal.payload):,} bytes)")
    if show:
        form, value = _content(body)
        # Pre-policy evidence (a page, a stream): its control characters and bidirectional overrides are
        # written as escapes, so it cannot clear or reorder the terminal; -o OUT writes the exact bytes.
        click.echo(plain(json.dumps(value, indent=2, ensure_ascii=False) if form == "json" else value))
        if form == "bytes":
            click.echo("(not UTF-8 text: shown with \\x escapes; -o OUT writes the exact bytes)", err=True)
    elif output is None:
        click.echo("(content not shown: it is evidence from before the capture policy ran; "
                   "--show prints it, -o OUT writes it to an owner-only file)", err=True)
    if not journal.complete:
        click.echo(f"warning: {file} was cut short - {journal.ending}; "
                   "what it holds is incomplete", err=True)
    raise SystemExit(code)
