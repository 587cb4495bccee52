"""Recording a session file as a run through the one write path, refusing re-imports."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from bitexact.capture.rules import StepRules
from bitexact.errors import BitExactError, CanonicalizationError, StoreError
from bitexact.recording import Recorder, RunWriter, new_run_id
from bitexact.recording.journal import JournalError, hold_live_lock, release_live_lock
from bitexact.sessions.evidence.entries import entry_data
from bitexact.sessions.evidence.errors import (
    AlreadyImportedError,
    RunIdTakenError,
    SessionImportError,
    SessionInputError,
)
from bitexact.sessions.evidence.mapping import (
    EVENT_PROV,
    EXACT_KINDS,
    FALLBACK_KIND,
    IMPORTER,
    NAMESPACE_KINDS,
    UNIFIED,
    kind_for,
)
from bitexact.sessions.evidence.source import (
    SessionSource,
    SourceEvent,
    load_session,
    read_session,
)
from bitexact.store import RunInfo, RunNotFoundError, Store, store_home

_NAME_DIGEST: Final = re.compile(r" sha256:([0-9a-f]{64})$")


def run_name(source: SessionSource) -> str:
    """The run's store name; it carries the digest so re-imports are found without reading entries."""
    return f"session import {source.name} sha256:{source.sha256}"


def find_earlier_import(store: Store, sha256: str) -> RunInfo | None:
    """The run that imported bytes with this SHA-256 and so refuses another import of them, or None.

    That is a sealed import, or an unsealed one no operator accepted the end
    of (still running, or killed before a repair). An unsealed import with a
    ``repair`` entry (``bitexact repair RUN``: its truncated history was
    accepted) no longer refuses: :func:`superseded_imports` names it, and
    the new import's run_meta says it supersedes it.

    The chain is authoritative, not the run's name: the capture policy
    scrubs the name (a custom detector may hit the digest in it) and a
    redaction may remove it. So a run is passed over on its store metadata
    alone only when its name proves it is no import of these bytes
    (:func:`_names_other_bytes`); every other run is confirmed from its
    entries (:func:`_imported`), one entry read each. A run with no entries
    (its import stopped before run_meta) is ignored.
    """
    return _earlier(store, sha256)[0]


def superseded_imports(store: Store, sha256: str) -> list[str]:
    """The run ids of earlier imports of these bytes that stopped before their seal and whose end an operator
    accepted with ``bitexact repair``: a new import of the bytes supersedes them."""
    return _earlier(store, sha256)[1]


def _earlier(store: Store, sha256: str) -> tuple[RunInfo | None, list[str]]:
    """One read of the earlier imports of these bytes: the first that refuses another import
    (:func:`find_earlier_import`), and those a new import supersedes (:func:`superseded_imports`)."""
    runs = list(_earlier_imports(store, sha256))
    return (next((info for info in runs if not accepted_partial(info)), None),
            [info.run_id for info in runs if accepted_partial(info)])


def accepted_partial(info: RunInfo) -> bool:
    """An unsealed run holding a ``repair`` entry: its recording stopped, and an operator accepted that its
    history ends there (a repair is refused while a process still records the run)."""
    return not info.sealed and int(info.kinds.get("repair", 0) or 0) > 0


def _earlier_imports(store: Store, sha256: str) -> Iterator[RunInfo]:
    for info in store.runs():
        if info.steps == 0 or _names_other_bytes(info, sha256):
            continue
        if _imported(store, info, sha256):
            yield info


_TOKEN_OPEN: Final[str] = "["
"""What every capture-policy replacement token starts with (``[CREDENTIAL]``, ``[PAN ****1111]``, ``[NAME]``)."""


def _names_other_bytes(info: RunInfo, sha256: str) -> bool:
    """Whether the run's store name proves the run is no import of ``sha256``.

    Scrubbing replaces findings with bracketed tokens and a redaction
    removes the name, so an import's name is either :func:`run_name`'s
    whole (ending in ``sha256:`` and its well-formed digest), or holds a
    ``[``, or is gone. Hence a name ending in another well-formed digest, or
    one not of that form with no ``[`` at all (an ordinary run's name), is
    proof; a scrubbed name or no name is none, and the chain decides.
    """
    name = info.meta.get("name") if isinstance(info.meta, dict) else None
    if not isinstance(name, str):
        return False
    match = _NAME_DIGEST.search(name)
    if match is not None:
        return match.group(1) != sha256
    return _TOKEN_OPEN not in name


