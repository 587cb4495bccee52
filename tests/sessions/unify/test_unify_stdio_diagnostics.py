"""Stdio engine-diagnostic classification for ``agent.execution`` (T-UAS-067)."""

from __future__ import annotations

import pytest

from bitexact.sessions.unify.execution import ExecutionEvidence, add_stdio

from uas_unify_helpers import of_type, run, write_tree

pytestmark = pytest.mark.uas("T-UAS-067")


def _aggregate(text: str):
    evidence = ExecutionEvidence()
    add_stdio(evidence, text, "agent-stdio.log")
    result = evidence.aggregate()
    return None if result is None else result[0]


def test_claude_api_error_gives_code_type_and_category() -> None:
    data = _aggregate('API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"x"}}\n')
    # No 4.8 classification corresponds to a provider rate limit: code and type only.
    assert data == {"categories": [], "errorCodes": [429], "errorTypes": ["rate_limit_error"]}


def test_copilot_and_codex_prefixes_use_the_4_8_vocabulary() -> None:
    data = _aggregate("Error: CAPIError: 503 Service Unavailable\n"
                      "Error: CAPIError: 429 monthly quota exhausted\n"
                      "ERROR: stream error: status 502 Bad Gateway\n"
                      "[ERROR] request failed with status code 400: prompt is too long\n"
                      "Error: 401 Unauthorized\n")
    assert data["errorCodes"] == [400, 401, 429, 502, 503]
    assert data["categories"] == ["authentication_failed", "capi_quota_exceeded_error", "capi_server_error",
                                  "http_400_response_error"]


def test_fatal_signal_is_an_error_type() -> None:
    data = _aggregate("[harness] agent terminated by signal SIGKILL\ndone: exitCode=137\n")
    assert data == {"categories": [], "errorCodes": [], "errorTypes": ["SIGKILL"], "exitCode": 137}


@pytest.mark.parametrize("text", [
    "  API Error: 429 indented echo of child output\n",
    "```\nAPI Error: 401 quoted in a fence\n```\n",
    "assistant: the log said API Error: 500 earlier\n",
    "> Error: 503 quoted reply\n",
    "│ ERROR: status 502 from a boxed tool-output block\n",
])
def test_quoted_indented_and_labeled_text_does_not_classify(text) -> None:
    assert _aggregate(text) is None


def test_repeated_diagnostics_do_not_duplicate(tmp_path) -> None:
    line = 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}\n'
    root = write_tree(tmp_path / "root", {"agent-stdio.log": line * 3 + "done: exitCode=1\n"})
    records, _, _ = run(root, tmp_path)
    (execution,) = of_type(records, "agent.execution")
    assert execution["data"] == {"categories": [], "errorCodes": [429],
                                 "errorTypes": ["rate_limit_error"], "exitCode": 1}
    assert execution["provenance"]["component"] == "execution"
