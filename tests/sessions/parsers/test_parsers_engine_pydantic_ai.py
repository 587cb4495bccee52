"""Pydantic AI named plaintext sample adapter (UAS 7.6, 9.4 Pydantic AI row; T-UAS-041 detection).

The console fixtures are clai / pydantic-ai-slim 2.62.0 one-shot runs
(``clai [-a AGENT] [-m MODEL] [--no-stream] PROMPT``) with stdout and stderr
captured together from a pipe, against a local OpenAI-compatible stub; the
tracebacks are trimmed to their first frame and last two frames.
"""

from __future__ import annotations

import copy

import pytest

from bitexact.sessions import UnrecognizedFormatError, canonical_json, detect_engine, parse
from bitexact.sessions.parsers.custom import detect_delegate
from uas_parser_helpers import datas, fixture_text, jsonl, types

ENGINE = "pydantic-ai"
PAD = " " * 80
ANSWER = "\n".join([
    ("Hello from the stub." + PAD)[:80], "",
    (" • first point" + PAD)[:80],
    (" • second point" + PAD)[:80], "",
    "python", "print('hi')", "/python",
])
CONSOLE_FIXTURES = [
    "authentication_401_no_stream_traceback.txt",
    "coding_agent_banner_answer_not_claimed.txt",
    "no_stream_answer.txt",
    "rate_limit_429_chained_traceback.txt",
    "streamed_answer_without_final_newline.txt",
    "streamed_tool_call_wrapped_header.txt",
    "tool_exception_pending_call_then_traceback.txt",
]
HEADER = "clai - Pydantic AI CLI v2.62.0 with openai:gpt-4o\n"
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/venv/lib/python3.11/site-packages/pydantic_ai/models/openai.py", line 267, in _map_api_errors\n'
    "    raise _map_status_error(e, model_name, model_id_namespace) from e\n"
    "pydantic_ai.exceptions.ModelHTTPError: status_code: 500, model_name: gpt-4o, body: None\n"
)


def fixture(name: str) -> str:
    return fixture_text(ENGINE, name)


@pytest.mark.uas("T-UAS-009", "T-UAS-011", "T-UAS-005")
@pytest.mark.parametrize("name", ["no_stream_answer.txt", "streamed_answer_without_final_newline.txt"])
def test_answer_runs_map_header_and_the_rendered_answer_only(name: str) -> None:
    result = parse(fixture(name), ENGINE)
    assert result.engine == ENGINE and result.diagnostics == []
    assert result.events == [
        {"type": "session.init", "data": {"sourceEngine": ENGINE, "version": "2.62.0", "model": "openai:gpt-4o"}},
        {"type": "assistant.message", "data": {"content": ANSWER}},
    ]
    # clai prints no usage, turn count or outcome: none is invented from a normal-looking answer.
    assert "session.result" not in types(result.events)


@pytest.mark.uas("T-UAS-012", "T-UAS-013", "T-UAS-009")
def test_streamed_tool_call_is_a_nameonly_start_and_completion_after_a_wrapped_header() -> None:
    # The header wraps at 80 columns ("... with \nopenai:stub-tool").
    events = parse(fixture("streamed_tool_call_wrapped_header.txt"), ENGINE).events
    assert events == [
        {"type": "session.init", "data": {"sourceEngine": ENGINE, "version": "2.62.0",
                                          "agent": "tools_agent:agent", "model": "openai:stub-tool"}},
        {"type": "tool.execution_start", "data": {"toolName": "get_weather"}},
        # "Called tool" is printed for a retried call too: no outcome, id, arguments or result.
        {"type": "tool.execution_complete", "data": {"toolName": "get_weather"}},
        {"type": "assistant.message", "data": {"content": ("The weather tool said sunny, 21 C." + PAD)[:80]}},
    ]


@pytest.mark.uas("T-UAS-011", "T-UAS-012")
def test_text_before_a_tool_line_is_its_own_response() -> None:
    text = HEADER + "Let me check.\n\n▌ Called tool get_weather.\n\nSunny.\n"
    events = parse(text, ENGINE).events
    assert types(events) == ["session.init", "assistant.message", "tool.execution_start",
                             "tool.execution_complete", "assistant.message"]
    assert [d["content"] for d in datas(events, "assistant.message")] == ["Let me check.", "Sunny."]


@pytest.mark.uas("T-UAS-012", "T-UAS-015")
def test_pending_tool_call_then_traceback_is_a_start_without_completion_and_an_error() -> None:
    # The streamed render ends without a newline, so the traceback starts on the "Calling tool" line.
    result = parse(fixture("tool_exception_pending_call_then_traceback.txt"), ENGINE)
    error = {"message": "weather backend down", "errorType": "RuntimeError"}
    assert result.events == [
        {"type": "session.init", "data": {"sourceEngine": ENGINE, "version": "2.62.0",
                                          "agent": "tools_agent2:crash_agent"}},
        {"type": "tool.execution_start", "data": {"toolName": "get_weather_crash"}},
        {"type": "session.error", "data": error},
        {"type": "session.result", "data": {"errors": [error]}},
    ]
    assert result.diagnostics == []


