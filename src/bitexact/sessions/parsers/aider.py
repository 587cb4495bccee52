"""Aider sample adapter (UAS 7.6 named plaintext sample; 9.4 Aider row).

Learned from aider-chat 0.86.2 (the version 9.4 pins): its source and its
stdout captured from a pipe for ``--message`` runs (``--no-pretty`` or not,
streaming or not) against a local OpenAI-compatible stub.  Two forms:

* native canonical events (modern traces): when the output holds any, they
  are the trace, kept exactly, and the surrounding console text is left
  alone (7.6: a canonical-producing adapter owns its mixed stdout);
* the console layout, recognised only after the startup block: an
  ``Aider v<version>`` banner line directly followed by the
  ``Main model: <name> with <format> edit format`` (or ``Model: ...``) line.

Console mappings:

* startup block (banner, model lines, ``Git repo:``, ``Repo-map:``,
  ``Added <file> to the chat.``, working-directory notices, release-notes
  link) -> one ``session.init`` (``sourceEngine: "aider"``, ``model``,
  ``version``, ``editFormat``, ...).  The banner is Aider's own observed
  initialization naming the model, so it is mapped; lines before it are
  startup diagnostics and are omitted;
* ``litellm.<Error>: ...`` blocks, with Aider's explanation line and a
  ``Retrying in N seconds...`` notice -> ``session.error`` (never an answer),
  also listed in one derived ``session.result.errors`` at the end (4.6: no
  status, no accounting); ``Empty response received from LLM...`` is a
  ``session.error`` warning;
* text closed by a ``Tokens: ... sent, ... received.`` report ->
  ``assistant.message`` with the text as printed; the report itself (rounded
  prose) -> ``session.info`` ``usage_report``, never accounting;
* ``Applied edit to <path>`` / ``Commit <hash> <message>`` and their failure
  lines -> tool start + completion, no call id, arguments or results.

Nothing else is invented: no terminal ``session.result`` (a normal exit says
nothing about success), no usage, no turn count.  Text Aider prints between
rounds (lint output, edit-error details before a reflected reply) cannot be
told apart from the next reply, so it is never claimed as an answer.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from bitexact.sessions.convert import make_event
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, UnclaimedLines, parse_console_log

ENGINE = "aider"

# -- startup block ------------------------------------------------------------
_BANNER = re.compile(r"^Aider v(\d+\.\d+\.\d+\S*)$")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+) with (\S+) edit format(?:, (.+))?$")
_EDITOR = re.compile(r"^Editor model: (\S+) with (\S+) edit format$")
_WEAK = re.compile(r"^Weak model: (\S+)$")
_GIT = re.compile(r"^Git repo: (.+)$")
_REPO_MAP = re.compile(r"^Repo-map: (.+)$")
_ADDED = re.compile(r"^Added (.+) to the chat( \(read-only\))?\.$")
_SIGNATURE = re.compile(
    r"^Aider v\d+\.\d+\.\d+\S*\r?\n(?:Main model|Model): \S+ with \S+ edit format", re.MULTILINE
)
# Startup notices that carry nothing the trace keeps.  Rich wraps console
# output at the terminal width (80 columns on a pipe), so the long ones are
# matched on one to three joined physical lines.
_STARTUP_NOTICES = tuple(
    re.compile(p)
    for p in (
        r"Restored previous conversation history\.",
        r"Multiline mode: .*",
        r"Warning: For large repos, consider using --subtree-only and \.aiderignore",
        r"See: https?://\S+",
        r"Warning: map-tokens > \d+ is not recommended\. Too much irrelevant code can confuse LLMs\.",
        r"Note: in-chat filenames are always relative to the git working dir, not the current working dir\.",
        r"Cur working dir: .*",
        r"Git working dir: .*",
        r"Cost estimates may be inaccurate when using streaming and caching\.",
        r"https://aider\.chat/HISTORY\.html#release-notes",
        r"Opening release notes: \S+",
    )
)

# -- conversation -------------------------------------------------------------
_ERROR = re.compile(r"^litellm\.([A-Z][A-Za-z]*(?:Error|Timeout)): ")
_RETRY = re.compile(r"^Retrying in (\d+(?:\.\d+)?) seconds\.\.\.$")
_URL_LINE = re.compile(r"^https?://\S+$")
# Aider's explanations printed after a provider error (aider/exceptions.py).
_DESCRIPTIONS = frozenset(
    {
        "The API provider is not able to authenticate you. Check your API key.",
        "The API provider's servers are down or overloaded.",
        "The API provider has refused the request due to a safety policy about the content.",
        "The API provider was unable to fetch one or more images.",
        "The API provider has rate limited you. Try again later or check your quotas.",
        "The API provider timed out without returning a response. They may be down or overloaded.",
        "You need to: pip install boto3",
        "OpenRouter or the upstream API provider is down, overloaded or rate limiting your requests.",
        "Insufficient credits with the API provider. Please add credits.",
    }
)
_TOKENS = re.compile(
    r"^Tokens: \S+ sent(?:, \S+ cache write)?(?:, \S+ cache hit)?, \S+ received\."
    r"(?: Cost: \$\S+ message, \$\S+ session\.)?$"
)
_COST = re.compile(r"^Cost: \$\S+ message, \$\S+ session\.$")
_APPLIED = re.compile(r"^Applied edit to (.+)$")
_DRY_RUN = re.compile(r"^Did not apply edit to (.+) \(--dry-run\)$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.+)$")
_COMMIT_FAILED = re.compile(r"^Unable to commit: (.*)$")
_EDIT_FORMAT = "The LLM did not conform to the edit format."
_EDIT_ERRORS_URL = re.compile(r"^https://aider\.chat/docs/troubleshooting/edit-errors\.html$")
_EMPTY_RESPONSE = "Empty response received from LLM. Check your provider account?"
_UNDO_HINT = "You can use /undo to undo and discard each aider commit."
_CONSOLE_WIDTH = 80
# Every conversation framing line starts with one of these or is one of those: anything else is
# reply text, and is kept without trying each framing pattern on it (most of a long log).
_FRAMING_START = re.compile(
    r"litellm\.|Tokens: |Applied edit to |Did not apply edit to |Commit |Unable to commit: |Aider v"
    r"|The LLM did not conform |Empty response received |You can use /undo "
)


def is_aider_output(text: str) -> bool:
    """True when ``text`` holds Aider's startup banner directly followed by its model line."""
    return _SIGNATURE.search(text) is not None


