"""Pydantic AI sample adapter (UAS 7.6 named plaintext sample; 9.4 Pydantic AI row).

The spec gives no layout (its audit sessions were archived before a
completed handoff), so this one was learned from clai / pydantic-ai-slim
2.62.0: the CLI's source and its output captured from a pipe for one-shot
``clai [-a AGENT] [-m MODEL] [--no-stream] PROMPT`` runs against a local
OpenAI-compatible stub.  Two forms:

* native canonical events: when the output holds any, they are the trace,
  kept exactly, and the console text around them is left alone (7.6: a
  canonical-producing adapter owns its mixed stdout);
* the console layout, recognised only after one of Pydantic AI's own
  identifying blocks:

  - the clai header ``clai - Pydantic AI CLI v<version> with <model>`` (or
    ``using custom agent <agent>[ with <model>]``), which clai prints on a
    pipe.  What follows it is clai's rich-markdown rendering of the answer;
  - the library's start-up banner (``pydantic-ai v<version> • Python ...``
    beside a kite logo, then ``model: ... • tools: N ...``), printed instead
    of the header, or on stderr by any agent run, when a coding agent is
    detected in the environment.  Only initialization is read from it: text
    after it may be any program's output, so none is claimed.

Console mappings (header form):

* header -> one ``session.init`` (``sourceEngine: "pydantic-ai"``,
  ``version``, ``model`` when printed, ``agent`` for ``-a``); banner ->
  ``session.init`` with ``version``, ``model``, ``agent``, ``outputType``,
  ``toolCount``, ``capabilityCount`` as printed;
* the rendered answer as printed (rich pads lines to 80 columns and drops
  markdown syntax) -> ``assistant.message``; streamed runs show tool calls
  between answer pieces, each piece being a separate model response;
* ``▌ Called tool NAME.`` -> tool start + completion without outcome (a tool
  that asked the model to retry prints the same line); ``▌ Calling tool
  NAME…`` (still pending when the run stopped) -> tool start only;
* a Python traceback (clai does not catch run errors in one-shot mode) ->
  ``session.error`` with the final exception, also listed in one derived
  status-less ``session.result.errors``; text directly before it (an
  interrupted response) is not claimed; Python warnings are omitted.

Nothing else is invented: clai prints no usage, turn count, call ids, tool
arguments or results, and a normal exit says nothing in the text.
"""

from __future__ import annotations

import re
from typing import Any

from bitexact.sessions.convert import make_event
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, UnclaimedLines, parse_console_log

ENGINE = "pydantic-ai"

# -- clai header ----------------------------------------------------------------
_HEADER = re.compile(
    r"^\S+ - Pydantic AI CLI v(\d+\.\d+\.\d+\S*) (?:with (\S+)|using custom agent (\S+)(?: with (\S+))?)$"
)
_HEADER_START = re.compile(r"^\S+ - Pydantic AI CLI v\d+\.\d+\.\d+\S* (?:with|using)(?: |$)")
_CONSOLE_WIDTH = 80

# -- library banner -------------------------------------------------------------
_LOGO_ROWS = ("      / \\", "     /   \\", "   /___.___\\", "  /    |    \\", "/      |      \\", "`---.._|_..---'")
_TEXT_COLUMN = 17  # logo width 15 + gutter 2
_BANNER_VERSION = re.compile(r"^pydantic-ai v(\d+\.\d+\.\d+\S*)(?: • pydantic-ai-harness v\S+)? • Python \d+\.\d+\S*$")
_BANNER_INFO = re.compile(r"^(?:agent|model): ")
_BANNER_LABELS = {"agent": "agent", "model": "model", "output": "outputType", "tools": "toolCount",
                  "capabilities": "capabilityCount"}
_BANNER_END = "PYDANTIC_AI_NO_BANNER=1"

# -- conversation ---------------------------------------------------------------
_CALLED = re.compile(r"^▌ Called tool (\S+)\.\s*$")
_CALLING = re.compile(r"^▌ Calling tool (\S+)…\s*$")
_TRACEBACK = "Traceback (most recent call last):"
_CHAIN_MARKERS = frozenset({
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
})
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?:: (.*))?$")
_HTTP_ERROR = re.compile(r"^status_code: (\d+), model_name: (.*?), body: ")
_WARNING = re.compile(r"^\S.*:\d+: [A-Za-z_][\w.]*Warning: ")


def _text_column(line: str) -> str:
    """The banner text of ``line``: what stands right of the logo column, or the line itself."""
    for row in ("", *_LOGO_ROWS):
        if line.startswith(row.ljust(_TEXT_COLUMN)):
            return line[_TEXT_COLUMN:]
        if line == row and row:
            return ""
    return line