@pytest.mark.uas("T-UAS-015", "T-UAS-011")
@pytest.mark.parametrize(
    "name,error_type,status,model,cause",
    [
        ("rate_limit_429_chained_traceback.txt", "pydantic_ai.exceptions.ModelRateLimitError", 429, "stub-429",
         "openai.RateLimitError"),
        ("authentication_401_no_stream_traceback.txt", "pydantic_ai.exceptions.ModelAuthenticationError", 401,
         "stub-401", "openai.AuthenticationError"),
    ],
)
def test_provider_failure_is_the_final_exception_of_the_chained_traceback(
    name: str, error_type: str, status: int, model: str, cause: str
) -> None:
    events = parse(fixture(name), ENGINE).events
    assert types(events) == ["session.init", "session.error", "session.result"]
    (error,) = datas(events, "session.error")
    assert error["errorType"] == error_type
    assert (error["statusCode"], error["modelName"]) == (status, model)
    assert error["message"].startswith(f"status_code: {status}, model_name: {model}, body: {{'message': ")
    (earlier,) = error["chain"]
    assert earlier["errorType"] == cause and earlier["message"].startswith(f"Error code: {status} - ")
    # Status-less: the traceback's text says nothing of the exit code or accounting.
    assert events[-1] == {"type": "session.result", "data": {"errors": [error]}}
    assert not any("usage" in e["data"] or "status" in e["data"] for e in events)


@pytest.mark.uas("T-UAS-011", "T-UAS-015")
def test_text_cut_off_by_a_traceback_is_not_claimed() -> None:
    text = HEADER + "▌ Called tool lookup.\n\nThe answer is" + TRACEBACK
    result = parse(text, ENGINE)
    assert types(result.events) == ["session.init", "tool.execution_start", "tool.execution_complete",
                                    "session.error", "session.result"]
    assert datas(result.events, "session.error")[0]["statusCode"] == 500
    assert result.diagnostics == [
        "1 Pydantic AI output line(s) not attributed to a reply (first at line 4); not claimed as assistant text"
    ]


@pytest.mark.uas("T-UAS-009", "T-UAS-011", "T-UAS-012")
def test_coding_agent_banner_is_initialization_only() -> None:
    result = parse(fixture("coding_agent_banner_answer_not_claimed.txt"), ENGINE)
    assert result.events == [{"type": "session.init", "data": {
        "sourceEngine": ENGINE, "version": "2.62.0", "agent": "tools_agent:agent", "model": "openai:stub-tool",
        "toolCount": 1, "capabilityCount": 0,
    }}]
    # The library prints the same banner on stderr ahead of any program's output, so what follows
    # (here clai's tool line and answer) is not claimed.
    assert result.diagnostics == [
        "2 Pydantic AI output line(s) not attributed to a reply (first at line 11); not claimed as assistant text"
    ]


@pytest.mark.uas("T-UAS-009")
@pytest.mark.parametrize(
    "header,init",
    [
        ("clai - Pydantic AI CLI v2.62.0 using custom agent tools_agent:agent\n", {"agent": "tools_agent:agent"}),
        # A model id longer than the line is folded at column 80 (as rich printed it).
        ("clai - Pydantic AI CLI v2.62.0 with \n"
         "bedrock:arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.cl\n"
         "aude-sonnet-4-20250514-v1:0\n",
         {"model": "bedrock:arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-"
                   "20250514-v1:0"}),
        ("clai - Pydantic AI CLI v2.62.0 using custom agent \n"
         "my_pkg.agents.research:research_agent with anthropic:claude-sonnet-4-5\n",
         {"agent": "my_pkg.agents.research:research_agent", "model": "anthropic:claude-sonnet-4-5"}),
    ],
)
def test_header_variants(header: str, init: dict[str, str]) -> None:
    events = parse(header + "Done." + PAD[:75] + "\n", ENGINE).events
    assert events == [
        {"type": "session.init", "data": {"sourceEngine": ENGINE, "version": "2.62.0", **init}},
        {"type": "assistant.message", "data": {"content": "Done." + PAD[:75]}},
    ]


