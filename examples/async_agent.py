"""An async agent, recorded: concurrent tool calls and model calls in one run.

    python examples/async_agent.py

Tasks started inside ``async with bitexact.run()`` record into it; each
async tool's call is one tool_call, and the HTTP calls made inside a tool
carry the tool's name as their ctx.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bitexact  # noqa: E402
from local_llm import local_llm  # noqa: E402


async def main_async() -> str:
    with local_llm() as base_url:
        async with bitexact.run(name="async-agent") as r, bitexact.wrap(
                httpx.AsyncClient(base_url=base_url, timeout=60)) as client:

            @bitexact.record_tool
            async def summarise(claim: str) -> str:
                reply = await client.post("/chat/completions", json={
                    "model": "local-echo-1", "messages": [{"role": "user", "content": f"Summarise {claim}"}]})
                return str(reply.json()["choices"][0]["message"]["content"])

            summaries = await asyncio.gather(*(summarise(f"CLM-{n}") for n in range(4471, 4475)))
            r.marker(f"{len(summaries)} claims summarised")
            for summary in summaries:
                print(summary)
    print(f"recorded {r.run_id}: {r.steps} entries, sealed={r.sealed}")
    return str(r.run_id)


def main() -> str:
    return asyncio.run(main_async())


if __name__ == "__main__":
    main()
