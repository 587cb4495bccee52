"""Merger, readers, compact projection and validation (review 7): regression tests, each for a bug a
review found; the docstring of each test names what was wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.real_command import run_bitexact

from bitexact.sessions.unify import unify

TOKEN = "abcdefghijklmnopqrstuvwxyz012345"


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.uas("T-UAS-060")
def test_unify_redacts_a_bearer_token_after_a_tab(tmp_path: Path) -> None:
    """The raw-JSON prefilter looked for `Bearer<space|tab>` literally, but JSON writes a tab as `\\t`,
    so a tab-separated bearer token was never walked and survived into aw_session.jsonl."""
    root = tmp_path / "root"
    _jsonl(root / "agent-session.jsonl", [
        {"type": "assistant.message", "timestamp": "2026-01-01T00:00:01Z",
         "data": {"content": "Authorization: Bearer\t" + TOKEN}},
    ])
    out = tmp_path / "aw_session.jsonl"
    unify(root, out, env={})
    data = out.read_bytes()
    assert TOKEN.encode() not in data
    assert b"Bearer\\t***" in data


HEADER = {"type": "session.format", "data": {"version": 1},
          "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl",
                         "index": 0}}
GITHUB_TOKEN = "ghp_" + "A" * 36
MASK = "s3cr3t-" + "Q" * 200


def _observation(component: str = "mcp", phase: str = "agent", kind: str = "x.event") -> dict:
    return {"type": kind, "data": {}, "provenance": {"component": component, "phase": phase, "path": "p", "index": 0}}


@pytest.mark.uas("T-UAS-049", "T-UAS-065")
@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_unified_view_shows_no_raw_escape_sequence_from_a_component_name(fmt: str) -> None:
    """The overview's `Records by component` line wrote each provenance component as recorded, so an
    escape sequence in a file retitled (or cleared) the terminal the view was read on."""
    from bitexact.sessions.render import render

    out = render([HEADER, _observation(component="mcp\x1b]0;PWNED\x07")], fmt)
    assert "\x1b" not in out and "\x07" not in out


@pytest.mark.uas("T-UAS-049", "T-UAS-050")
@pytest.mark.parametrize("fmt", ["markdown", "text"])
@pytest.mark.parametrize("where", ["type", "component", "phase"])
def test_unified_view_clipped_by_its_budget_never_shows_a_secret_prefix(fmt: str, where: str) -> None:
    """The timeline labels (component, phase, type) and the component counts were redacted only by the
    final pass, after the budget had clipped the line: a cut inside a token or a registered mask left a
    prefix the final pass no longer recognized (8.4: redacted copies before shortening)."""
    from bitexact.sessions.render import render

    for secret in (GITHUB_TOKEN, MASK):
        fields = {"component": "mcp", "phase": "agent", "kind": "x.event"}
        fields[where if where != "type" else "kind"] += "." + secret
        records = [HEADER, _observation(**fields)]
        for budget in range(512, 1400):
            out = render(records, fmt, budget_bytes=budget, masks=[MASK])
            assert secret[:9] not in out, (budget, out)


@pytest.mark.uas("T-UAS-067")
def test_validate_prints_no_raw_escape_sequence_from_record_types_or_keys(tmp_path: Path) -> None:
    """`sessions validate` printed each record type of the file in its counts, and a metric key in its
    diagnostic's JSON pointer, exactly as recorded: an escape sequence in the file reached the terminal
    (and a newline in a type could print a fake `valid` line)."""
    hostile = "x\x1b]0;PWNED\x07\nunified f: 0 records, valid"
    path = tmp_path / "aw_session.jsonl"
    records = [HEADER,
               {"type": hostile, "data": {}, "provenance": {"component": "mcp", "phase": "agent", "path": "p",
                                                            "index": 0}},
               {"type": "grader.result", "data": {"metrics": [{hostile: {"nested": 1}}]},
                "provenance": {"component": "grader", "phase": "conclusion", "path": "g", "index": 0}}]
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records), encoding="utf-8")
    result = run_bitexact(tmp_path / "home", "sessions", "validate", "unified", str(path))
    assert result.returncode == 1, result.stderr
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream and "\x07" not in stream, stream
        assert "unified f: 0 records" not in stream.splitlines(), stream


@pytest.mark.uas("T-UAS-076")
def test_compact_prints_no_raw_bidirectional_override_or_c1_control(tmp_path: Path) -> None:
    """`sessions compact` printed its result with every character of the projected strings raw: a
    bidirectional override (or a C1 control such as CSI) in a retained workflow field reordered or
    drove the terminal.  Written as JSON escapes, the printed result still decodes to the same session."""
    model = "gpt\u202edlrow\u2066x\x9b2J"
    path = tmp_path / "aw_session.jsonl"
    records = [HEADER, {"type": "workflow.info", "data": {"model": model},
                        "provenance": {"component": "workflow", "phase": "agent", "path": "aw_info.json", "index": 0}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = run_bitexact(tmp_path / "home", "sessions", "compact", str(path))
    assert result.returncode == 0, result.stderr
    for char in ("\u202e", "\u2066", "\x9b"):
        assert char not in result.stdout
    session = json.loads(result.stdout)["session"]
    assert json.loads(session.splitlines()[1])["data"]["model"] == model


@pytest.mark.uas("T-UAS-059")
def test_unify_summary_prints_no_raw_escape_sequence_from_a_source_path(tmp_path: Path) -> None:
    """`sessions unify` listed each source's path as found: a Copilot session directory named with an
    escape sequence (or a line break) reached the operator's terminal raw."""
    name = "s\x1b]0;PWNED\x07\nwarnings: 0"
    _jsonl(tmp_path / "root" / "copilot-session-state" / name / "events.jsonl",
           [{"type": "session.start", "data": {"sessionId": "s"}, "timestamp": "2026-01-01T00:00:00Z"}])
    result = run_bitexact(tmp_path / "home", "sessions", "unify", str(tmp_path / "root"), "-o", str(tmp_path / "aw_session.jsonl"))
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "warnings: 0" not in result.stdout.splitlines()