def _imported(store: Store, info: RunInfo, sha256: str) -> bool:
    """Whether the run's chain says it imported ``sha256``: run_meta's ``import.source_sha256``, or, once
    that was redacted, the run's name or any later entry's own ``source.sha256``."""
    try:
        meta = store.entry(info.run_id, 0)
    except BitExactError:
        return False
    if meta.get("kind") != "run_meta":
        return False
    block = meta.get("data", {}).get("import")
    if isinstance(block, dict) and "source_sha256" in block:
        return bool(block["source_sha256"] == sha256)
    if _DIGEST_PATH not in (meta.get("redacted") or ()):
        return False  # not an import: run_meta never declared a digest
    name = info.meta.get("name") if isinstance(info.meta, dict) else None
    match = _NAME_DIGEST.search(name) if isinstance(name, str) else None
    return (match is not None and match.group(1) == sha256) or _events_declare(store, info, sha256)


_DIGEST_PATH: Final[str] = "import.source_sha256"
"""The committed path of run_meta's digest (a redaction of it leaves the path in ``redacted``)."""


def _events_declare(store: Store, info: RunInfo, sha256: str) -> bool:
    """Whether the run's entries after run_meta declare ``sha256`` in the importer's own ``source`` block.

    The first entry that still holds a ``source.sha256`` decides; entries
    whose digest was redacted too are passed over (read one at a time, only
    for a run whose run_meta digest was redacted), so redacting the first
    few never lets the same bytes in again while a later entry declares them.
    """
    try:
        for entry in store.entries(info.run_id, 1):
            data = entry.get("data")
            source = data.get(SOURCE_KEY) if isinstance(data, dict) else None
            if isinstance(source, dict) and "sha256" in source:
                return bool(source["sha256"] == sha256)
    except BitExactError:
        return False
    return False


@dataclass(frozen=True)
class ImportResult:
    """What one import recorded."""

    run_id: str
    steps: int
    head_hash: str
    events: int
    kinds: dict[str, int] = field(default_factory=dict)
    """Entries per kind (run_meta, run_end, policy gap markers included)."""
    diagnostics: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "steps": self.steps, "head_hash": self.head_hash, "events": self.events,
                "kinds": dict(self.kinds), "diagnostics": list(self.diagnostics)}


_POSITION: Final = re.compile(r"\b(?:line|element) (\d+)")
_QUOTED: Final = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def diagnostics_marker(source: SessionSource) -> dict[str, Any]:
    """The ``marker`` data declaring what the reader skipped: count, positions and causes, never payloads.

    Parser diagnostics name positions and causes only; quoted literals (a
    skipped record's type, say) are still elided so nothing of the record
    reaches the chain.
    """
    causes = [_QUOTED.sub("'…'", d) for d in source.diagnostics]
    # Positions are read from the elided causes: a number inside a quoted literal (a skipped record's
    # type, "line 99999999999999999999") is payload, not a position, and may not even fit an entry.
    positions = sorted({int(m) for c in causes for m in _POSITION.findall(c)})
    shown = "; ".join(causes[:3]) + ("; …" if len(causes) > 3 else "")
    return {
        "note": f"gap: the reader skipped or could not map part of {source.name}: {shown}",
        "count": len(source.diagnostics),
        "positions": positions,
        "diagnostics": causes,
        "source": {"sha256": source.sha256, "name": source.name, "engine": source.engine},
    }


SOURCE_KEY: Final[str] = "source"
"""The importer's own block in an event entry (and the reader's gap marker): digest, name, engine, line."""
IMPORT_CHUNK: Final[int] = 256
"""Events per commit during an import."""


def _under_policy(recorder: Recorder, data: dict[str, Any]) -> dict[str, Any]:
    """``data``, or, when parts of it are kept as JSON text and the policy has path rules, those parts withheld.

    An event nesting deeper than an entry may hold is kept as text; the
    detectors still read it (a JSON document in a string), but a path rule
    matches keys, and there are none in text: a value a hash-only rule covers
    would be stored in the clear. So its text is not recorded, and the entry
    says so under ``withheld``.
    """
    encoded = data.get("as_text")
    if not encoded or not recorder.policy.has_path_rules:
        return data
    dropped = {"as_text", *(f"{part}_json" for part in encoded)}
    kept = {key: value for key, value in data.items() if key not in dropped}
    kept["withheld"] = {
        part: "nests deeper than an entry may hold (or holds keys canonical JSON cannot tell apart); as JSON"
              " text it would escape the capture policy's path rules, so it is not recorded"
        for part in encoded
    }
    return kept


_NO_TYPE: Final[str] = "engine event"
"""A display key's text under path rules, in place of the event type it would copy."""
_STATUS_WORDS: Final[frozenset[str]] = frozenset({"ok", "failed", "unknown", "started", "update"})
_COMPLETION: Final[str] = "tool.execution_complete"


