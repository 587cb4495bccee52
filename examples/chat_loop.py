"""An OpenAI-compatible chat loop, recorded: every request and streamed reply is an http_call.

    python examples/chat_loop.py            # records into BITEXACT_HOME (default ~/.bitexact)
    bitexact show <run id>                   # what was recorded

Point BASE_URL (and OPENAI_API_KEY) at a real OpenAI-compatible endpoint to
record a real model; by default a local stand-in server answers.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bitexact  # noqa: E402
from local_llm import local_llm  # noqa: E402


def chat(client: httpx.Client, base_url: str, messages: list[dict[str, str]]) -> str:
    """One streamed turn: the reply reaches us chunk by chunk; BitExact records it once, whole."""
    words: list[str] = []
    with client.stream("POST", f"{base_url}/chat/completions",
                       json={"model": os.environ.get("MODEL", "local-echo-1"), "messages": messages, "stream": True},
                       headers={"authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', 'sk-local')}"}) as reply:
        reply.raise_for_status()
        for line in reply.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                words.append(json.loads(line[6:])["choices"][0]["delta"].get("content") or "")
    return "".join(words)


def main() -> str:
    prompts = ["Summarise claim CLM-4471.", "Is escape of water covered?", "Thanks."]
    with local_llm() as local_url:
        base_url = os.environ.get("BASE_URL", local_url)
        with bitexact.run(name="chat-loop") as r, bitexact.wrap(httpx.Client(timeout=60)) as client:
            r.identity(principal="svc:claims-chat", interaction_mode="interactive")
            messages: list[dict[str, str]] = [{"role": "system", "content": "You are a claims assistant."}]
            for prompt in prompts:
                messages.append({"role": "user", "content": prompt})
                answer = chat(client, base_url, messages)
                messages.append({"role": "assistant", "content": answer})
                print(f"> {prompt}\n{answer}")
    print(f"recorded {r.run_id}: {r.steps} entries, sealed={r.sealed}")
    return str(r.run_id)


if __name__ == "__main__":
    main()
