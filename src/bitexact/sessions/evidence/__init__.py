"""Agent session logs as evidence: one canonical event, one ``asserted`` entry.

``bitexact import session`` reads an engine log (any engine
:func:`bitexact.sessions.parse` supports) or a unified ``aw_session.jsonl``
(UAS 3.5: a ``session.format`` header, then events with provenance) and
records it as a BitExact run through the one write path
(:class:`bitexact.recording.RunWriter`), so the capture policy applies to
every event as it does to any other door. This module is a door: it builds
the entries' *data* and calls the write path; it builds no entry itself.

Public API::

    read_session(path, engine=None) -> SessionSource     # bytes -> digest + events
    load_session(data, name, engine=None) -> SessionSource
    kind_for(event_type) -> str                          # the documented mapping
    entry_data(source, item) -> dict                     # what one entry's data holds
    find_earlier_import(store, sha256) -> RunInfo | None   # the run that refuses these bytes again
    superseded_imports(store, sha256) -> list[str]          # repaired partial imports a new one supersedes
    import_session(recorder, source, run_id=None) -> ImportResult

A run reads: ``run_meta`` (observed: the recorder's record of the import,
with the file's SHA-256), a ``marker`` listing what the reader skipped (when
it skipped anything), one entry per event in source order (``asserted``: the
log is the engine's word, never our observation), and ``run_end`` sealing
it. The mapping and the data layout are documented in
``docs/sessions-evidence.md``.
"""

from bitexact.sessions.evidence.entries import entry_data
from bitexact.sessions.evidence.errors import (
    AlreadyImportedError,
    RunIdTakenError,
    SessionImportError,
    SessionInputError,
)
from bitexact.sessions.evidence.importer import (
    ImportResult,
    diagnostics_marker,
    find_earlier_import,
    import_session,
    run_name,
    superseded_imports,
)
from bitexact.sessions.evidence.mapping import (
    EVENT_PROV,
    EXACT_KINDS,
    FALLBACK_KIND,
    IMPORTER,
    MAX_SAFE_INTEGER,
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

__all__ = [
    "AlreadyImportedError",
    "EVENT_PROV",
    "EXACT_KINDS",
    "FALLBACK_KIND",
    "IMPORTER",
    "ImportResult",
    "MAX_SAFE_INTEGER",
    "NAMESPACE_KINDS",
    "RunIdTakenError",
    "SessionImportError",
    "SessionInputError",
    "SessionSource",
    "SourceEvent",
    "UNIFIED",
    "diagnostics_marker",
    "entry_data",
    "find_earlier_import",
    "import_session",
    "kind_for",
    "load_session",
    "read_session",
    "run_name",
    "superseded_imports",
]
