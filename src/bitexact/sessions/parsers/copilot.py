"""Copilot adapter (UAS 7.2, T-UAS-037).

Four source forms, recognised per line and combined in source order:

* native ``events.jsonl`` records (dot-namespaced ``type`` + object ``data``),
  retained as they are; interrupted delta streams get a core message
  (``streaming.reconcile_native_deltas``); ``session.task_complete`` exposes a
  textual summary as an answer unless that answer was already observed;
  ``session.shutdown.data.agentMetrics`` becomes ``session.result.agentMetrics``;
* Claude-compatible legacy entries (``sourceEngine: "copilot"``);
* framed ``[DEBUG] data:`` chat-completion responses (possibly spread over
  several prefixed lines): content, ``reasoning_text``, ``tool_calls`` starts
  (no completion is invented), refusals, and per-response usage; OpenAI
  Responses API objects and ``response.*`` stream events in the same frames
  go to ``openai_responses.ResponsesMapper``;
* the pretty-print text of ``copilot -p`` (see below), plus an explicit
  ``Turns: N`` line (named by 7.2; no examined CLI version prints one).

Pretty-print layouts, read in the ``@github/copilot`` npm package (JavaScript of
0.0.340 and 0.0.423; 1.0.102's bundle and output captured from the binary run
against a local scripted model).  Only finished tool calls are printed, one
block per call, the marker at column 0 followed by a space and the title:

* 0.0.340: ``✓`` success, ``✗`` failure; detail lines indented by three
  spaces (``$ command``, ``↪ N lines...``, the failure log); ``●`` marks
  messages and notices there, never a tool.
* 0.0.423: ``●`` success, ``✗`` failure; detail lines indented by two spaces,
  a collapsed result as ``└ ...``; assistant messages and notices are also
  ``●`` blocks, so a ``●`` line is a tool only with a ``└``/``│`` sub-item.
* 1.0.102: ``●`` success, ``/`` success of a search tool, ``✗`` failure or
  denial (``!`` rejection and ``○`` in-progress never reach ``-p`` output);
  sub-items framed ``  │ `` (an item), ``  └ `` (the last item) and four
  spaces (further lines of the last item); assistant text has no marker.

The framing (indentation, connectors, the round box of 0.0.x) is removed; the
rest of each line is kept as printed.  The usage footer goes to stderr:
``Total usage est:`` ... ``Usage by model:`` (0.0.340), ``Total usage est:``
... ``Breakdown by AI model:`` (0.0.423), or ``Changes``/``Requests``/
``Duration``/``AI Credits``/``Tokens``/``Resume`` (1.0.102).  Its lines are kept
verbatim in ``session.result.usageReport``; only token counts printed as exact
integers become ``usage`` (the CLI rounds 1000 and more to ``1.2k``/``3.4m``);
a single model row gives ``model``.  ``Model:``/``Input tokens:``/``Output
tokens:`` lines are an earlier reading of this adapter that no examined version
prints; they are still read.
"""

from __future__ import annotations

import re
from itertools import accumulate
from dataclasses import dataclass
from typing import Any, Callable

from bitexact.sessions.convert import LegacyConverter, is_native_event, make_event
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import SHAPE_ERRORS, Session
from bitexact.sessions.parsers.openai_chat import ChatResponseMapper
from bitexact.sessions.parsers.openai_responses import ResponsesMapper, is_responses_payload
from bitexact.sessions.records import KIND_OBJECT, ValueReader, decode_json, decode_located, frame
from bitexact.sessions.streaming import reconcile_native_deltas

ENGINE = "copilot"

