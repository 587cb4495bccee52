"""Essential runtime payloads of 4.7 (T-UAS-061, 070, 071, 072, 074, 075, 080, 081, 082)."""

from __future__ import annotations

import json

import pytest
from cli.real_command import run_bitexact
from uas_unify_helpers import ALL, FIXTURES, of_type, run, warnings, write_tree

from bitexact.sessions.unify.inventory import normalize_inventory
from bitexact.sessions.unify.observations import MODEL_ROUTING


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    records, _report, data = run(ALL, tmp_path_factory.mktemp("all"))
    return records, data


@pytest.mark.uas("T-UAS-061")
def test_mcp_rpc_keeps_ids_and_errors_but_no_arguments_or_bodies(merged) -> None:
    records, data = merged
    request = of_type(records, "mcp.rpc.request")[0]["data"]
    assert request == {"serverName": "github", "direction": "outbound", "rpcId": 7, "method": "tools/call",
                       "toolName": "search"}
    responses = [r["data"] for r in of_type(records, "mcp.rpc.response")]
    assert responses[0] == {"serverName": "github", "rpcId": 7, "durationMs": 0, "status": "ok"}  # zero kept
    assert responses[1] == {"serverName": "github", "rpcId": 8, "errorCode": -32000, "errorMessage": "rate limited",
                            "httpStatus": 429, "retryHint": "30s"}
    # A 429 diagnostic echoing a URL/query loses that message; an unparseable hint is dropped.
    assert responses[2] == {"serverName": "github", "rpcId": 9, "errorCode": -32000, "httpStatus": 429}
    assert b"secret query" not in data and b"big body" not in data and b'"ctx"' not in data


@pytest.mark.uas("T-UAS-061")
def test_gateway_diagnostics_and_unknown_kinds(merged) -> None:
    records, _ = merged
    assert of_type(records, "mcp.difc.filtered")[0]["data"]["reason"] == "secrecy"
    blocked = of_type(records, "mcp.guard.blocked")[0]["data"]
    assert blocked["status"] == "blocked" and "success" not in blocked
    other = of_type(records, "mcp.event")[0]["data"]
    assert other == {"event": "server_started", "level": "info", "message": "gateway up"}
    config = of_type(records, "mcp.configuration")[0]["data"]
    assert config == {"servers": [{"serverName": "github", "transport": "stdio", "required": True, "tools": ["search"]},
                                  {"serverName": "web", "transport": "http"}]}


@pytest.mark.uas("T-UAS-061")
def test_firewall_access_keeps_zero_and_operational_entries_without_host(merged) -> None:
    records, data = merged
    access = [r["data"] for r in of_type(records, "firewall.http_access")]
    assert access[1] == {"method": "NONE", "status": 0, "decision": "denied"}
    assert b"token=x" not in data  # URLs are not essential fields


@pytest.mark.uas("T-UAS-070", "T-UAS-071")
def test_token_usage_purpose_path_initiator_and_steering(merged) -> None:
    records, _ = merged
    usages = [r["data"] for r in of_type(records, "firewall.token_usage")]
    first = usages[0]
    assert (first["purpose"], first["path"], first["xInitiator"]) == ("agent", "/v1/messages", "agent")
    assert first["steering"] == {"type": "ai_credit", "threshold": 80}
    assert first["usage"] == {"inputTokens": 30, "outputTokens": 8, "cacheReadInputTokens": 6}
    assert "purpose" not in usages[1] and "steering" not in usages[1]  # absent/malformed: not invented
    steering = of_type(records, "firewall.steering")[0]["data"]
    assert steering["threshold"] == 90 and steering["requestId"] == "req-1"
    assert of_type(records, "usage.report")[0]["data"]["totalAic"] == 1.5  # ai_credits alias


@pytest.mark.uas("T-UAS-070")
def test_model_routing_ranked_choices_in_source_order_without_private_fields(merged) -> None:
    records, data = merged
    selection, request = (r["data"] for r in of_type(records, "firewall.model_routing"))
    assert selection["rankedChoices"] == [{"rank": 1, "model": "gpt-x", "effort": "high"},
                                          {"rank": 2, "id": "c2", "model": "claude-x", "effort": None}]
    assert selection["eligibleChoices"] == 2 and selection["catalogueOverlap"] == 0
    assert b"deadbeef" not in data and b"prediction" not in data
    assert not {"detail", "conversationSha256", "method", "pathname"} & set(selection)
    assert request["unavailable"] == ["effort"] and request["status"] == 502 and request["phase"] == "primary"
    assert MODEL_ROUTING(selection).data == selection  # projection is idempotent