def _wrapped_match(lines: list[str], start: int, test: Callable[[str], object], most: int = 3) -> tuple[int, str]:
    """One console-wrapped line from ``start`` passing ``test``: (physical lines, joined text), or (0, "").

    Rich wraps at a space and either keeps it at the end of the line or, when
    the line is full, drops it, so both joins are tried.
    """
    for count in range(1, min(most, len(lines) - start) + 1):
        part = lines[start:start + count]
        if not part[-1].strip():
            break
        for candidate in ("".join(part), " ".join(part)):
            if test(candidate):
                return count, candidate
    return 0, ""


def _startup_notice(text: str) -> bool:
    return any(pattern.fullmatch(text) for pattern in _STARTUP_NOTICES)


def _continues(line: str, following: str) -> bool:
    """Whether ``following`` is the console-wrapped remainder of ``line`` (80-column greedy wrap)."""
    word = following.split(" ", 1)[0]
    return bool(following.strip()) and len(line.rstrip(" ")) + 1 + len(word) > _CONSOLE_WIDTH


class AiderTextMapper:
    """Maps Aider's console layout, line by line, into ``session``."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.pending: list[tuple[int, str]] = []
        # A reply is claimed only while awaiting one: from the startup block
        # (through any provider-error blocks) to the first report or tool
        # line.  Later text mixes Aider's own output (lint results, edit-error
        # details) with a reflected reply and is never claimed.
        self.awaiting_reply = False
        self.unclaimed = UnclaimedLines("Aider")
        self.omitted_before = 0
        self.errors: list[dict[str, Any]] = []

    # -- driver ----------------------------------------------------------------
    def run(self, lines: list[str]) -> None:
        """Map ``lines`` (the log split at newlines, a carriage return before each newline removed)."""
        index = 0
        started = False
        count = len(lines)
        framing_start = _FRAMING_START.match
        pending = self.pending
        while index < count:
            line = lines[index]
            if started and not framing_start(line):
                pending.append((index + 1, line))  # reply text, the bulk of a log: no call per line
                index += 1
                continue
            banner = _BANNER.match(line) if line.startswith("Aider v") else None
            model = _MODEL.match(lines[index + 1]) if banner and index + 1 < len(lines) else None
            if banner and model:
                self.flush_unattributed()
                index = self.startup(lines, index + 2, banner, model)
                started = True
                continue
            if not started:
                if line.strip():
                    self.omitted_before += 1
                index += 1
                continue
            index = self.conversation_line(lines, index)
        self.flush_unattributed()
        if self.errors:
            self.session.emit(make_event("session.result", {"errors": self.errors}))
        self.report()

    def conversation_line(self, lines: list[str], index: int) -> int:
        line = lines[index]
        if match := _ERROR.match(line):
            # Whether a reply is awaited does not change: a failed request is
            # retried, and its reply (if any) comes where it was expected.
            self.flush_unattributed()
            return self.error_block(lines, index, match.group(1))
        if line.startswith("Tokens: ") and (count := _wrapped_match(lines, index, _TOKENS.fullmatch)[0]):
            return self.usage_report(lines, index, count)
        if match := _APPLIED.match(line):
            self.tool("edit", {"path": match.group(1)}, success=True)
        elif match := _DRY_RUN.match(line):
            self.tool("edit", {"path": match.group(1), "dryRun": True}, success=None)
        elif match := _COMMIT.match(line):
            message = match.group(2)
            # A one-line commit subject overflows 80 columns by at most one line.
            if index + 1 < len(lines) and _continues(line, lines[index + 1]) and not self.framing(lines[index + 1]):
                index += 1
                message += lines[index] if line.endswith(" ") else " " + lines[index]
            self.tool("commit", {"commitHash": match.group(1), "commitMessage": message}, success=True)
        elif match := _COMMIT_FAILED.match(line):
            self.tool("commit", {"error": match.group(1)}, success=False)
        elif line == _EDIT_FORMAT:
            # The details after the link run straight into the reflected
            # reply: the next round's text is not claimed (tool() stops awaiting).
            self.tool("edit", {"error": line}, success=False)
            if index + 1 < len(lines) and _EDIT_ERRORS_URL.match(lines[index + 1]):
                index += 1
        elif line == _EMPTY_RESPONSE:
            self.flush_unattributed()
            self.session.emit(make_event("session.error", {"message": line, "severity": "warning"}))
            self.session.recognized += 1
        elif line != _UNDO_HINT:
            self.pending.append((index + 1, line))
        return index + 1

    def framing(self, line: str) -> bool:
        """Whether ``line`` is one of the conversation framing lines (never wrapped text)."""
        return any(
            pattern.match(line) for pattern in (_ERROR, _RETRY, _TOKENS, _APPLIED, _DRY_RUN, _COMMIT, _COMMIT_FAILED)
        ) or line in (_EDIT_FORMAT, _EMPTY_RESPONSE, _UNDO_HINT)

    # -- startup -----------------------------------------------------------------
    def startup(self, lines: list[str], index: int, banner: re.Match[str], model: re.Match[str]) -> int:
        """The startup block after the banner and model lines: one ``session.init``."""
        data: dict[str, Any] = {"sourceEngine": ENGINE, "model": model.group(1), "version": banner.group(1),
                                "editFormat": model.group(2)}
        if model.group(3):
            data["modelSettings"] = model.group(3).split(", ")
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                index += 1
            elif match := _EDITOR.match(line):
                data["editorModel"], data["editorEditFormat"] = match.group(1), match.group(2)
                index += 1
            elif match := _WEAK.match(line):
                data["weakModel"] = match.group(1)
                index += 1
            elif match := _GIT.match(line):
                data["gitRepo"] = match.group(1)
                index += 1
            elif match := _REPO_MAP.match(line):
                data["repoMap"] = match.group(1)
                index += 1
            elif match := _ADDED.match(line):
                data.setdefault("readOnlyFiles" if match.group(2) else "chatFiles", []).append(match.group(1))
                index += 1
            elif count := _wrapped_match(lines, index, _startup_notice)[0]:
                index += count
            else:
                break
        self.session.emit(make_event("session.init", data))
        self.session.recognized += 1
        self.awaiting_reply = True
        return index

    # -- provider errors -----------------------------------------------------------
    def error_block(self, lines: list[str], index: int, error_type: str) -> int:
        end = index + 1
        while end < len(lines) and lines[end].strip() and not self.framing(lines[end]):
            end += 1
        block = lines[index:end]
        data: dict[str, Any] = {"errorType": error_type}
        for count in range(1, min(3, len(block) - 1) + 1):
            matched, description = _wrapped_match(block, len(block) - count, _DESCRIPTIONS.__contains__)
            if matched == count:
                data["description"] = description
                block = block[:-count]
                break
        data = {"message": "\n".join(block), **data}
        retry = _RETRY.match(lines[end]) if end < len(lines) else None
        if retry is not None:
            data["retryDelaySeconds"] = float(retry.group(1))
            end += 1
        else:
            end = self.offered_urls(lines, end, data["message"])
        self.session.emit(make_event("session.error", data))
        self.errors.append(dict(data))
        self.session.recognized += 1
        return end

    @staticmethod
    def offered_urls(lines: list[str], index: int, message: str) -> int:
        """Skip the links Aider offers to open after a final error (each one found in the message)."""
        compact = message.replace("\n", "")
        probe = index
        while probe < len(lines):
            line = lines[probe]
            if not line.strip():
                probe += 1
                continue
            if _URL_LINE.match(line) and line in compact:
                probe += 1
                index = probe
                continue
            break
        return index

    # -- replies and reports --------------------------------------------------------
    def usage_report(self, lines: list[str], index: int, count: int) -> int:
        report = lines[index:index + count]
        end = index + count
        if not report[-1].endswith("session.") and (cost := _wrapped_match(lines, end, _COST.fullmatch)[0]):
            report += lines[end:end + cost]
            end += cost
        if self.awaiting_reply:
            self.reply()
        self.flush_unattributed()
        self.session.emit(make_event("session.info", {"sourceType": "usage_report", "content": "\n".join(report)}))
        self.session.recognized += 1
        self.awaiting_reply = False
        return end

    def reply(self) -> None:
        """The pending text as printed, without the blank framing lines around it."""
        body = [line for _, line in self.pending]
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        self.pending.clear()  # in place: run() appends through a local name
        if body:
            self.session.emit(make_event("assistant.message", {"content": "\n".join(body)}))
            self.session.recognized += 1

    def tool(self, name: str, fields: dict[str, Any], *, success: bool | None) -> None:
        self.flush_unattributed()
        self.awaiting_reply = False
        start: dict[str, Any] = {"toolName": name}
        if "path" in fields:
            start["path"] = fields["path"]
        done: dict[str, Any] = {"toolName": name}
        if success is not None:
            done["success"] = success
        done.update(fields)
        self.session.emit(make_event("tool.execution_start", start), make_event("tool.execution_complete", done))
        self.session.recognized += 1

    def flush_unattributed(self) -> None:
        self.unclaimed.add(self.pending)
        self.pending.clear()  # in place: run() appends through a local name

    def report(self) -> None:
        notes = self.session.diagnostics
        if self.omitted_before:
            notes.add(f"{self.omitted_before} line(s) before the Aider startup banner omitted (startup diagnostics)")
        self.unclaimed.report(notes)


def parse(text: str) -> ParseResult:
    """Parse Aider output: native canonical events if present, else its console layout."""
    return parse_console_log(text, ENGINE, is_aider_output, _run)


def _run(session: Session, lines: list[str]) -> None:
    AiderTextMapper(session).run(lines)
