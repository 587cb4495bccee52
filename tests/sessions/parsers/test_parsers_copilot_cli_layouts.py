"""Copilot pretty-print output of ``copilot -p`` (UAS 7.2, T-UAS-037).

The fixtures in ``fixtures/copilot/cli_layouts/`` use the framing of three
versions of the ``@github/copilot`` package (synthetic content): 1.0.102
(captured from the binary), 0.0.423 and 0.0.340 (rendered by their own
components).  See the module docstring of ``parsers/copilot.py``.
"""

from __future__ import annotations

import pytest

from bitexact.sessions import parse
from uas_parser_helpers import datas, fixture_text, types

CURRENT = "cli_layouts/copilot_1_0_102_tool_blocks_and_stderr_footer.log"
LATE_0_0 = "cli_layouts/copilot_0_0_423_bullet_messages_tools_and_footer.log"
EARLY_0_0 = "cli_layouts/copilot_0_0_340_checkmark_tools_box_and_footer.log"


def _completions(name: str) -> list[dict[str, object]]:
    return datas(parse(fixture_text("copilot", name), "copilot").events, "tool.execution_complete")


@pytest.mark.uas("T-UAS-037", "T-UAS-014")
def test_current_cli_markers_give_the_printed_outcome() -> None:
    done = _completions(CURRENT)
    assert [(d["toolName"], d["success"]) for d in done] == [
        ("List files (shell)", True),  # ●: a finished call that succeeded
        ("Run the tests (shell)", False),  # ✗: failed
        ("Read package.json", True),
        ("Search (grep)", True),  # /: a search tool that succeeded
        ("Edit src/app.js +1 -1", True),  # ● without sub-items, in the 1.0.x layout
        ("Remove build (shell)", False),  # ✗: denied by a rule
    ]


@pytest.mark.uas("T-UAS-037", "T-UAS-013")
def test_current_cli_sub_item_framing_is_removed_from_the_printed_lines() -> None:
    outputs = [d.get("output") for d in _completions(CURRENT)]
    assert outputs[0] == "ls -a\n4 lines…"  # the CLI prints only a summary of a successful shell call
    # "  └ " opens the last item, four spaces continue it; the blank payload line stays.
    assert outputs[1] == (
        "npm test\n> demo@1.0.0 test\n> node test.js\n\nnot ok 1 - adds numbers\nFailed with exit code 1"
    )
    assert outputs[3] == '"TODO"\n2 files found'
    assert outputs[4] is None  # nothing printed under the edit, nothing invented


@pytest.mark.uas("T-UAS-037")
def test_assistant_text_between_tool_blocks_is_not_a_tool_or_output() -> None:
    events = parse(fixture_text("copilot", CURRENT), "copilot").events
    assert types(events).count("tool.execution_start") == 6
    text = "\n".join(str(d.get("output")) for d in datas(events, "tool.execution_complete"))
    assert "The test passes now." not in text and "Indented closing note" not in text
    # A "/ " line without the sub-item framing is prose, not a search record.
    prose = parse("/ this is just a sentence\n\n● Read a.txt\n  └ 1 line read\n", "copilot").events
    assert [d["toolName"] for d in datas(prose, "tool.execution_start")] == ["Read a.txt"]


@pytest.mark.uas("T-UAS-037", "T-UAS-031", "T-UAS-034")
def test_current_cli_footer_is_kept_and_only_exact_counts_become_usage() -> None:
    result = datas(parse(fixture_text("copilot", CURRENT), "copilot").events, "session.result")
    assert result == [{
        # "↑ 18.2k (12.0k cached ...)" is rounded by the CLI: not a count; "↓ 412" is exact.
        "usage": {"output_tokens": 412},
        "usageReport": [
            "Changes    +1 -1",
            "Requests   1 Premium (12s)",
            "Tokens     ↑ 18.2k (12.0k cached, 300 written) • ↓ 412",
            "Resume     copilot --resume=00000000-0000-4000-8000-000000000001",
        ],
    }]
    exact = parse("Changes    +0 -0\nDuration   3s\nTokens     ↑ 999 (0 cached) • ↓ 1.5k\n", "copilot").events
    assert datas(exact, "session.result")[0]["usage"] == {"input_tokens": 999, "cache_read_input_tokens": 0}


@pytest.mark.uas("T-UAS-037", "T-UAS-014")
def test_0_0_423_bullet_blocks_are_tools_only_with_a_sub_item() -> None:
    result = parse(fixture_text("copilot", LATE_0_0), "copilot")
    done = datas(result.events, "tool.execution_complete")
    assert [(d["toolName"], d["success"]) for d in done] == [("Read package.json", True), ("Run the tests", False)]
    assert done[0]["output"] == "12 lines read"
    assert done[1]["output"] == "$ npm test\nnot ok 1 - adds numbers\n  at test.js:3"  # two-space framing only
    # The assistant messages (and an edit printed without sub-items) share the ● glyph: left unmapped, reported.
    assert result.diagnostics == [
        f"line {n}: '●' block without tool sub-items not read as a tool call" for n in (1, 13, 15)
    ]