DEBUG_DATA = "[DEBUG] data:"
_DEBUG_PREFIX = re.compile(r"^\S*\s*\[DEBUG\] ?")
_DEBUG_DATA_LINE = re.compile(r"^\S*\s*\[DEBUG\] data:")
"""A debug block's first line: the marker as the line's own framing (a timestamp, then it), never a quote of
it inside a record's string values (a tool result quoting a debug log)."""
_TOOL_LINE = re.compile(r"^([✓✗●/]) (\S.*)$")
# Only finished calls are printed, so the marker is the outcome the CLI rendered.
_MARKER_SUCCESS = {"✓": True, "●": True, "/": True, "✗": False}
# 1.0.x sub-item framing ("  │ " an item, "  └ " the last item); 0.0.423 uses "  └ " too.
_ITEM_LINE = re.compile(r"^  ([│└])(?: |$)")
# A document in the 1.0.x layout: there "●" marks tool calls and notices, not messages.
_CURRENT_LAYOUT = re.compile(r"^[●✗/] \S.*\r?\n  │|^Resume {5}copilot --resume=", re.MULTILINE)
_EARLY_LAYOUT = re.compile(r"^✓ \S", re.MULTILINE)
_BOX_TOP = re.compile(r"^╭─*╮$")
_BOX_SIDE = re.compile(r"^│ (.*)│$")
_BOX_BOTTOM = re.compile(r"^╰─*╯$")
# Usage footers (stderr), see the module docstring.
_EARLY_FOOTER_HEAD = re.compile(r"^Total usage est: +\S")
_EARLY_FOOTER_LINE = re.compile(
    r"^(?:(?:Total usage est|Total duration \(API\)|Total duration \(wall\)|API time spent|Total session time"
    r"|Total code changes): +\S|(?:Usage by model|Breakdown by AI model):$)"
)
_MODEL_ROW_0340 = re.compile(r"^ {4}(\S+) +(\S+) input, (\S+) output, (\S+) cache read, \S+ cache write \(Est\. .*\)$")
_MODEL_ROW_0423 = re.compile(r"^ (\S.*?) *(\S+) in, (\S+) out, (\S+) cached \(Est\. .*\)$")
_CURRENT_FOOTER_HEAD = re.compile(r"^Changes {4}\+\d+ -\d+$")
_CURRENT_FOOTER_LINE = re.compile(r"^(?:Requests {3}|Duration {3}|AI Credits |Tokens {5}|Resume {5})\S")
_CURRENT_TOKENS = re.compile(r"^Tokens {5}↑ (\S+)(?: \((?:(\S+) cached)?(?:, )?(?:\S+ written)?\))? • ↓ (\S+)$")
_EXACT_COUNT = re.compile(r"\d+")
_TURNS = re.compile(r"^\s*Turns:\s*(\d+)\s*$")
# "Model: " is framing; the reported name after it is payload and is not trimmed (7.2).
_MODEL = re.compile(r"^\s*Model: (.*\S.*)$")
_TOKENS = re.compile(r"^\s*(Input|Output) tokens:\s*([\d,]+)\s*$")


def is_cli_output(text: str) -> bool:
    """True when ``text`` shows the Copilot CLI's own prompt-mode layout (for detection).

    The 1.0.x layout (a finished-call marker followed by its ``  │`` sub-items,
    or the ``Resume     copilot --resume=`` footer row), or a marker line with
    one of the usage footers the CLI writes (``Total usage est:``, 1.0.x's
    ``Changes    +N -M``). A marker glyph alone is not enough: prose uses them
    too. ``Turns:`` with a marker line is kept for the layout 7.2 names.
    """
    if _current_layout(text):
        return True
    if not _PRETTY_MARKER.search(text):
        return False
    return bool(_FOOTER_ANYWHERE.search(text) or _TURNS_ANYWHERE.search(text))


def _current_layout(text: str) -> bool:
    """``_CURRENT_LAYOUT`` anywhere in ``text``; substring checks first, as a native log of many MB has neither."""
    return ("  │" in text or "Resume     copilot" in text) and _CURRENT_LAYOUT.search(text) is not None