def _banner_at(lines: list[str], index: int) -> re.Match[str] | None:
    """The banner's version-line match at ``index`` when an info line follows within two lines."""
    match = _BANNER_VERSION.match(_text_column(lines[index]))
    if match is None:
        return None
    following = lines[index + 1:index + 3]
    return match if any(_BANNER_INFO.match(_text_column(line)) for line in following) else None


def _header_at(lines: list[str], index: int) -> tuple[int, re.Match[str] | None]:
    """The clai header starting at ``index``: (physical lines, match), or (0, None).

    Rich wraps the header at 80 columns on a pipe, keeping the space at the
    break (or dropping it on a full line) and folding a word longer than a line.
    """
    if "Pydantic AI CLI v" not in lines[index] or not _HEADER_START.match(lines[index]):
        return 0, None
    joined = [lines[index]]
    while len(joined) < 4 and index + len(joined) < len(lines):
        last, following = joined[-1], lines[index + len(joined)]
        if not following.strip() or not (last.endswith(" ") or len(last) == _CONSOLE_WIDTH):
            break
        joined.append(following)
    for count in range(len(joined), 0, -1):
        text = joined[0]
        for part, previous in zip(joined[1:count], joined[:count - 1]):
            glue = " " if not previous.endswith(" ") and part.startswith("with ") else ""
            text += glue + part
        if match := _HEADER.fullmatch(text):
            return count, match
    return 0, None


def is_pydantic_ai_output(text: str) -> bool:
    """True when ``text`` holds the clai header or the Pydantic AI start-up banner."""
    if "Pydantic AI CLI v" not in text and "pydantic-ai v" not in text:
        return False
    lines = [line.rstrip("\r") for line in text.split("\n")]
    for index, line in enumerate(lines):
        if "Pydantic AI CLI v" in line and _header_at(lines, index)[1] is not None:
            return True
        if "pydantic-ai v" in line and _banner_at(lines, index) is not None:
            return True
    return False