@pytest.mark.uas("T-UAS-049")
@pytest.mark.parametrize("fmt", ["markdown", "text"])
@pytest.mark.parametrize("unified", [False, True])
def test_conversation_shows_an_unknown_event_type_escaped_and_redacted_before_clipping(fmt: str,
                                                                                        unified: bool) -> None:
    """A conversation entry of an unknown (native extension) type wrote the type as recorded: an escape
    sequence reached the terminal, and a secret in it was redacted only after the budget clipped it."""
    from bitexact.sessions.render import render

    def trace(kind: str) -> list[dict]:
        events = [{"type": "session.init", "data": {"sourceEngine": "claude"}}, {"type": kind, "data": {}}]
        if not unified:
            return events
        for index, event in enumerate(events):
            event["provenance"] = {"component": "agent", "phase": "agent", "path": "a.jsonl", "index": index}
        return [HEADER, *events]

    assert "\x1b" not in render(trace("vendor.x\x1b]0;PWNED\x07"), fmt)
    records = trace("vendor." + MASK)
    for budget in range(512, 1600):
        assert MASK[:9] not in render(records, fmt, budget_bytes=budget, masks=[MASK]), budget


@pytest.mark.uas("T-UAS-049")
@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u2003", "\x85", "\u1680"])
def test_text_view_neutralizes_a_workflow_command_behind_unicode_whitespace(space: str) -> None:
    """The runner trims every leading whitespace character (.NET `TrimStart`) before it looks for `::`,
    but the text view only broke commands behind spaces and tabs: a line of an assistant message starting
    with a no-break or ideographic space then `::add-mask::` stayed an executable workflow command."""
    from bitexact.sessions.render import render

    events = [{"type": "session.init", "data": {"sourceEngine": "claude"}},
              {"type": "assistant.message", "data": {"content": f"hello\n{space}::set-output name=x::y\n"
                                                                f"{space}##[error]forged"}}]
    for line in render(events, "text").splitlines():
        assert not line.lstrip().startswith(("::", "##[")), repr(line)


@pytest.mark.uas("T-UAS-073", "T-UAS-059")
def test_run_rows_refuses_a_symlinked_usage_directory(tmp_path: Path) -> None:
    """`run_rows` checked only the final path component for a link: with `usage/` a symbolic link to
    another run's directory, that run's aw_session.jsonl was read as this run's evidence."""
    from bitexact.sessions.render.subagents import run_rows

    fixture = Path(__file__).resolve().parent / "fixtures" / "readers" / "subagents_run_a.jsonl"
    elsewhere = tmp_path / "other-run"
    elsewhere.mkdir()
    (elsewhere / "aw_session.jsonl").write_bytes(fixture.read_bytes())
    root = tmp_path / "root"
    root.mkdir()
    (root / "usage").symlink_to(elsewhere, target_is_directory=True)
    result = run_rows(root)
    assert result.source is None and result.rows == ()
    assert result.diagnostics == ("usage/aw_session.jsonl: symbolic link not followed",)