@pytest.mark.uas("T-UAS-070")
def test_workflow_info_from_final_agent_copy_with_compact_routing(merged) -> None:
    records, _ = merged
    (info,) = of_type(records, "workflow.info")
    assert info["provenance"]["path"] == "agent/aw_info.json" and info["provenance"]["phase"] == "agent"
    data = info["data"]
    assert data["engineId"] == "claude" and "engine" not in data
    assert (data["model"], data["requestedModel"]) == ("claude-x", "claude-req")
    assert "detail" not in data["modelRouting"] and data["modelRouting"]["wireModel"] == "gpt-x"
    assert data["workflowId"] == data["workflowRef"] == "octo/repo/.github/workflows/w.yml@refs/heads/main"
    assert data["serverUrl"] == "https://github.com" and data["engineHarness"] == "copilot-cli"
    assert data["awContext"]["deliveries"] == [{"id": "d1", "item": "issue#1"}]  # raw payload omitted
    assert data["episode"]["parentRunAttempt"] == 1 and data["runAttempt"] == 2
    outcome = of_type(records, "model_routing.outcome")[0]["data"]
    assert "detail" not in outcome and outcome["failureCode"] is None


@pytest.mark.uas("T-UAS-070")
def test_requested_model_falls_back_to_model_and_absent_fields_stay_absent(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {"aw_info.json": {"model": "m1", "engine_id": "codex"}})
    (info,) = of_type(run(root, tmp_path)[0], "workflow.info")
    assert info["data"] == {"engineId": "codex", "model": "m1", "requestedModel": "m1"}


@pytest.mark.uas("T-UAS-072")
def test_skill_inventory_without_contents_and_advisory_conflicts(merged) -> None:
    records, data = merged
    skills = of_type(records, "skill.inventory")[0]["data"]["skills"]
    assert [s["name"] for s in skills] == ["deploy", "deploy", "review"]
    assert b"SKILL CONTENT" not in data
    (conflict,) = of_type(records, "skill.conflict")
    assert conflict["data"]["name"] == "deploy" and conflict["data"]["kind"] == "scope"
    assert {e["source"] for e in conflict["data"]["entries"]} == {"frontmatter-1", ".github/skills/deploy/SKILL.md"}
    assert conflict["provenance"]["phase"] == "activation"


@pytest.mark.uas("T-UAS-074")
def test_model_resolution_records_in_array_order(merged) -> None:
    records, _ = merged
    resolved = of_type(records, "model.resolution")
    assert [r["provenance"]["index"] for r in resolved] == [0, 1]
    assert resolved[1]["data"] == {"engine": "copilot", "role": "explorer", "configuredModel": "small",
                                   "resolvedModel": None, "provider": None, "status": "failed",
                                   "cause": "model_unavailable"}
    assert resolved[0]["provenance"]["component"] == "model_resolution"


@pytest.mark.uas("T-UAS-074")
@pytest.mark.parametrize("content", [
    "[]", '{"engine":"x"}', "[{broken",
    json.dumps([{"engine": "e", "role": "main", "configured_model": "m", "resolved_model": "r",
                 "provider": None, "status": "failed", "cause": "model_unavailable"}]),
    json.dumps([{"engine": "e", "role": "main", "configured_model": "m", "resolved_model": "r",
                 "provider": "p", "status": "resolved", "cause": None},
                {"engine": "", "role": "main", "configured_model": "m", "resolved_model": None,
                 "provider": None, "status": "exact", "cause": None}]),
])
def test_invalid_model_resolution_sources_warn_and_emit_nothing(tmp_path, content) -> None:
    root = write_tree(tmp_path / "r", {"agent/model-resolution.json": content})
    records, _r, _d = run(root, tmp_path)
    assert not of_type(records, "model.resolution")
    assert any(w["source"] == "model.resolution" for w in warnings(records))