_PRETTY_MARKER = re.compile(r"^[✓✗●] \S", re.MULTILINE)
_FOOTER_ANYWHERE = re.compile(r"^(?:Total usage est: +\S|Changes {4}\+\d+ -\d+$)", re.MULTILINE)
_TURNS_ANYWHERE = re.compile(r"^\s*Turns:\s*\d+\s*$", re.MULTILINE)


class _JsonExtent:
    """Finds where the first JSON value of text fed in pieces ends (string-aware brace counting).

    Incremental, so a long block costs one pass, not one pass per added line.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = self.escaped = self.started = False
        self.length = 0

    def feed(self, text: str) -> int | None:
        """Scan ``text`` (appended to what was fed before): the end offset in the whole text, or None."""
        for index, char in enumerate(text):
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
                continue
            if char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
                self.started = True
            elif char in "}]":
                self.depth -= 1
                if self.started and self.depth == 0:
                    return self.length + index + 1
        self.length += len(text)
        return None


class CopilotParser:
    def __init__(self) -> None:
        self.session = Session(ENGINE)
        self.legacy = LegacyConverter(ENGINE)
        self.chat = ChatResponseMapper(self.session, ENGINE)
        # Both APIs feed one accounting: distinct responses of either kind add once.
        self.responses = ResponsesMapper(self.session, self.chat.accumulator)
        self.footer: dict[str, Any] = {}
        self.footer_usage: dict[str, int] = {}
        self.pretty_records = 0
        self.report: UsageReport | None = None
        self.early_layout = False
        self.current_layout = False
        self.line_starts: list[int] | None = None  # where each line starts in the text, once an array asks
        self.values: ValueReader | None = None  # the log's arrays, each stretch followed once, once one asks

    # -- native -----------------------------------------------------------
    def native(self, record: dict[str, Any]) -> None:
        self.session.emit(dict(record))

    # -- debug blocks -----------------------------------------------------
    def debug_block(self, lines: list[str], start: int) -> int:
        """Collect a framed debug JSON block; returns the index of the next unread line.

        The CLI writes the block as one log message per ``logger.debug`` call, ``<timestamp> [DEBUG] `` before
        its first line only (``data:``, then ``JSON.stringify(data, null, 2)``): the lines after a prefixed
        line may be unprefixed continuation lines. Prefixed continuation lines are read too.
        """
        first = lines[start]
        extent = _JsonExtent()
        body = [first.split(DEBUG_DATA, 1)[1].lstrip(" ")]
        end = extent.feed(body[0])
        index = start + 1
        unprefixed: int | None = None  # the first unprefixed continuation line: where to resume if the block fails
        while end is None:
            if index >= len(lines):
                return self._truncated_block(start, index, unprefixed)
            line = lines[index]
            prefixed = _DEBUG_PREFIX.match(line) is not None
            # A new block, or a prefixed line after unprefixed continuation (the next log message), ends it.
            if _DEBUG_DATA_LINE.match(line) or (prefixed and unprefixed is not None):
                return self._truncated_block(start, index, unprefixed)
            if prefixed:
                line = _DEBUG_PREFIX.sub("", line, count=1)
            elif unprefixed is None:
                unprefixed = index
            body.append(line)
            end = extent.feed("\n" + line)
            index += 1
        joined = "\n".join(body)
        try:
            value = decode_json(joined[:end])
        except (ValueError, RecursionError):
            self.session.diagnostics.add(f"line {start + 1}: malformed debug response block skipped")
            # Unprefixed lines taken into a block that is not JSON (one cut off mid-write) are read on their own.
            return unprefixed if unprefixed is not None else index
        try:
            if isinstance(value, dict) and isinstance(value.get("choices"), list):
                self.chat.response(value, {})
                self.session.recognized += 1
                return index
            if is_responses_payload(value):
                self.responses.payload(value)
                self.session.recognized += 1
                return index
        except SHAPE_ERRORS as exc:  # valid JSON of an unexpected shape: skipped, never fatal to the parse
            self.session.diagnostics.add(f"line {start + 1}: debug response block of an unexpected shape skipped"
                                         f" ({type(exc).__name__})")
            return index
        self.session.diagnostics.add(f"line {start + 1}: debug data block is neither a chat completion nor a Responses API payload; skipped")
        return index

    def _truncated_block(self, start: int, index: int, unprefixed: int | None) -> int:
        """Report a block that never closed; resume at its first unprefixed line (a record after a block cut
        off mid-write is read on its own, T-UAS-016), else at ``index``."""
        self.session.diagnostics.add(f"line {start + 1}: truncated debug response block skipped")
        return unprefixed if unprefixed is not None else index

    # -- pretty print -----------------------------------------------------
    def tool_line(self, lines: list[str], start: int, marker: str, title: str) -> int | None:
        """Map one printed tool block; the next unread index, or None when the line is no tool."""
        following = _clean(lines[start + 1]) if start + 1 < len(lines) else ""
        has_items = _ITEM_LINE.match(following) is not None
        output, after = _continuation(lines, start + 1, self.early_layout)
        if marker == "/" and not has_items:
            return None  # "/ " opens ordinary text as often as a search record
        if marker == "●" and not (has_items or self.current_layout):
            # 0.0.x prints assistant messages and notices as "●" blocks too; skip the block unmapped.
            note = "'●' block without tool sub-items not read as a tool call"
            self.session.diagnostics.add(f"line {start + 1}: {note}")
            return after
        self.session.emit(make_event("tool.execution_start", {"toolName": title}))
        data: dict[str, Any] = {"toolName": title, "success": _MARKER_SUCCESS[marker]}
        if output:
            data["output"] = "\n".join(output)
        self.session.emit(make_event("tool.execution_complete", data))
        self.session.recognized += 1
        self.pretty_records += 1
        return after

    def usage_footer(self, lines: list[str], start: int) -> int | None:
        """Read a usage footer block opening at ``start``; the next unread index, or None."""
        report = _read_footer(lines, start)
        if report is None:
            return None
        self.report = report  # a later footer is a newer snapshot of the same totals
        self.session.recognized += 1
        return start + len(report.lines)

    def footer_line(self, line: str) -> bool:
        if match := _TURNS.match(line):
            self.footer["numTurns"] = int(match.group(1))
        elif match := _MODEL.match(line):
            self.footer["model"] = match.group(1)
        elif match := _TOKENS.match(line):
            field = "input_tokens" if match.group(1) == "Input" else "output_tokens"
            self.footer_usage[field] = int(match.group(2).replace(",", ""))
        else:
            return False
        return True

    # -- driver -----------------------------------------------------------
    def run(self, text: str) -> ParseResult:
        session = self.session
        if text.lstrip().startswith("["):
            items = frame(text)
            if items and items[0].in_array:
                for item in items:
                    if item.kind == KIND_OBJECT:
                        self.record(item.value)
                    else:
                        session.diagnostics.skipped(item)
                return self.finish(text)
        lines = text.split("\n")
        self.early_layout = "✓ " in text and _EARLY_LAYOUT.search(text) is not None
        self.current_layout = _current_layout(text)
        index = 0
        while index < len(lines):
            line = lines[index]
            if _DEBUG_DATA_LINE.match(line):
                index = self.debug_block(lines, index)
                continue
            located = line.strip()
            if located.startswith("{"):
                try:
                    value = decode_located(located)
                except (ValueError, RecursionError):
                    session.diagnostics.add(f"line {index + 1}: malformed or truncated JSON record skipped")
                else:
                    if isinstance(value, dict):
                        self.record(value, index + 1)
                    else:
                        session.diagnostics.add(f"line {index + 1}: non-object JSON entry skipped")
                index += 1
                continue
            if located.startswith("[") and (located == "[" or located[1:].lstrip().startswith("{")):
                resumed = self.embedded_array(text, lines, index)
                if resumed is not None:
                    index = resumed
                    continue
            resumed = self.pretty_line(lines, index)
            if resumed is not None:
                index = resumed
                continue
            self.footer_line(_clean(line))
            index += 1
        return self.finish(text)

    def pretty_line(self, lines: list[str], index: int) -> int | None:
        """A printed tool block or usage footer at ``index``: the next unread index, or None."""
        line = _clean(lines[index])
        match = _TOOL_LINE.match(line)
        if match:
            return self.tool_line(lines, index, match.group(1), match.group(2))
        if _EARLY_FOOTER_HEAD.match(line) or _CURRENT_FOOTER_HEAD.match(line):
            return self.usage_footer(lines, index)
        return None

    def embedded_array(self, text: str, lines: list[str], index: int) -> int | None:
        """Decode a JSON array opening on line ``index``; the next line index, or None."""
        if self.line_starts is None:  # summed once: per array, a log of many arrays took quadratic time
            self.line_starts = [0, *accumulate(len(line) + 1 for line in lines)]
        values = self.values
        if values is None:
            values = self.values = ValueReader(text)
        offset = self.line_starts[index]
        line = lines[index]
        start = offset + len(line) - len(line.lstrip())
        try:
            value, end = values.decode_at(start)
        except ValueError:  # a deep one included (the reader counts it)
            return None
        if not isinstance(value, list):
            return None
        for element in value:
            if isinstance(element, dict):
                self.record(element, index + 1)
            else:
                self.session.diagnostics.add(f"line {index + 1}: non-object JSON entry skipped")
        while index < len(lines) and offset <= end:
            offset += len(lines[index]) + 1
            index += 1
        return index

    def record(self, record: dict[str, Any], line: int | None = None) -> None:
        session = self.session
        try:
            if is_native_event(record):
                self.native(record)
            elif LegacyConverter.recognizes(record):
                session.emit(*self.legacy.convert(record))
            else:
                session.diagnostics.add(f"{_where(line)}: unrecognized record skipped")
                return
        except SHAPE_ERRORS as exc:  # valid JSON of an unexpected shape: skipped, never fatal to the parse
            session.diagnostics.add(f"{_where(line)}: record of an unexpected shape skipped ({type(exc).__name__})")
            return
        session.recognized += 1

    def finish(self, text: str) -> ParseResult:
        session = self.session
        self.chat.finish()
        session.emit(*self.legacy.finish())
        events = reconcile_native_deltas(session.events)
        events = _task_complete_summaries(events)
        events = _shutdown_metrics(events)
        session.events = events
        if "numTurns" not in self.footer and not self.pretty_records:
            # A lone "Model:"/token line is not a recognized CLI layout.
            self.footer.clear()
            self.footer_usage.clear()
        elif self.footer or self.footer_usage:
            session.recognized += 1
        result: dict[str, Any] = {}
        usage = self.chat.usage()
        if self.footer_usage:
            usage = {**usage, **self.footer_usage}
        if self.report is not None and self.report.usage:
            usage = {**usage, **self.report.usage}
        if self.footer.get("numTurns") is not None:
            result["numTurns"] = self.footer["numTurns"]
        if usage:
            result["usage"] = usage
        if "model" in self.footer:
            result["model"] = self.footer["model"]
        if self.report is not None:
            if self.report.model is not None:
                result["model"] = self.report.model
            result["usageReport"] = list(self.report.lines)
        errors = [*self.chat.errors, *self.responses.errors]
        if errors:
            result["errors"] = errors
        if result:
            session.emit(make_event("session.result", result))
        return session.result(text)


def _clean(line: str) -> str:
    """A source line without the carriage return of a CRLF line ending."""
    return line[:-1] if line.endswith("\r") else line


_Payload = Callable[[str, str], tuple[str, str] | None]
"""Reads one framed line in a state: (text without framing, next state), or None at the block's end."""