class PydanticAITextMapper:
    """Maps Pydantic AI's console layout, line by line, into ``session``."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.mode: str | None = None  # "header" (clai answer follows) or "banner" (nothing claimed)
        self.pending: list[tuple[int, str]] = []
        self.errors: list[dict[str, Any]] = []
        self.omitted_before = 0
        self.warnings = 0
        self.unclaimed = UnclaimedLines("Pydantic AI")

    # -- driver ----------------------------------------------------------------
    def run(self, lines: list[str]) -> None:
        """Map ``lines`` (the log split at newlines, a carriage return before each newline removed)."""
        index = 0
        while index < len(lines):
            index = self.line(lines, index)
        self.flush(claim=self.mode == "header")
        if self.errors:
            self.session.emit(make_event("session.result", {"errors": self.errors}))
        self.report()

    def line(self, lines: list[str], index: int) -> int:
        line = lines[index]
        count, header = _header_at(lines, index)
        if header is not None:
            self.flush(claim=self.mode == "header")
            self.init_from_header(header)
            return index + count
        if "pydantic-ai v" in line and _banner_at(lines, index) is not None:
            self.flush(claim=self.mode == "header")
            return self.banner(lines, index)
        if self.mode is None:
            if line.strip():
                self.omitted_before += 1
            return index + 1
        if line.endswith(_TRACEBACK):
            # A streamed answer ends without a newline, so the traceback can
            # start on its last line: that part is still rendered output.
            if line != _TRACEBACK:
                self.content(index, line[: -len(_TRACEBACK)])
            # Text right before a traceback may be a response cut off mid-stream.
            self.flush(claim=False)
            return self.traceback(lines, index)
        if "Warning: " in line and _WARNING.match(line):
            self.warnings += 1
            following = lines[index + 1] if index + 1 < len(lines) else ""
            return index + (2 if following.startswith("  ") else 1)
        self.content(index, line)
        return index + 1

    def content(self, index: int, line: str) -> None:
        """A rendered line after the header: a tool indicator, or pending answer text."""
        if self.mode == "header" and line.startswith("▌ ") and (match := _CALLED.match(line) or _CALLING.match(line)):
            self.flush(claim=True)
            self.tool(match.group(1), completed=match.re is _CALLED)
        else:
            self.pending.append((index + 1, line))

    # -- initialization -------------------------------------------------------------
    def init_from_header(self, match: re.Match[str]) -> None:
        data: dict[str, Any] = {"sourceEngine": ENGINE, "version": match.group(1)}
        model = match.group(2) or match.group(4)
        if model:
            data["model"] = model
        if match.group(3):
            data["agent"] = match.group(3)
        self.start("header", data)

    def banner(self, lines: list[str], index: int) -> int:
        """The start-up banner from its version line: one ``session.init``; returns the index after it."""
        version = _BANNER_VERSION.match(_text_column(lines[index]))
        assert version is not None  # checked by _banner_at
        data: dict[str, Any] = {"sourceEngine": ENGINE, "version": version.group(1)}
        probe = index + 1
        if probe < len(lines) and not _text_column(lines[probe]).strip():
            probe += 1
        info: list[str] = []
        while probe < len(lines):
            text = _text_column(lines[probe])
            if not (_BANNER_INFO.match(text) if not info else text.startswith("  ") and text.strip()):
                break
            info.append(text.strip())
            probe += 1
        for item in " • ".join(info).split(" • "):
            label, _, value = item.partition(": ")
            if label in _BANNER_LABELS and value:
                key = _BANNER_LABELS[label]
                data[key] = int(value) if key.endswith("Count") and value.isdecimal() else value
        self.start("banner", data)
        # The banner runs to its hide line; with observability on it has none
        # and ends with the logo rows left beside the details.
        for end in range(probe, min(probe + 16, len(lines))):
            if _text_column(lines[end]).rstrip().endswith(_BANNER_END):
                return end + 1
        while probe < len(lines) and lines[probe].strip() and not _text_column(lines[probe]).strip():
            probe += 1
        return probe

    def start(self, mode: str, data: dict[str, Any]) -> None:
        self.mode = mode
        self.session.emit(make_event("session.init", data))
        self.session.recognized += 1

    # -- conversation -----------------------------------------------------------------
    def tool(self, name: str, *, completed: bool) -> None:
        start = make_event("tool.execution_start", {"toolName": name})
        if completed:
            self.session.emit(start, make_event("tool.execution_complete", {"toolName": name}))
        else:
            self.session.emit(start)
        self.session.recognized += 1

    def traceback(self, lines: list[str], index: int) -> int:
        """A printed Python traceback (with its chained ones): one ``session.error``."""
        chain: list[dict[str, Any]] = []
        while True:
            index += 1
            while index < len(lines) and lines[index].startswith(" "):
                index += 1  # frames and source lines
            exception = _EXCEPTION.match(lines[index]) if index < len(lines) else None
            if exception is None:
                break
            message = [exception.group(2) or ""]
            index += 1
            while index < len(lines) and lines[index].strip() and lines[index] not in _CHAIN_MARKERS \
                    and lines[index] != _TRACEBACK:
                message.append(lines[index])
                index += 1
            chain.append({"errorType": exception.group(1), "message": "\n".join(message)})
            probe = index
            while probe < len(lines) and not lines[probe].strip():
                probe += 1
            if probe >= len(lines) or lines[probe] not in _CHAIN_MARKERS:
                break
            probe += 1
            while probe < len(lines) and not lines[probe].strip():
                probe += 1
            if probe >= len(lines) or lines[probe] != _TRACEBACK:
                break
            index = probe
        if chain:
            data: dict[str, Any] = {"message": chain[-1]["message"], "errorType": chain[-1]["errorType"]}
            if http := _HTTP_ERROR.match(data["message"]):
                data["statusCode"], data["modelName"] = int(http.group(1)), http.group(2)
            if len(chain) > 1:
                data["chain"] = chain[:-1]
        else:
            data = {"message": _TRACEBACK + " (truncated: no exception line)"}
        self.session.emit(make_event("session.error", data))
        self.errors.append(dict(data))
        self.session.recognized += 1
        return index

    def flush(self, *, claim: bool) -> None:
        """The pending text: an answer as printed (blank framing lines dropped), or unattributed."""
        pending, self.pending = self.pending, []
        body = [line for _, line in pending]
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        if not body:
            return
        if claim:
            self.session.emit(make_event("assistant.message", {"content": "\n".join(body)}))
            self.session.recognized += 1
            return
        self.unclaimed.add(pending)

    def report(self) -> None:
        notes = self.session.diagnostics
        if self.omitted_before:
            notes.add(f"{self.omitted_before} line(s) before the Pydantic AI header or banner omitted")
        if self.warnings:
            notes.add(f"{self.warnings} Python warning(s) omitted")
        self.unclaimed.report(notes)


def parse(text: str) -> ParseResult:
    """Parse Pydantic AI output: native canonical events if present, else its console layout."""
    return parse_console_log(text, ENGINE, is_pydantic_ai_output, _run)


def _run(session: Session, lines: list[str]) -> None:
    PydanticAITextMapper(session).run(lines)