def _no_copies(recorder: Recorder, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without copies of what a path rule keeps out of the store, when the policy has such
    rules: the ``tool`` display key (a copy of ``data.toolName``: ``*.toolName hash-only``) is left out,
    and the keys that copy the event's ``type`` (a context's ``name``, a marker's ``note``, a tool call's
    ``status`` named after the type) say ``engine event`` instead (``type hash-only``), and a completion's
    ``status`` (``ok``/``failed``, from ``data.success``) says ``event`` (``*.success hash-only``).

    A copy is kept when the rules keep it at least as strictly as its original, or when a rule that
    applies to the step names it in its ``where`` (its value is the policy's own text, and the rule
    selects the step by it: dropping it would let the value the rule covers through as captured)."""
    policy = recorder.policy
    if not policy.has_path_rules:
        return data
    rules = StepRules.select(policy.rules, kind, data)
    selecting = {name for rule in policy.rules if rule.applies_to(kind, data) for name, _ in rule.where}

    def kept(copy: str, original: tuple[str, ...]) -> bool:
        return copy in selecting or rules.strictness_at((copy,)) >= rules.strictness_at(original)

    out = dict(data)
    if "tool" in out and not kept("tool", ("data", "toolName")):
        del out["tool"]
    if not kept("name", ("type",)) and "name" in out and out["name"] == data.get("type"):
        out["name"] = _NO_TYPE
    if not kept("note", ("type",)) and isinstance(out.get("note"), str) and out["note"].startswith(f"{_NO_TYPE} "):
        out["note"] = _NO_TYPE
    if not kept("status", ("type",)) and "status" in out and out["status"] not in _STATUS_WORDS:
        out["status"] = "event"
    if data.get("type") == _COMPLETION and "status" in out and not kept("status", ("data", "success")):
        out["status"] = "event"  # ok / failed / unknown spell out data.success
    return out


def _split_own(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An entry's data without the importer's ``source`` block, and that block: the block is the
    product's own declaration, added after the capture policy has run (a detector would read a
    digest's digits as a card number)."""
    rest = {key: value for key, value in data.items() if key != SOURCE_KEY}
    return rest, ({SOURCE_KEY: data[SOURCE_KEY]} if SOURCE_KEY in data else {})


def _append_one_by_one(writer: RunWriter, source: SessionSource, chunk: list[tuple[Any, str, dict[str, Any]]]) -> None:
    for item, kind, data in chunk:
        rest, own = _split_own(data)
        try:
            writer.append(kind, rest, prov=EVENT_PROV, own=own)
        except CanonicalizationError:
            # A value canonical JSON refuses that the fitting pass does not
            # catch (keys colliding once surrogate pairs fold): keep the
            # event as JSON text rather than dropping it.
            rest, own = _split_own(_under_policy(writer.recorder,
                                                 _no_copies(writer.recorder, kind, entry_data(source, item, as_text=True))))
            writer.append(kind, rest, prov=EVENT_PROV, own=own)