def _continuation(lines: list[str], start: int, early_document: bool) -> tuple[list[str], int]:
    """The framed lines under a tool line with the framing removed, and the index after them.

    The first framed line tells the layout: three spaces then text is 0.0.340's
    indentation, two spaces (or a sub-item connector) the later layouts'.  A
    deeper first line is ambiguous and follows the document (``early_document``
    when it has 0.0.340's ``✓`` records).
    """
    if start >= len(lines):
        return [], start
    first = _clean(lines[start])
    if _ITEM_LINE.match(first) or (first.startswith("  ") and first[2:3] not in ("", " ")):
        return _framed(lines, start, _late_payload)
    if first.startswith("   ") and (first[3:4] != " " or early_document):
        return _framed(lines, start, _early_payload)
    if first.startswith("    "):
        return _framed(lines, start, _late_payload)
    return [], start


def _framed(lines: list[str], start: int, payload: _Payload) -> tuple[list[str], int]:
    """Collect framed lines with ``payload(line, state)``; blank lines stay when framing resumes after them."""
    out: list[str] = []
    state = "plain"
    index = start
    while index < len(lines):
        taken = payload(_clean(lines[index]), state)
        if taken is None:
            after = index
            while after < len(lines) and _clean(lines[after]) == "":
                after += 1
            # The CLI prints a blank payload line as an empty line; the block goes on
            # only if the framing continues after it (blocks end with a blank line).
            resumes = after < len(lines) and state != "items" and payload(_clean(lines[after]), state) is not None
            if after == index or not resumes:
                break
            out.extend([""] * (after - index))
            index = after
            continue
        text, state = taken
        out.append(text)
        index += 1
    return _unbox(out), index


