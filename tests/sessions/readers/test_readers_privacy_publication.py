"""Prompt privacy, untrusted presentation and explicit limits (T-UAS-045, T-UAS-049, T-UAS-050)."""

from __future__ import annotations

import json
import re

import pytest
from uas_reader_helpers import freeze, frozen, load

from bitexact.sessions.render import cli_style_summary, conversation_markdown, plain_text_summary, render, render_path
from bitexact.sessions.render.budget import clip_utf8, size

BUDGET = 1000 * 1024
PROMPT = "PRIVATE-PROMPT-7f3a9c"
MASK = "MASKED-VALUE-42"
TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"


def _all_views(events, **kw):
    return {
        "markdown": render(events, "markdown", **kw),
        "text": render(events, "text", **kw),
        "conversation_markdown": conversation_markdown(events, budget_bytes=BUDGET, **kw),
        "plain_text": plain_text_summary(events, budget_bytes=BUDGET, **kw),
        "cli": cli_style_summary(events, budget_bytes=BUDGET, **kw),
    }


@pytest.mark.uas("T-UAS-045")
def test_prompt_absent_from_every_default_summary() -> None:
    events, _ = frozen("private_prompt_with_secrets_and_hostile_text.json")
    for name, out in _all_views(events).items():
        assert PROMPT not in out, name


@pytest.mark.uas("T-UAS-045")
def test_prompt_absent_from_log_rendering_and_unrecognized_preview(tmp_path) -> None:
    log = tmp_path / "agent-stdio.log"
    log.write_text(f"{PROMPT}\nthis is prose, not a supported format\n", encoding="utf-8")
    for fmt in ("markdown", "text"):
        assert PROMPT not in render_path(log, fmt)
    claude = tmp_path / "claude.jsonl"
    claude.write_text(json.dumps({"type": "user", "message": {"content": [{"type": "text", "text": PROMPT}]}}) + "\n")
    for fmt in ("markdown", "text"):
        assert PROMPT not in render_path(claude, fmt, engine="claude")


@pytest.mark.uas("T-UAS-045", "T-UAS-049")
def test_explicit_diagnostic_view_shows_prompt_redacted() -> None:
    events = freeze(load("private_prompt_with_secrets_and_hostile_text.json") + [
        {"type": "user.message", "data": {"content": f"second prompt with {TOKEN}"}}])
    out = render(events, "text", show_prompts=True, masks=[MASK])
    assert PROMPT in out and "User prompt (diagnostic view)" in out
    assert TOKEN not in out and "second prompt with ***" in out


@pytest.mark.uas("T-UAS-049", "T-UAS-060")
def test_masks_and_credentials_redacted_in_every_view() -> None:
    events, _ = frozen("private_prompt_with_secrets_and_hostile_text.json")
    for name, out in _all_views(events, masks=[MASK]).items():
        assert MASK not in out and TOKEN not in out, name
        assert "***" in out, name


@pytest.mark.uas("T-UAS-049")
def test_hostile_text_cannot_close_fences_or_details_in_markdown() -> None:
    events, _ = frozen("private_prompt_with_secrets_and_hostile_text.json")
    out = render(events, "markdown")
    # Outside code fences, only generated markup remains; payload HTML is fenced text.
    outside = _outside_fences(out)
    assert "<script>" not in outside and "<img" not in outside and "<b>" not in outside
    assert outside.count("<details>") == outside.count("</details>")
    blocks = re.findall(r"^(`{3,})text\n(.*?)^\1$", out, re.M | re.S)
    assert any("````" in body for _, body in blocks)
    for fence, body in blocks:
        longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
        assert len(fence) > longest  # payload backtick runs cannot close the fence


def _outside_fences(markdown: str) -> str:
    kept, fence = [], None
    for line in markdown.split("\n"):
        opening = re.match(r"^(`{3,})text$", line)
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None:
            if line == fence:
                fence = None
            continue
        kept.append(line)
    assert fence is None, "an opened fence was never closed"
    return "\n".join(kept)


@pytest.mark.uas("T-UAS-049")
def test_text_view_neutralizes_workflow_commands() -> None:
    events, _ = frozen("private_prompt_with_secrets_and_hostile_text.json")
    for out in (render(events, "text"), plain_text_summary(events, budget_bytes=BUDGET),
                cli_style_summary(events, budget_bytes=BUDGET)):
        for line in out.split("\n"):
            assert not re.match(r"^\s*(::|##\[)", line), line
        assert "add-mask" in out  # the text stays readable, only inert


@pytest.mark.uas("T-UAS-049", "T-UAS-050")
def test_redaction_happens_before_clipping() -> None:
    secret = "SECRET-VALUE-" + "Z" * 40
    # Place the secret across the per-message clip boundary (8 KiB).
    text = "a" * (8 * 1024 - 20) + secret
    events = freeze([{"type": "assistant.message", "data": {"content": text}}])
    out = render(events, "text", masks=[secret])
    assert "SECRET-VALUE" not in out and "SECRET" not in out


@pytest.mark.uas("T-UAS-050")
@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_oversized_display_is_bounded_with_notice_and_closed_markup(fmt: str) -> None:
    big = [{"type": "assistant.message", "data": {"content": f"message {i} " + "é" * 3000}} for i in range(400)]
    events = freeze(big)
    budget = 64 * 1024
    out = render(events, fmt, budget_bytes=budget)
    assert size(out) <= budget
    assert "display truncated" in out and "unchanged" in out
    if fmt == "markdown":
        _outside_fences(out)  # every opened fence is closed
        assert out.count("<details>") == out.count("</details>")
    assert len(big) == 400 and big[0]["data"]["content"].startswith("message 0")


@pytest.mark.uas("T-UAS-050")
def test_default_budget_is_1000_kib() -> None:
    events = freeze([{"type": "assistant.message", "data": {"content": "x" * 8000}} for _ in range(200)])
    out = render(events, "text")
    assert 1000 * 1024 - 4096 < size(out) <= 1000 * 1024


@pytest.mark.uas("T-UAS-050")
def test_utf8_clipping_never_splits_a_character() -> None:
    text = "aé€😀" * 10
    for limit in range(0, size(text) + 2):
        clipped, removed = clip_utf8(text, limit)
        assert size(clipped) <= limit or removed == 0
        assert text.startswith(clipped)
        assert size(clipped) + removed == size(text)