def import_session(
    recorder: Recorder,
    source: SessionSource,
    *,
    run_id: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportResult:
    """Record ``source`` as a sealed run; refuses bytes imported before and a taken ``run_id``.

    ``progress`` is called with the number of events recorded so far (for a
    progress bar). Raises :class:`AlreadyImportedError` (naming the earlier run) or
    :class:`RunIdTakenError`. Entries go through ``RunWriter.append``, so the
    capture policy in force applies to each event.
    """
    store = recorder.store
    # The file's name is the operator's text, not an engine's event, yet it is stored (the run's name,
    # run_meta, every entry's source): the policy's detectors read it as they read everything else.
    source = dataclasses.replace(source, name=recorder.scrubbed(source.name))
    earlier, supersedes = _earlier(store, source.sha256)
    if earlier is not None:
        # An unsealed run is an import that was interrupted or one still recording in another
        # process; the store cannot tell them apart, so the message names both.
        if earlier.sealed:
            step = (f"inspect it with `bitexact show {earlier.run_id}`. A sealed import stays as it is: no"
                    " command removes it or lets the same bytes be imported again (`bitexact sessions parse LOG"
                    " --engine ENGINE` reads the log without recording it)")
        else:
            step = f"if no import of it is running any more, {_repair_then_import(earlier.run_id)}"
        state = "" if earlier.sealed else " (unsealed: that import is still running, or it was interrupted)"
        raise AlreadyImportedError(
            f"{source.name} (sha256 {source.sha256[:16]}...) was already imported as run {earlier.run_id}{state};"
            f" {step}",
            run_id=earlier.run_id, sealed=earlier.sealed,
        )
    if run_id is not None:
        try:
            store.run(run_id)
        except RunNotFoundError:
            pass
        else:
            raise RunIdTakenError(f"--run-id: run {run_id!r} already exists; pick another id or omit --run-id",
                                  run_id=run_id)
    # Every entry's data is made before the run is created, so an event that
    # cannot be recorded refuses the import instead of leaving half a run.
    planned = []
    for item in source.events:
        kind = kind_for(item.event["type"])
        planned.append((item, kind, _under_policy(recorder, _no_copies(recorder, kind, entry_data(source, item)))))
    block = source.describe()
    if supersedes:  # earlier partial imports of these bytes an operator accepted the end of (bitexact repair)
        block["supersedes"] = supersedes
    run_id = run_id if run_id is not None else new_run_id()  # known before the run exists: an interrupt names it
    live: Callable[[], None] | None = None
    try:
        writer = recorder.start(run_id=run_id, name=run_name(source), meta={"import": block})
        live = _hold_live_lock(store, writer.run_id)
        return _record(writer, source, planned, progress)
    except KeyboardInterrupt as exc:
        # Still a KeyboardInterrupt for the caller; the note says what was left and what comes next.
        exc.add_note(_interrupted(store, source, run_id))
        raise
    except StoreError as exc:
        # A store that failed mid-way (another program keeping it locked, a full disk): its own words ("nothing
        # was written; run the command again") are of the one write that failed, and a retry is refused by
        # the partial run. The same kind of error, saying what was left and what comes next.
        raise type(exc)(f"{exc}; {_interrupted(store, source, run_id, how='stopped')}") from exc
    finally:
        if live is not None:
            live()


def _interrupted(store: Store, source: SessionSource, run_id: str, *, how: str = "interrupted") -> str:
    """What an import cut short (by Ctrl-C, or a store failure: ``how``) left behind, and the next step."""
    try:
        steps = store.run(run_id).steps
    except RunNotFoundError:
        return f"import of {source.name} {how} before run {run_id} was created: nothing was recorded"
    except StoreError:  # the store does not read either: what it holds cannot be said
        return f"import of {source.name} {how}: `bitexact show {run_id}` says what run {run_id} holds"
    if steps == 0:  # created, nothing recorded: ignored by the next import of these bytes
        return f"import of {source.name} {how} before anything was recorded in run {run_id}: import again"
    return (f"import of {source.name} {how}: run {run_id} was left unsealed after {steps} entries;"
            f" {_repair_then_import(run_id)}")


def _repair_then_import(run_id: str) -> str:
    """The next step for an import cut short: accept the run's end, then import the bytes again."""
    return (f"accept its truncated history with `bitexact repair {run_id} --by NAME --note \"import interrupted\"`"
            f" (refused while one runs), then import again: the new run names {run_id} as the one it supersedes")


def _hold_live_lock(store: Store, run_id: str) -> Callable[[], None] | None:
    """Hold the run's live lock while the import records it, as an SDK run does: `bitexact repair` then
    refuses the run while the import runs, and `bitexact health` tells it from one whose process was killed.
    The release, or None when no lock can be held (a store with no data directory, journals/ unusable):
    the import records as before."""
    home = store_home(store)
    if home is None:
        return None
    try:
        fd = hold_live_lock(home, run_id)
    except (JournalError, OSError):
        return None
    return lambda: release_live_lock(home, run_id, fd)


def _record(writer: RunWriter, source: SessionSource, planned: list[tuple[SourceEvent, str, dict[str, Any]]],
            progress: Callable[[int], None] | None) -> ImportResult:
    """Append the planned entries in chunks and seal the run."""
    store = writer.recorder.store
    if source.diagnostics:
        rest, own = _split_own(diagnostics_marker(source))
        writer.append("marker", rest, prov=EVENT_PROV, own=own)
    # Events go in chunks, each chunk one durable commit (all or none).
    done = 0
    for first in range(0, len(planned), IMPORT_CHUNK):
        chunk = planned[first : first + IMPORT_CHUNK]
        try:
            split = [_split_own(data) for _, _, data in chunk]
            writer.append_batch([(kind, rest, EVENT_PROV) for (_, kind, _), (rest, _) in zip(chunk, split)],
                                own=[own for _, own in split])
        except CanonicalizationError:
            _append_one_by_one(writer, source, chunk)
        done += len(chunk)
        if progress is not None:
            progress(done)
    sealed = writer.seal()
    kinds = Counter(entry["kind"] for entry in store.entries(writer.run_id))
    return ImportResult(writer.run_id, sealed.step + 1, sealed.hash, len(source.events), dict(kinds),
                        source.diagnostics)


__all__ = [
    "EXACT_KINDS",
    "FALLBACK_KIND",
    "IMPORTER",
    "NAMESPACE_KINDS",
    "UNIFIED",
    "AlreadyImportedError",
    "ImportResult",
    "RunIdTakenError",
    "SessionImportError",
    "SessionInputError",
    "SessionSource",
    "SourceEvent",
    "diagnostics_marker",
    "entry_data",
    "accepted_partial",
    "find_earlier_import",
    "import_session",
    "kind_for",
    "load_session",
    "read_session",
    "run_name",
    "superseded_imports",
]