def _late_payload(line: str, state: str) -> tuple[str, str] | None:
    """0.0.423/1.0.x framing: "  │ "/"  └ " connectors, four spaces after "└", else two spaces."""
    connector = _ITEM_LINE.match(line)
    if connector and state != "last":
        return line[4:], "last" if connector.group(1) == "└" else "items"
    if state == "last":
        return (line[4:], state) if line.startswith("    ") else None
    if state == "plain" and line.startswith("  "):
        return line[2:], state
    return None


def _early_payload(line: str, state: str) -> tuple[str, str] | None:
    """0.0.340 framing: three spaces (the entry's padding and the detail indent)."""
    return (line[3:], state) if line.startswith("   ") else None


def _unbox(lines: list[str]) -> list[str]:
    """Replace 0.0.x round boxes by their text; the box's fill up to the right edge is framing."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        if _BOX_TOP.match(lines[index]):
            inner: list[str] = []
            end = index + 1
            while end < len(lines) and (side := _BOX_SIDE.match(lines[end])):
                inner.append(side.group(1).rstrip(" "))
                end += 1
            if inner and end < len(lines) and _BOX_BOTTOM.match(lines[end]):
                out.extend(inner)
                index = end + 1
                continue
        out.append(lines[index])
        index += 1
    return out


@dataclass(frozen=True)
class UsageReport:
    """A usage footer as printed (``lines``) and what it states exactly."""

    lines: tuple[str, ...]
    usage: dict[str, Any]
    model: str | None


def _read_footer(lines: list[str], start: int) -> UsageReport | None:
    """The usage footer opening at ``start`` (either generation), or None when there is none."""
    head = _clean(lines[start])
    block = [head]
    index = start + 1
    if _CURRENT_FOOTER_HEAD.match(head):
        # 1.0.x: labelled rows (plan/limit rows may sit between) up to "Resume", or a blank line.
        while index < len(lines) and _clean(lines[index]) != "" and not block[-1].startswith("Resume "):
            block.append(_clean(lines[index]))
            index += 1
        if not any(_CURRENT_FOOTER_LINE.match(line) for line in block[1:]):
            return None
        return UsageReport(tuple(block), _current_footer_usage(block), None)
    rows: list[tuple[str, list[str]]] = []
    early_rows = in_rows = False
    while index < len(lines):
        line = _clean(lines[index])
        row = (_MODEL_ROW_0340.match(line) or _MODEL_ROW_0423.match(line)) if in_rows else None
        if row is not None:
            early_rows = row.re is _MODEL_ROW_0340
            rows.append((row.group(1), [row.group(2), row.group(3), row.group(4)]))
        elif _EARLY_FOOTER_LINE.match(line):
            in_rows = line in ("Usage by model:", "Breakdown by AI model:")  # model rows follow this line
        else:
            break
        block.append(line)
        index += 1
    if len(block) < 2:
        return None
    usage = _rows_usage([counts for _, counts in rows])
    if early_rows and "input_tokens" in usage:
        # 0.0.340 adds each response's prompt_tokens, of which cached_tokens are a part.
        usage["input_tokens_include_cache"] = True
    model = rows[0][0] if len(rows) == 1 else None
    return UsageReport(tuple(block), usage, model)


def _exact(text: str | None) -> int | None:
    """A count printed as an exact integer; rounded ``1.2k``/``3.4m`` values are not counts."""
    return int(text) if text is not None and _EXACT_COUNT.fullmatch(text) else None


def _rows_usage(rows: list[list[str]]) -> dict[str, Any]:
    """Per-model input/output/cache-read counts summed, a field only when every row prints it exactly."""
    usage: dict[str, Any] = {}
    for position, field in enumerate(("input_tokens", "output_tokens", "cache_read_input_tokens")):
        values = [_exact(counts[position]) for counts in rows]
        if values and all(value is not None for value in values):
            usage[field] = sum(value for value in values if value is not None)
    return usage


def _current_footer_usage(block: list[str]) -> dict[str, Any]:
    """1.0.x ``Tokens`` row: "↑ input (cached ...) • ↓ output"; exact values only."""
    usage: dict[str, Any] = {}
    for line in block:
        tokens = _CURRENT_TOKENS.match(line)
        if tokens is None:
            continue
        for field, text in (("input_tokens", tokens.group(1)), ("cache_read_input_tokens", tokens.group(2)),
                            ("output_tokens", tokens.group(3))):
            value = _exact(text)
            if value is not None:
                usage[field] = value
    return usage


def _task_complete_summaries(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Expose a textual task-complete summary as an answer, once (7.2)."""
    out: list[dict[str, Any]] = []
    last_answer: Any = None
    for index, event in enumerate(events):
        out.append(event)
        kind = event.get("type")
        raw_data = event.get("data")
        data = raw_data if isinstance(raw_data, dict) else {}
        if kind == "assistant.message":
            last_answer = data.get("content")
        if kind == "session.task_complete" and isinstance(data.get("summary"), str):
            summary = data["summary"]
            following = events[index + 1] if index + 1 < len(events) else None
            already_next = (
                following is not None
                and following.get("type") == "assistant.message"
                and isinstance(following.get("data"), dict)
                and following["data"].get("content") == summary
            )
            if summary != last_answer and not already_next:
                out.append({"type": "assistant.message", "data": {"content": summary, "sourceType": "session.task_complete"}})
                last_answer = summary
    return out


def _shutdown_metrics(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``session.shutdown.data.agentMetrics`` as a session.result snapshot (7.2)."""
    out: list[dict[str, Any]] = []
    for index, event in enumerate(events):
        out.append(event)
        data = event.get("data")
        if event.get("type") != "session.shutdown" or not isinstance(data, dict) or "agentMetrics" not in data:
            continue
        later_result = any(e.get("type") == "session.result" for e in events[index + 1:])
        if not later_result:
            out.append({"type": "session.result", "data": {"agentMetrics": data["agentMetrics"], "sourceType": "session.shutdown"}})
    return out


def parse(text: str) -> ParseResult:
    """Parse a Copilot events.jsonl, legacy, debug or pretty-print log."""
    return CopilotParser().run(text)


def _where(line: int | None) -> str:
    """A record's position for a diagnostic (written only when one is: most records are used)."""
    return f"line {line}" if line is not None else "record"