@pytest.mark.uas("T-UAS-037", "T-UAS-031")
def test_0_0_423_footer_gives_the_model_and_exact_counts() -> None:
    result = datas(parse(fixture_text("copilot", LATE_0_0), "copilot").events, "session.result")[0]
    assert result["model"] == "claude-sonnet-4.5"  # the name's padding is framing
    assert result["usage"] == {"output_tokens": 412, "cache_read_input_tokens": 0}  # a printed zero stays zero
    assert result["usageReport"][0] == "Total usage est:        1 Premium request"
    assert len(result["usageReport"]) == 6 and "numTurns" not in result


@pytest.mark.uas("T-UAS-037", "T-UAS-014")
def test_0_0_340_checkmark_records_with_three_space_framing_and_a_box() -> None:
    done = _completions(EARLY_0_0)
    assert [(d["toolName"], d["success"]) for d in done] == [
        ("List files", True), ("Run the tests", False), ("Read package.json (12 lines)", True),
        ("report_progress: Empty", True), ("Edit src/app.js (+1 -1)", True),
    ]
    assert done[0]["output"] == "$ ls -a\n↪ 4 lines..."
    assert done[1]["output"] == "$ npm test\nnot ok 1 - adds numbers\n  at test.js:3"  # payload indent kept
    assert done[3]["output"] == "No Content"  # the round box and its fill are framing
    assert "output" not in done[2] and "output" not in done[4]


@pytest.mark.uas("T-UAS-037", "T-UAS-030", "T-UAS-031")
def test_0_0_340_footer_maps_exact_counts_with_its_cache_semantics() -> None:
    result = datas(parse(fixture_text("copilot", EARLY_0_0), "copilot").events, "session.result")[0]
    # That version adds prompt_tokens (cached tokens included); its "cache write" is the uncached
    # rest of the prompt, not a cache-creation count, so it stays in the report only.
    assert result["usage"] == {"input_tokens": 640, "output_tokens": 412, "cache_read_input_tokens": 128,
                               "input_tokens_include_cache": True}
    assert result["model"] == "claude-sonnet-4.5"
    assert result["usageReport"][-1].endswith("512 cache write (Est. 1 Premium request)")


@pytest.mark.uas("T-UAS-037", "T-UAS-034")
def test_turns_come_only_from_an_explicit_turns_line() -> None:
    for name in (CURRENT, LATE_0_0, EARLY_0_0):
        result = datas(parse(fixture_text("copilot", name), "copilot").events, "session.result")[0]
        assert "numTurns" not in result, name  # six, two and five tool records do not make turns
    explicit = datas(parse(fixture_text("copilot", CURRENT) + "Turns: 4\n", "copilot").events, "session.result")
    assert explicit[0]["numTurns"] == 4


@pytest.mark.uas("T-UAS-037", "T-UAS-017")
def test_a_footer_alone_is_recognized_but_a_lone_head_line_is_not() -> None:
    stderr = "\n\nChanges    +0 -0\nDuration   0s\nResume     copilot --resume=s-1\n"
    assert datas(parse(stderr, "copilot").events, "session.result") == [
        {"usageReport": ["Changes    +0 -0", "Duration   0s", "Resume     copilot --resume=s-1"]}
    ]
    lone = parse("Changes    +0 -0\n", "copilot")
    assert lone.events == [] and lone.diagnostics[-1].startswith("unrecognized format")


@pytest.mark.uas("T-UAS-037")
def test_crlf_line_endings_are_framing() -> None:
    text = fixture_text("copilot", CURRENT)
    assert parse(text.replace("\n", "\r\n"), "copilot").events == parse(text, "copilot").events


@pytest.mark.uas("T-UAS-037", "T-UAS-013")
def test_payload_spacing_beyond_the_framing_is_not_trimmed() -> None:
    text = "✗ Step (shell)\n  │ run  \n  └ first  \n      indented  \n"
    done = datas(parse(text, "copilot").events, "tool.execution_complete")
    assert done == [{"toolName": "Step (shell)", "success": False, "output": "run  \nfirst  \n  indented  "}]


@pytest.mark.uas("T-UAS-037", "T-UAS-022")
def test_printed_tool_records_get_no_invented_ids() -> None:
    for name in (CURRENT, LATE_0_0, EARLY_0_0):
        tools = [e for e in parse(fixture_text("copilot", name), "copilot").events if e["type"].startswith("tool.")]
        assert tools and all(set(e["data"]) <= {"toolName", "success", "output"} for e in tools), name


@pytest.mark.uas("T-UAS-037", "T-UAS-041")
@pytest.mark.parametrize("name", [CURRENT, LATE_0_0, EARLY_0_0])
def test_each_real_cli_layout_is_detected_without_an_engine_name(name: str) -> None:
    """Real prompt-mode output has no ``Turns:`` line: its sub-item framing or its footer is the signature."""
    text = fixture_text("copilot", name)
    detected = parse(text)
    assert detected.engine == "copilot"
    assert detected.events == parse(text, "copilot").events


@pytest.mark.uas("T-UAS-041")
def test_prose_with_a_bullet_glyph_is_not_taken_for_copilot_output() -> None:
    prose = "Release notes\n● Faster startup\n● Fewer prompts\n\nThanks to everyone who helped.\n"
    result = parse(prose)
    assert result.engine == "custom" and result.events == []