@pytest.mark.uas("T-UAS-075")
def test_inventory_first_valid_copy_null_lists_absent_configured_copied(merged) -> None:
    records, data = merged
    (inventory,) = of_type(records, "model.inventory")
    assert inventory["provenance"]["path"] == "sandbox/firewall/awf-reflect.json"
    endpoints = inventory["data"]["endpoints"]
    assert endpoints[1] == {"provider": "anthropic", "configured": False}
    assert endpoints[0]["routingModels"][0]["contextWindowTokens"] == 128000
    assert b"secret.example" not in data and b'"price"' not in data
    assert [w["code"] for w in warnings(records) if w["source"] == "model.inventory.reflect"] == ["invalid_model_inventory"]
    assert normalize_inventory(inventory["data"]) == inventory["data"]  # idempotent


@pytest.mark.uas("T-UAS-075")
def test_inventory_inheritance_empty_lists_and_rejections() -> None:
    doc = {"routing_models": [{"model_id": "shared"}], "endpoints": [
        {"provider": "a", "models": []},
        {"provider": "b", "configured": True, "routing_models": None},
        {"provider": "c", "routing_models": [{"model_id": "own", "context_window_tokens": None}]}]}
    out = normalize_inventory(doc)
    assert out["endpoints"][0] == {"provider": "a", "models": [], "routingModels": [{"modelId": "shared"}]}
    assert out["endpoints"][1] == {"provider": "b", "configured": True}
    assert out["endpoints"][2] == {"provider": "c", "routingModels": [{"modelId": "own"}]}
    from bitexact.sessions.unify.inventory import InvalidInventory
    for bad in ({"endpoints": {"a": 1}}, {"endpoints": [{"provider": " "}]}, {"endpoints": [{"provider": "a", "models": None}]},
                {"endpoints": [{"provider": "a", "configured": "yes"}]},
                {"endpoints": [{"provider": "a", "routing_models": [{"model_id": "m", "supported_reasoning_efforts": ["-x"]}]}]},
                {"endpoints": [{"provider": "a", "routing_models": [{"model_id": "m", "context_window_tokens": 0}]}]}):
        with pytest.raises(InvalidInventory):
            normalize_inventory(bad)


@pytest.mark.uas("T-UAS-080")
def test_model_config_one_per_run_with_configured_policy(merged) -> None:
    records, _ = merged
    (config,) = of_type(records, "model.config")
    assert config["data"] == {"routing": {"enabled": True, "goal": "cost", "mode": "auto",
                                          "allowedModels": ["gpt-x", "claude-x"]},
                              "models": {"allowed": [], "blocked": ["bad-model"]}, "maxAiCredits": 1000,
                              "maxAiCreditsSource": "default", "baselineModel": "claude-x"}
    assert config["provenance"]["component"] == "workflow" and config["provenance"]["path"] == "agent/aw_info.json"


@pytest.mark.uas("T-UAS-080")
def test_runtime_model_config_preferred_and_invalid_config_warns(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {
        "agent/aw_info.json": {"model_config": {"routing": {"enabled": True}}},
        "runtime/aw_info.json": {"model_config": {"routing": {"enabled": False}}},
    })
    (config,) = of_type(run(root, tmp_path)[0], "model.config")
    assert config["data"] == {"routing": {"enabled": False}} and config["provenance"]["path"] == "runtime/aw_info.json"
    root = write_tree(tmp_path / "bad", {"agent/aw_info.json": {"model_config": {"routing": {"enabled": "yes"}}}})
    records = run(root, tmp_path)[0]
    assert not of_type(records, "model.config")
    assert "invalid_model_config" in [w["code"] for w in warnings(records)]
    root = write_tree(tmp_path / "none", {"agent/aw_info.json": {"engine_id": "x"}})
    assert not of_type(run(root, tmp_path)[0], "model.config")


@pytest.mark.uas("T-UAS-081")
def test_baseline_estimate_attribution_without_pricing_is_incomplete(merged) -> None:
    records, _ = merged
    (estimate,) = of_type(records, "model.baseline_estimate")
    assert estimate["data"] == {"estimated": True, "baselineModel": "claude-x", "mainRequests": 1,
                                "pricedRequests": 0, "unpricedRequests": 1, "unattributedRequests": 1,
                                "complete": False}
    assert "aic" not in estimate["data"]  # unknown pricing is never zero cost
    assert estimate["provenance"]["component"] == "collector"


