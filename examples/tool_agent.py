"""A tool-using agent, recorded: the model asks for a tool, the agent runs it, a person signs off.

    python examples/tool_agent.py

Shows identity, context, @bitexact.record_tool (with a custody hint), the
model's HTTP calls, a policy check and a human decision bound to the step
it reviewed. With no capture key (`bitexact capture keygen -o FILE`, then
BITEXACT_CAPTURE_KEY=FILE), the hash-only holder is committed with no key
and the run declares `capture_key_unavailable`: never stored as sent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bitexact  # noqa: E402
from local_llm import local_llm  # noqa: E402

TOOLS = [{"type": "function", "function": {
    "name": "lookup_policy", "description": "Look up an insurance policy",
    "parameters": {"type": "object", "properties": {"policy": {"type": "string"}}, "required": ["policy"]}}}]


@bitexact.record_tool(custody={"result.holder": "hash-only"})
def lookup_policy(policy: str) -> dict[str, Any]:
    """The agent's tool: a policy lookup (a local table here)."""
    return {"policy": policy, "holder": "A. Jones", "escape_of_water": True, "excess_eur": 350}


def payout_within_limit(amount: int) -> str:
    return "pass" if amount <= 5000 else "held"


def main() -> str:
    with local_llm() as base_url, bitexact.run(name="tool-agent") as r:
        client = bitexact.wrap(httpx.Client(base_url=base_url, timeout=60))
        r.identity(principal="svc:claims-triage", agent_id="agent:triage", on_behalf_of="user:7f3a9c",
                   on_behalf_of_type="human", interaction_mode="autonomous", environment="example")
        r.context("coverage-rules", "Escape of water is covered; the excess is EUR 350.", source="handbook/v12")
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Check policy HX-20931 for water damage."}]
        first = client.post("/chat/completions", json={"model": "local-echo-1", "messages": messages,
                                                       "tools": TOOLS}).json()
        call = first["choices"][0]["message"]["tool_calls"][0]
        result = lookup_policy(**json.loads(call["function"]["arguments"]))
        messages += [first["choices"][0]["message"],
                     {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}]
        final = client.post("/chat/completions", json={"model": "local-echo-1", "messages": messages}).json()
        answer = final["choices"][0]["message"]["content"]
        proposal = r.record_tool_call("propose_payout", args=[3840 - result["excess_eur"]], result="approve")
        r.check("payout-limit", payout_within_limit, 3490)
        r.human_decision("adjuster:m.okafor", "approve", reason="within single-adjuster limit", binds_step=proposal)
        client.close()
        print(answer)
    print(f"recorded {r.run_id}: {r.steps} entries, sealed={r.sealed}")
    return str(r.run_id)


if __name__ == "__main__":
    main()
