"""The Actions (Markdown) view of a canonical trace: ``generateConversationMarkdown`` (8.1, 8.4).

Layout: ``### Agent session``, the information/statistics first, then the
transcript in a collapsed ``<details>`` section.  Every untrusted string is
inside a code fence longer than its backtick runs, so payloads cannot close
the fence or the disclosure; the only text outside fences is generated
labels and escaped counts. Every fenced line is passed through
``neutralize_commands`` as in the text view: the view is printed to job logs
too, where ``::workflow-command::`` at a line start takes effect (8.5).  The byte budget reserves the closing fence and
``</details>`` markup and ends a clipped view with an explicit notice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bitexact.sessions.render.budget import Document, size
from bitexact.sessions.render.escape import escape_html, fence_for, neutralize_commands, single_line
from bitexact.sessions.render.privacy import Publisher
from bitexact.sessions.render.summary import Conversation, build_conversations
from bitexact.sessions.render.transcript import information_lines, transcript_lines

_MD_PUNCT = re.compile(r"([\\`*_\[\]()#!|~{}])")


def escape_inline(text: str) -> str:
    """Untrusted text for a Markdown/HTML label: one line, HTML and Markdown escaped."""
    return _MD_PUNCT.sub(r"\\\1", escape_html(single_line(text)))


def fenced_block(doc: Document, lines: Sequence[str], fence: str) -> None:
    """Write ``lines`` inside ``fence`` (closing fence reserved by the budget), workflow commands neutralized.

    A step summary is Markdown, but this view is also printed by ``sessions render`` to a job log, where a
    runner reads every line: a fence does not stop ``::add-mask::`` at a line start (8.5).
    """
    if not doc.open(f"{fence}text\n", f"{fence}\n"):
        return
    for line in lines:
        if not doc.write(neutralize_commands(line) + "\n", clip=True):
            break
    if not doc.truncated:
        doc.close()


def disclosure(doc: Document, summary: str, body: Iterable[tuple[str, Sequence[str]]]) -> None:
    """A ``<details>`` section holding fenced blocks (``(heading, lines)`` pairs)."""
    if not doc.open(f"<details>\n<summary>{summary}</summary>\n\n", "\n</details>\n\n"):
        return
    for heading, lines in body:
        if heading and not doc.write(heading + "\n\n"):
            break
        fenced_block(doc, lines, fence_for(*lines))
        if doc.truncated:
            break
    if not doc.truncated:
        doc.close()


def conversation_label(conv: Conversation, pub: Publisher) -> str:
    """Redacted, then escaped, label of a conversation for a ``<summary>`` (it may hold a source's
    agent id: escaping first would hide a credential from the final redaction pass)."""
    return escape_inline(pub.redactor.text(conv.label))


def render_conversations(
    conversations: list[Conversation], pub: Publisher, budget: int, *, include_information: bool = True
) -> str:
    """The Markdown view of already-built conversations."""
    blocks: list[tuple[str, str, list[str], list[str]]] = []
    for conv in conversations:
        info = information_lines(conv, pub) if include_information else []
        blocks.append((conversation_label(conv, pub), f"{conv.events} events", info, transcript_lines(conv, pub)))
    doc = Document(budget)
    doc.total = sum(size("\n".join(b[2] + b[3])) for b in blocks) + 256
    doc.write("### Agent session\n\n")
    if not blocks:
        doc.write("No supported agent observations.\n")
    for index, (label, count, info, transcript) in enumerate(blocks):
        if doc.truncated:
            break
        if index > 0:
            doc.write(f"#### {label[:1].upper()}{label[1:]}\n\n")  # never lower-case source text
        if info:
            fenced_block(doc, info, fence_for(*info))
            doc.write("\n")
        disclosure(doc, f"Conversation transcript — {label} ({escape_inline(count)})", [("", transcript)])
    return pub.final(doc.finish())


def conversation_markdown(
    events: list[Mapping[str, Any]],
    *,
    budget_bytes: int,
    show_prompts: bool = False,
    masks: Iterable[str] = (),
    include_information: bool = True,
) -> str:
    """``generateConversationMarkdown`` for a canonical trace (no legacy result needed)."""
    pub = Publisher(show_prompts, masks)
    return render_conversations(build_conversations(events), pub, budget_bytes,
                                include_information=include_information)
