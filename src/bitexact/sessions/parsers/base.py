"""What every engine adapter shares: the output being built and its reporting.

``Session`` gathers the canonical events, the diagnostics, the MCP failures
and the max-turns flag of one parse, and turns them into a ``ParseResult``.
It also applies T-UAS-017: if no supported record was recognised, the trace
is empty and the result says "unrecognized format" (or "empty input"), no
matter what a fallback produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from bitexact.sessions.model import ParseResult
from bitexact.sessions.records import KIND_OBJECT, Diagnostics, Item, frame, may_hold_objects

Event = dict[str, Any]

UNRECOGNIZED_NOTE = "unrecognized format: no supported {engine} records found"
EMPTY_NOTE = "empty input: no content to parse"


def unrecognized_markdown(engine: str) -> str:
    """The existing parsers' unrecognized-format report (no raw preview, 8.1)."""
    return f"## Agent Log Summary\n\nLog format not recognized as {engine} output.\n"


@dataclass
class Session:
    """Mutable output of one parse (owned by the adapter, never the caller's data)."""

    engine: str
    events: list[Event] = field(default_factory=list)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    mcp_failures: list[str] = field(default_factory=list)
    max_turns_hit: bool = False
    recognized: int = 0

    def emit(self, *events: Event) -> None:
        self.events.extend(events)

    def mcp_failure(self, server: str) -> None:
        if server not in self.mcp_failures:
            self.mcp_failures.append(server)

    def result(self, text: str) -> ParseResult:
        """Finish: the ParseResult, with T-UAS-017 applied."""
        notes = self.diagnostics.finish()
        if not text.strip():
            return ParseResult(events=[], markdown="", engine=self.engine, diagnostics=[EMPTY_NOTE])
        if self.recognized == 0:
            notes.append(UNRECOGNIZED_NOTE.format(engine=self.engine))
            return ParseResult(
                events=[],
                markdown=unrecognized_markdown(self.engine),
                mcp_failures=list(self.mcp_failures),
                max_turns_hit=self.max_turns_hit,
                engine=self.engine,
                diagnostics=notes,
            )
        return ParseResult(
            events=self.events,
            markdown="",
            mcp_failures=list(self.mcp_failures),
            max_turns_hit=self.max_turns_hit,
            engine=self.engine,
            diagnostics=notes,
        )


class ObjectMapper(Protocol):
    """An engine mapper fed one JSON object record at a time."""

    def map(self, value: Any) -> bool: ...

    def finish(self) -> None: ...


SHAPE_ERRORS: tuple[type[Exception], ...] = (TypeError, ValueError, IndexError, KeyError, AttributeError)
"""What a mapper raises on a record that is valid JSON of an unexpected shape (a list where a name belongs)."""


def map_record(session: Session, mapper: ObjectMapper, item: Item) -> bool | None:
    """Feed one object record to ``mapper``: True when it used it, False when not.

    A record of an unexpected shape is skipped with a diagnostic naming its
    line (None), never a crash that loses the records around it.
    """
    try:
        return mapper.map(item.value)
    except SHAPE_ERRORS as exc:
        session.diagnostics.unexpected_shape(item, exc)
        return None


def parse_objects(session: Session, mapper: ObjectMapper, text: str) -> ParseResult:
    """Frame ``text``, feed every JSON object record to ``mapper``, and report the rest as skipped."""
    mapping = mapper.map
    skipped = session.diagnostics.skipped
    for item in frame(text):
        if item.kind != KIND_OBJECT:
            skipped(item)
            continue
        try:  # map_record's work, in the loop: a Python call less per record
            used = mapping(item.value)
        except SHAPE_ERRORS as exc:
            session.diagnostics.unexpected_shape(item, exc)
            continue
        if used:
            session.recognized += 1
        elif used is False:
            skipped(item)
    mapper.finish()
    return session.result(text)


def parse_console_log(
    text: str, engine: str, recognizes: Callable[[str], bool], run: Callable[[Session, list[str]], None]
) -> ParseResult:
    """A console-layout adapter's parse (7.6 named plaintext samples): native events first, else the layout.

    When the output holds native canonical events, they are the trace, kept
    exactly, and the console text around them is left alone (a
    canonical-producing adapter owns its mixed stdout). Otherwise, when
    ``recognizes(text)``, ``run`` maps the log's lines (a carriage return
    before each newline removed) into the session; without the engine's
    signature nothing is mapped and the result says "unrecognized format".
    """
    from bitexact.sessions.convert import is_native_event

    session = Session(engine)
    items = frame(text) if may_hold_objects(text) else []  # framing a plain-text log is most of its parse time
    if any(item.kind == KIND_OBJECT and is_native_event(item.value) for item in items):
        for item in items:
            if item.kind == KIND_OBJECT and is_native_event(item.value):
                session.emit(dict(item.value))
                session.recognized += 1
            else:
                session.diagnostics.skipped(item)
        return session.result(text)
    if not recognizes(text):
        for item in items or frame(text):
            session.diagnostics.skipped(item)
        return session.result(text)
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    run(session, lines)
    return session.result(text)


@dataclass
class UnclaimedLines:
    """Console lines a layout adapter could not attribute to a reply: counted, never claimed as text."""

    engine: str
    """How the diagnostic names the engine ("Aider", "Pydantic AI")."""
    count: int = 0
    first: int | None = None

    def add(self, pending: list[tuple[int, str]]) -> None:
        """Count the non-blank lines of ``pending`` (line number, text)."""
        for number, line in pending:
            if line.strip():
                self.count += 1
                if self.first is None:
                    self.first = number

    def report(self, diagnostics: Diagnostics) -> None:
        if self.count:
            diagnostics.add(
                f"{self.count} {self.engine} output line(s) not attributed to a reply (first at line "
                f"{self.first}); not claimed as assistant text"
            )