@pytest.mark.uas("T-UAS-081")
def test_baseline_estimate_with_pricing_and_unrouted_runs(tmp_path) -> None:
    def pricing(model, usage):
        return 0.25 if model == "base" else None
    files = {
        "agent/aw_info.json": {"model_config": {"routing": {"enabled": True}, "baseline_model": "base"},
                               "sub_agent_models": ["sub-m"]},
        "sandbox/firewall/logs/token-usage.jsonl": [
            {"ts": 1, "request_id": "r1", "usage": {"input_tokens": 1, "output_tokens": 1}},
            {"ts": 2, "request_id": "r1", "usage": {"input_tokens": 1, "output_tokens": 1}},
            {"ts": 3, "request_id": "r2", "usage": {"input_tokens": 1, "output_tokens": 1}}],
        "sandbox/firewall/logs/model-routing.jsonl": [
            {"ts": 1, "request_id": "r1", "routed": "as_selected", "requested_model": "main-m"},
            {"ts": 2, "request_id": "r2", "routed": "deviated", "requested_model": "sub-m"}],
    }
    records = run(write_tree(tmp_path / "r", files), tmp_path, pricing=pricing)[0]
    (estimate,) = of_type(records, "model.baseline_estimate")
    assert estimate["data"]["mainRequests"] == 1 and estimate["data"]["aic"] == 0.25
    assert estimate["data"]["complete"] is True and estimate["data"]["unattributedRequests"] == 0
    files["agent/aw_info.json"] = {"model_config": {"routing": {"enabled": False}}}
    assert not of_type(run(write_tree(tmp_path / "u", files), tmp_path)[0], "model.baseline_estimate")


@pytest.mark.uas("T-UAS-082")
def test_upstream_errors_identifier_only(merged) -> None:
    records, data = merged
    first, second = (r["data"] for r in of_type(records, "firewall.upstream_error"))
    assert first == {"requestId": "req-2", "provider": "openai", "model": "gpt-x", "httpStatus": 400,
                     "errorCode": "invalid_request", "errorType": "invalid_request_error"}
    assert second == {"requestId": "req-4", "provider": "openai", "httpStatus": 500}  # absent code stays absent
    assert b"secret body" not in data and b"response_body" not in data
    routing_request = of_type(records, "firewall.model_routing")[1]["data"]
    assert routing_request["errorCode"] == "overloaded" and "errorType" not in routing_request
    assert routing_request["errorSource"] == "upstream"


@pytest.mark.uas("T-UAS-061")
def test_safe_outputs_requests_are_identities_not_results(merged) -> None:
    records, data = merged
    requests = [r["data"] for r in of_type(records, "safe_output.request")]
    assert requests == [{"operation": "create_issue", "repository": "octo/repo"}, {"operation": "add_comment", "number": 5}]
    assert b"Secret title" not in data and b"Secret body" not in data
    assert of_type(records, "safe_output.result")[0]["data"]["number"] == 12
    error = of_type(records, "safe_output.error")[0]["data"]
    assert error["errors"] == [{"type": "add_comment", "code": "E403", "message": "forbidden"}]


@pytest.mark.uas("T-UAS-061")
def test_github_rate_limit_plugins_guardrail_prompts_execution(merged) -> None:
    records, data = merged
    (limit,) = of_type(records, "github_api.rate_limit")
    assert limit["data"]["credentialSource"] == "github_token" and "token" not in limit["data"]
    assert limit["provenance"]["path"] == "github_rate_limits.jsonl"
    assert of_type(records, "plugin.installation")[0]["data"]["status"] == "installed"
    assert of_type(records, "plugin.event")[0]["data"]["status"] == "failed"
    assert of_type(records, "guardrail.daily_aic")[0]["data"] == {"status": "allowed", "exceeded": False, "total": 0,
                                                                  "estimated": 12.5, "threshold": 100}
    system = of_type(records, "prompt.system")[0]
    assert system["data"]["content"] == "You are a helpful agent.\n  keep  spaces  \n"
    assert "timestamp" not in system and system["provenance"]["phase"] == "activation"
    assert of_type(records, "execution.result")[0]["data"]["exitCode"] == 0


ESCAPED = FIXTURES / "job_results_escaped_secrets"
"""GH_AW_JOB_RESULTS (raw text, as the runner sets it) whose job IDs are a GitHub token with its first letter
written as a JSON escape (``\\u0067hp_``) and the mask registered in ``artifacts/agent-stdio.log`` written with
escaped ``"`` and ``/``; GH_AW_JOB_DURATIONS keys the token's duration by the ID as decoded."""
TOKEN = "ghp_A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4ZZZZ"
MASK = 's3cr"et-v/alue'


