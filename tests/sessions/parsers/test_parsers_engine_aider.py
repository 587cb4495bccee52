"""Aider named plaintext sample adapter (UAS 7.6, 9.4 Aider row; T-UAS-041 detection).

The console fixtures are aider-chat 0.86.2 stdout captured from a pipe
(``--yes-always --message ...``) against a local OpenAI-compatible stub, with
the stub's lines about unreachable model-metadata downloads removed.
"""

from __future__ import annotations

import copy

import pytest

from bitexact.sessions import UnrecognizedFormatError, canonical_json, detect_engine, parse
from bitexact.sessions.parsers.custom import detect_delegate
from uas_parser_helpers import datas, fixture_text, jsonl, types

INIT = {
    "sourceEngine": "aider", "model": "gpt-4o", "version": "0.86.2", "editFormat": "diff",
    "weakModel": "gpt-4o-mini", "gitRepo": ".git with 1 files", "repoMap": "using 4096 tokens, auto refresh",
    "chatFiles": ["hello.py"],
}
REPLY = (
    "I'll add a `greet` function to hello.py.\n\nhello.py\n```python\n<<<<<<< SEARCH\n=======\n"
    "def greet(name):\n    return f\"Hello, {name}!\"\n>>>>>>> REPLACE\n```"
)
RATE_LIMIT_TEXT = (
    "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for\n"
    "gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 30000,\n"
    "Requested 1200. Please try again in 2.4s. Visit \n"
    "https://platform.openai.com/account/rate-limits to learn more."
)
RATE_LIMIT_DESCRIPTION = "The API provider has rate limited you. Try again later or check your quotas."
STARTUP = (
    "\nAider v0.86.2\nMain model: gpt-4o with diff edit format\nWeak model: gpt-4o-mini\n"
    "Git repo: .git with 1 files\nRepo-map: using 4096 tokens, auto refresh\nAdded hello.py to the chat.\n\n"
)
CONSOLE_FIXTURES = [
    "authentication_error_not_retried.txt",
    "edit_format_failure_then_reflected_reply.txt",
    "rate_limit_nine_startup_error_blocks.txt",
    "rate_limit_retries_then_reply.txt",
    "success_no_stream_edit_and_commit.txt",
    "success_pretty_piped_stream.txt",
]


@pytest.mark.uas("T-UAS-009", "T-UAS-011", "T-UAS-012", "T-UAS-013", "T-UAS-019")
def test_successful_run_maps_startup_reply_usage_prose_edit_and_commit() -> None:
    result = parse(fixture_text("aider", "success_no_stream_edit_and_commit.txt"), "aider")
    assert result.engine == "aider"
    assert result.events == [
        {"type": "session.init", "data": INIT},
        {"type": "assistant.message", "data": {"content": REPLY}},
        {"type": "session.info", "data": {"sourceType": "usage_report",
                                          "content": "Tokens: 2.3k sent, 67 received. Cost: $0.0065 message, $0.0065 session."}},
        {"type": "tool.execution_start", "data": {"toolName": "edit", "path": "hello.py"}},
        {"type": "tool.execution_complete", "data": {"toolName": "edit", "success": True, "path": "hello.py"}},
        {"type": "tool.execution_start", "data": {"toolName": "commit"}},
        {"type": "tool.execution_complete", "data": {"toolName": "commit", "success": True, "commitHash": "bbf320b",
                                                     "commitMessage": "feat: Add greet function"}},
    ]
    # The pre-banner gitignore notices are startup diagnostics: omitted, and said so.
    assert result.diagnostics == ["2 line(s) before the Aider startup banner omitted (startup diagnostics)"]


@pytest.mark.uas("T-UAS-005", "T-UAS-015", "T-UAS-031")
def test_rounded_token_and_cost_prose_never_becomes_accounting() -> None:
    events = parse(fixture_text("aider", "success_no_stream_edit_and_commit.txt"), "aider").events
    assert "session.result" not in types(events)  # a normal exit is not terminal success
    for event in events:
        assert "usage" not in event["data"] and "totalCostUsd" not in event["data"]
    # Reports with cache counts put the cost on its own line; rich wraps long ones at 80 columns.
    text = STARTUP + "Done.\n\nTokens: 12k sent, 3.1k cache write, 8.0k cache hit, 512 received.\nCost: $0.02 message, $0.02 session.\n"
    wrapped = STARTUP + "Done.\n\nTokens: 12k sent, 8.0k cache hit, 512 received. Cost: $0.0065 message, $0.0065 \nsession.\n"
    for source, content in [
        (text, "Tokens: 12k sent, 3.1k cache write, 8.0k cache hit, 512 received.\nCost: $0.02 message, $0.02 session."),
        (wrapped, "Tokens: 12k sent, 8.0k cache hit, 512 received. Cost: $0.0065 message, $0.0065 \nsession."),
    ]:
        result = parse(source, "aider")
        assert types(result.events) == ["session.init", "assistant.message", "session.info"]
        assert datas(result.events, "assistant.message") == [{"content": "Done."}]
        assert datas(result.events, "session.info") == [{"sourceType": "usage_report", "content": content}]
        assert not any("not attributed" in note for note in result.diagnostics)