@pytest.mark.uas("T-UAS-011")
def test_python_warnings_and_lines_before_the_header_are_omitted() -> None:
    text = (
        "Collecting clai\n" + HEADER
        + "/venv/lib/python3.11/site-packages/x.py:12: DeprecationWarning: old\n  warnings.warn('old')\nHi.\n"
    )
    result = parse(text, ENGINE)
    assert datas(result.events, "assistant.message") == [{"content": "Hi."}]
    assert result.diagnostics == ["1 line(s) before the Pydantic AI header or banner omitted",
                                  "1 Python warning(s) omitted"]


@pytest.mark.uas("T-UAS-009", "T-UAS-011")
def test_two_runs_in_one_log_are_two_initializations() -> None:
    text = HEADER + "First.\n" + HEADER.replace("gpt-4o", "gpt-5") + "Second.\n"
    events = parse(text, ENGINE).events
    assert types(events) == ["session.init", "assistant.message"] * 2
    assert [d["model"] for d in datas(events, "session.init")] == ["openai:gpt-4o", "openai:gpt-5"]


@pytest.mark.uas("T-UAS-017", "T-UAS-005")
def test_quiet_output_supplies_nothing() -> None:
    # clai's answer without its header line (e.g. a captured stdout with the first line cut).
    result = parse(fixture("quiet_answer_without_header.txt"), ENGINE)
    assert result.events == []
    assert result.diagnostics[-1] == "unrecognized format: no supported pydantic-ai records found"
    # Tool and traceback lookalikes without a header or banner give no tools or errors either.
    assert parse("▌ Called tool get_weather.\n" + TRACEBACK, ENGINE).events == []
    # A header alone is initialization only.
    assert types(parse(HEADER, ENGINE).events) == ["session.init"]


@pytest.mark.uas("T-UAS-041", "T-UAS-017")
def test_prose_that_mentions_pydantic_ai_is_not_detected() -> None:
    text = fixture("prose_mentioning_pydantic_ai_cli.txt")
    assert detect_delegate(text) is None
    with pytest.raises(UnrecognizedFormatError):
        detect_engine(text)
    assert parse(text, ENGINE).events == [] and parse(text, "custom").events == []


@pytest.mark.uas("T-UAS-041")
@pytest.mark.parametrize("name", CONSOLE_FIXTURES)
def test_custom_engine_delegates_pydantic_ai_console_output(name: str) -> None:
    text = fixture(name)
    assert detect_delegate(text) == ENGINE and detect_engine(text) == ENGINE
    direct = parse(text, ENGINE)
    delegated = parse(text, "custom")
    assert delegated.engine == "custom" and delegated.events == direct.events
    assert delegated.diagnostics == [f"custom: delegated to {ENGINE}"] + direct.diagnostics
    assert delegated.events[0]["data"]["sourceEngine"] == ENGINE


@pytest.mark.uas("T-UAS-041")
def test_pydantic_ai_is_the_last_delegate_so_it_steals_no_other_engines_input() -> None:
    # A Codex legacy log in which the agent ran clai stays Codex; so does an Aider log.
    codex_log = "[2025-10-02T00:00:00] exec clai hi\n" + HEADER + "[2025-10-02T00:00:01] tokens used: 5\n"
    assert detect_delegate(codex_log) == "codex-text" and detect_engine(codex_log) == "codex"
    aider_log = "Aider v0.86.2\nMain model: gpt-4o with diff edit format\n\n" + HEADER
    assert detect_delegate(aider_log) == "aider" and detect_engine(aider_log) == "aider"
    # Native canonical events in the output are the trace; the console text is not re-read.
    native = [{"type": "session.init", "data": {"sourceEngine": ENGINE, "model": "m"}},
              {"type": "assistant.message", "data": {"content": "hi"}}]
    mixed = HEADER + jsonl(*native) + "▌ Called tool x.\n"
    assert detect_delegate(mixed) == "native-or-claude"
    result = parse(mixed, ENGINE)
    assert result.events == native
    assert result.diagnostics == ["2 non-JSON text line(s) skipped (first at line 1)"]


@pytest.mark.uas("T-UAS-025", "T-UAS-026")
@pytest.mark.parametrize("name", CONSOLE_FIXTURES)
def test_deterministic_idempotent_and_pure(name: str) -> None:
    text = fixture(name)
    first, second = parse(text, ENGINE), parse(text, ENGINE)
    once = canonical_json(first.events)
    assert once == canonical_json(second.events) and first.diagnostics == second.diagnostics
    assert parse(once, ENGINE).events == first.events  # the canonical trace parses back to itself
    kept = copy.deepcopy(second.events)
    for event in first.events:
        event["data"].clear()
    assert parse(text, ENGINE).events == kept == second.events
    third = parse(text, ENGINE).events
    if "session.result" in types(third):
        datas(third, "session.error")[0]["message"] = "changed"
        assert datas(third, "session.result")[0]["errors"][0]["message"] != "changed"