def _escaped_env(results: str | None = None) -> dict[str, str]:
    return {"GH_AW_JOB_RESULTS": results if results is not None else (ESCAPED / "GH_AW_JOB_RESULTS").read_text("utf-8"),
            "GH_AW_JOB_DURATIONS": (ESCAPED / "GH_AW_JOB_DURATIONS").read_text("utf-8")}


@pytest.mark.uas("T-UAS-060", "T-UAS-061")
def test_job_results_are_redacted_after_their_json_escapes_are_decoded(tmp_path) -> None:
    """T-UAS-060: "Redaction MUST process decoded string values". GH_AW_JOB_RESULTS was redacted as raw
    text, where neither ``\\u0067hp_...`` nor ``s3cr\\"et-v\\/alue`` is the needle, then decoded: both came
    through whole as job IDs. The records keep the form of 4.7: jobId, result, durationMs, in job-ID order."""
    fixture = (ESCAPED / "GH_AW_JOB_RESULTS").read_text("utf-8")
    assert TOKEN not in fixture and MASK not in fixture  # only their escaped spellings are in the raw text
    records, _, written = run(ESCAPED / "artifacts", tmp_path, env=_escaped_env())
    assert TOKEN.encode() not in written and MASK.encode() not in written
    assert [j["data"] for j in of_type(records, "workflow.job_result")] == [
        {"jobId": "***", "result": "success", "durationMs": 1200},  # the token: its duration found by its ID
        {"jobId": "***#2", "result": "skipped"},  # the mask: a second job masked alike keeps its own ID
        {"jobId": "build", "result": "failure", "durationMs": 5000},  # outputs are never copied
    ]
    assert [j["provenance"]["index"] for j in of_type(records, "workflow.job_result")] == [0, 1, 2]


@pytest.mark.uas("T-UAS-060", "T-UAS-061")
def test_job_results_in_the_real_command_s_environment_are_redacted_decoded(tmp_path) -> None:
    out = tmp_path / "aw_session.jsonl"
    done = run_bitexact(tmp_path / "home", "sessions", "unify", str(ESCAPED / "artifacts"), "-o", str(out),
                        **_escaped_env())
    assert done.returncode == 0, done.stderr
    written = out.read_text("utf-8")
    assert TOKEN not in written and MASK not in written and '"jobId":"***"' in written
    assert TOKEN not in done.stdout + done.stderr


@pytest.mark.uas("T-UAS-060", "T-UAS-061")
def test_job_results_with_a_shell_escape_json_does_not_decode_are_refused_whole(tmp_path) -> None:
    """A backslash escape JSON does not have (a shell's ``\\x67``) leaves no text to redact or to leak: the
    variable is not JSON, no job result is recorded, and the warning quotes none of it."""
    raw = '{"\\x67hp_A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4ZZZZ":{"result":"success"}}'
    records, _, written = run(ESCAPED / "artifacts", tmp_path, env=_escaped_env(raw))
    assert of_type(records, "workflow.job_result") == [] and b"A1b2C3d4" not in written
    assert [w["message"] for w in warnings(records) if w["code"] == "malformed_job_results"] == [
        "GH_AW_JOB_RESULTS is not valid JSON; no job results"]


@pytest.mark.uas("T-UAS-061")
def test_job_results_from_conclusion_environment(tmp_path) -> None:
    (tmp_path / "r").mkdir()
    env = {"GH_AW_JOB_RESULTS": json.dumps({"build": {"result": "success", "outputs": {"secret": "x"}},
                                             "agent": {"result": "failure"}, "lint": {"result": "skipped"},
                                             "weird": {"result": "maybe"}}),
           "GH_AW_JOB_DURATIONS": json.dumps({"build": 0, "agent": 1500, "lint": 10})}
    records = run(tmp_path / "r", tmp_path, env=env)[0]
    jobs = of_type(records, "workflow.job_result")
    assert [j["data"] for j in jobs] == [{"jobId": "agent", "result": "failure", "durationMs": 1500},
                                         {"jobId": "build", "result": "success", "durationMs": 0},
                                         {"jobId": "lint", "result": "skipped"}]
    assert all(j["provenance"] == {"component": "workflow", "phase": "conclusion", "path": "usage/aw_session.jsonl",
                                   "index": i} for i, j in enumerate(jobs))
    assert "malformed_job_result" in [w["code"] for w in warnings(records)]