@pytest.mark.uas("T-UAS-011", "T-UAS-015")
def test_rate_limit_run_is_nine_startup_error_blocks_and_no_conversation() -> None:
    result = parse(fixture_text("aider", "rate_limit_nine_startup_error_blocks.txt"), "aider")
    events = result.events
    assert types(events) == ["session.init"] + ["session.error"] * 9 + ["session.result"]
    errors = datas(events, "session.error")
    delays = [0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    for error, delay in zip(errors, delays + [None]):
        expected = {"message": RATE_LIMIT_TEXT, "errorType": "RateLimitError", "description": RATE_LIMIT_DESCRIPTION}
        if delay is not None:
            expected["retryDelaySeconds"] = delay
        assert error == expected
    # The final block is not retried; the link Aider offers to open after it is not content.
    assert "retryDelaySeconds" not in errors[-1]
    assert events[-1] == {"type": "session.result", "data": {"errors": errors}}
    assert not {"assistant.message", "tool.execution_start", "session.info"} & set(types(events))
    assert not any("not attributed" in note for note in result.diagnostics)


@pytest.mark.uas("T-UAS-011", "T-UAS-015", "T-UAS-019")
def test_retried_rate_limit_then_reply_keeps_errors_apart_from_the_answer() -> None:
    events = parse(fixture_text("aider", "rate_limit_retries_then_reply.txt"), "aider").events
    assert types(events) == [
        "session.init", "session.error", "session.error", "assistant.message", "session.info",
        "tool.execution_start", "tool.execution_complete", "tool.execution_start", "tool.execution_complete",
        "session.result",
    ]
    assert datas(events, "assistant.message") == [{"content": REPLY}]
    assert [e["retryDelaySeconds"] for e in datas(events, "session.error")] == [0.2, 0.5]
    assert "status" not in events[-1]["data"] and len(events[-1]["data"]["errors"]) == 2


@pytest.mark.uas("T-UAS-015")
def test_authentication_error_is_a_session_error_with_aiders_explanation() -> None:
    events = parse(fixture_text("aider", "authentication_error_not_retried.txt"), "aider").events
    assert types(events) == ["session.init", "session.error", "session.result"]
    assert datas(events, "session.error") == [{
        "message": "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect \n"
                   "API key provided: sk-test. You can find your API key at \n"
                   "https://platform.openai.com/account/api-keys.",
        "errorType": "AuthenticationError",
        "description": "The API provider is not able to authenticate you. Check your API key.",
    }]


@pytest.mark.uas("T-UAS-014", "T-UAS-015", "T-UAS-011")
def test_edit_format_failure_is_a_failed_edit_and_the_mixed_reflection_is_not_claimed() -> None:
    result = parse(fixture_text("aider", "edit_format_failure_then_reflected_reply.txt"), "aider")
    events = result.events
    assert types(events) == [
        "session.init", "assistant.message", "session.info", "tool.execution_start", "tool.execution_complete",
        "session.info", "tool.execution_start", "tool.execution_complete", "tool.execution_start",
        "tool.execution_complete",
    ]
    assert datas(events, "tool.execution_complete")[0] == {
        "toolName": "edit", "success": False, "error": "The LLM did not conform to the edit format.",
    }
    # The failure details run straight into the reflected reply: neither is claimed as an answer.
    assert len(datas(events, "assistant.message")) == 1
    assert all("SearchReplaceNoExactMatch" not in e["data"].get("content", "") for e in events)
    assert "19 Aider output line(s) not attributed to a reply (first at line 29); not claimed as assistant text" in result.diagnostics
    assert "session.result" not in types(events)  # a tool failure is not a session error


@pytest.mark.uas("T-UAS-020", "T-UAS-011")
def test_pretty_console_reply_is_kept_as_printed() -> None:
    events = parse(fixture_text("aider", "success_pretty_piped_stream.txt"), "aider").events
    (reply,) = datas(events, "assistant.message")
    lines = reply["content"].split("\n")
    assert lines[0] == "I'll add a greet function to hello.py." + " " * 42  # rich pads to the console width
    assert lines[-1] == ">>>>>>> REPLACE" + " " * 65
    assert types(events)[0] == "session.init" and datas(events, "session.init")[0]["version"] == "0.86.2"


@pytest.mark.uas("T-UAS-014", "T-UAS-012")
def test_other_tool_lines_state_only_what_they_say() -> None:
    text = STARTUP + (
        "Done.\n\nTokens: 1.0k sent, 10 received.\nDid not apply edit to a.py (--dry-run)\n"
        "Unable to commit: nothing added\n"
        "Commit 0123abc feat: Add a greeting helper that returns a personalised message for the \nuser\n"
    )
    events = parse(text, "aider").events
    done = datas(events, "tool.execution_complete")
    assert done[0] == {"toolName": "edit", "path": "a.py", "dryRun": True}  # no outcome stated
    assert done[1] == {"toolName": "commit", "success": False, "error": "nothing added"}
    assert done[2]["commitMessage"] == "feat: Add a greeting helper that returns a personalised message for the user"
    assert all("toolCallId" not in d and "input" not in d and "output" not in d for d in done)


@pytest.mark.uas("T-UAS-015", "T-UAS-011")
def test_empty_response_warning_is_not_an_answer_nor_a_result_error() -> None:
    text = STARTUP + "Empty response received from LLM. Check your provider account?\n\nTokens: 1.0k sent, 0 received.\n"
    events = parse(text, "aider").events
    assert types(events) == ["session.init", "session.error", "session.info"]
    assert datas(events, "session.error") == [
        {"message": "Empty response received from LLM. Check your provider account?", "severity": "warning"}
    ]


@pytest.mark.uas("T-UAS-017", "T-UAS-005")
def test_quiet_output_supplies_nothing() -> None:
    text = fixture_text("aider", "quiet_answer_without_startup_block.txt")
    result = parse(text, "aider")
    assert result.events == []
    assert result.diagnostics[-1] == "unrecognized format: no supported aider records found"
    # Framing lookalikes without the startup block give no tools, accounting or errors either.
    lookalike = "Tokens: 2.3k sent, 67 received.\nApplied edit to hello.py\nCommit 0123abc x\n" + RATE_LIMIT_TEXT + "\n"
    assert parse(lookalike, "aider").events == []
    # A startup block alone is initialization only: no answer, result or accounting.
    assert types(parse(STARTUP, "aider").events) == ["session.init"]


@pytest.mark.uas("T-UAS-041", "T-UAS-017")
def test_prose_that_mentions_aider_is_not_detected() -> None:
    text = fixture_text("aider", "prose_mentioning_aider_version.txt")
    assert detect_delegate(text) is None
    with pytest.raises(UnrecognizedFormatError):
        detect_engine(text)
    assert parse(text, "aider").events == [] and parse(text, "custom").events == []


@pytest.mark.uas("T-UAS-041")
@pytest.mark.parametrize("name", CONSOLE_FIXTURES)
def test_custom_engine_delegates_aider_console_output(name: str) -> None:
    text = fixture_text("aider", name)
    assert detect_delegate(text) == "aider" and detect_engine(text) == "aider"
    direct = parse(text, "aider")
    delegated = parse(text, "custom")
    assert delegated.engine == "custom" and delegated.events == direct.events
    assert delegated.diagnostics == ["custom: delegated to aider"] + direct.diagnostics
    assert delegated.events[0]["data"]["sourceEngine"] == "aider"


@pytest.mark.uas("T-UAS-041")
def test_aider_is_the_last_delegate_so_it_steals_no_other_engines_input() -> None:
    # A Codex legacy log in which the agent ran Aider stays Codex.
    codex_log = "[2025-10-02T00:00:00] exec aider --message hi\n" + STARTUP + "[2025-10-02T00:00:01] tokens used: 5\n"
    assert detect_delegate(codex_log) == "codex-text" and detect_engine(codex_log) == "codex"
    # Native canonical events in Aider's stdout are the trace (modern runs); the console text is not re-read.
    native = [{"type": "session.init", "data": {"sourceEngine": "aider", "model": "m"}},
              {"type": "assistant.message", "data": {"content": "hi"}}]
    mixed = STARTUP + jsonl(*native) + "Tokens: 1.0k sent, 10 received.\n"
    assert detect_delegate(mixed) == "native-or-claude"
    result = parse(mixed, "aider")
    assert result.events == native
    assert result.diagnostics == ["7 non-JSON text line(s) skipped (first at line 2)"]


@pytest.mark.uas("T-UAS-025", "T-UAS-026")
@pytest.mark.parametrize("name", CONSOLE_FIXTURES)
def test_deterministic_idempotent_and_pure(name: str) -> None:
    text = fixture_text("aider", name)
    first, second = parse(text, "aider"), parse(text, "aider")
    once = canonical_json(first.events)
    assert once == canonical_json(second.events) and first.diagnostics == second.diagnostics
    assert parse(once, "aider").events == first.events  # the canonical trace parses back to itself
    # Outputs share no state: editing one parse's events changes neither a later parse nor the other output.
    kept = copy.deepcopy(second.events)
    for event in first.events:
        event["data"].clear()
    assert parse(text, "aider").events == kept == second.events
    # Result errors are copies: changing one observation cannot reach the other.
    third = parse(text, "aider").events
    if "session.result" in types(third):
        datas(third, "session.error")[0]["message"] = "changed"
        assert datas(third, "session.result")[0]["errors"][0]["message"] != "changed"


@pytest.mark.uas("T-UAS-016")
def test_crlf_line_endings_give_the_same_trace() -> None:
    text = fixture_text("aider", "success_no_stream_edit_and_commit.txt")
    assert parse(text.replace("\n", "\r\n"), "aider").events == parse(text, "aider").events
