"""Console views of a canonical trace: ``generatePlainTextSummary`` and the CLI-style summary.

The plain-text view carries the same observations as the Markdown view:
information first, then the transcript.  It is written to job logs, so
every line is passed through ``neutralize_commands``: source text can never
start a ``::workflow-command::`` line.  The CLI-style summary is the bare
transcript (``generateCopilotCliStyleSummary``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bitexact.sessions.render.budget import Document, size
from bitexact.sessions.render.escape import neutralize_commands, single_line
from bitexact.sessions.render.privacy import Publisher
from bitexact.sessions.render.summary import Conversation, build_conversations
from bitexact.sessions.render.transcript import information_lines, transcript_lines


def write_lines(doc: Document, lines: Sequence[str], indent: str = "") -> None:
    """Write neutralized lines until the budget is reached."""
    for line in lines:
        if not doc.write(neutralize_commands(indent + line) + "\n", clip=True):
            return


def render_conversations(conversations: list[Conversation], pub: Publisher, budget: int,
                         *, title: str = "Agent session") -> str:
    """The plain-text view of already-built conversations."""
    sections = []
    for conv in conversations:
        sections.append((conv, information_lines(conv, pub), transcript_lines(conv, pub)))
    doc = Document(budget)
    doc.total = sum(size("\n".join(s[1] + s[2])) for s in sections) + 128
    doc.write(title + "\n")
    if not sections:
        doc.write("No supported agent observations.\n")
    for conv, info, transcript in sections:
        write_lines(doc, [f"== {single_line(pub.redactor.text(conv.label))} ({conv.events} events) =="])
        write_lines(doc, ["Information"] + ["  " + line for line in info])
        write_lines(doc, ["Transcript"] + ["  " + line for line in transcript])
        if doc.truncated:
            break
    return pub.final(doc.finish())


def plain_text_summary(events: list[Mapping[str, Any]], *, budget_bytes: int, show_prompts: bool = False,
                       masks: Iterable[str] = ()) -> str:
    """``generatePlainTextSummary`` for a canonical trace."""
    pub = Publisher(show_prompts, masks)
    return render_conversations(build_conversations(events), pub, budget_bytes)


def cli_style_summary(events: list[Mapping[str, Any]], *, budget_bytes: int, show_prompts: bool = False,
                      masks: Iterable[str] = ()) -> str:
    """``generateCopilotCliStyleSummary``: the transcript with a closing statistics line."""
    pub = Publisher(show_prompts, masks)
    doc = Document(budget_bytes)
    conversations = build_conversations(events)
    bodies = [(conv, transcript_lines(conv, pub)) for conv in conversations]
    doc.total = sum(size("\n".join(lines)) for _, lines in bodies)
    for index, (conv, lines) in enumerate(bodies):
        if index > 0 or len(bodies) > 1:
            write_lines(doc, [f"── {single_line(pub.redactor.text(conv.label))} ──"])
        write_lines(doc, lines)
        stats = conv.stats()
        write_lines(doc, [f"Tools: {stats.succeeded} succeeded, {stats.failed} failed, {stats.pending} pending, "
                          f"{stats.unknown} unknown, {stats.orphans} without start"])
        if doc.truncated:
            break
    return pub.final(doc.finish())
