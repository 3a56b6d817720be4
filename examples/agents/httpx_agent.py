"""A small agent of your own on httpx, against any OpenAI-compatible chat endpoint (docs/agents.md).

Run it as a cell's assistant:

    AGENT_BASE_URL=http://127.0.0.1:8000/v1 AGENT_MODEL=qwen2.5 \\
      assistant-eval run --world W --model agent:httpx_agent:make_agent --agent-path examples/agents

It keeps its own conversation across the user's turns, sends the level's instructions as its
system prompt and the cell's tools as function tools, and calls each tool through
``cell.call_tool``. Its model calls are its own: ``usage()`` reports their tokens.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx


class HttpxAgent:
    def __init__(self, cell: Any, base_url: str, model: str, key: str | None = None) -> None:
        self.cell = cell
        self.model = model
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self.client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=300)
        # A resumed cell gives a fresh agent the turns it missed (cell.history).
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": cell.instructions}, *cell.history]
        self.tools = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                        "parameters": t["parameters"]}} for t in cell.tools]
        self.tokens = {"input_tokens": 0, "output_tokens": 0}

    def turn(self, message: str) -> str:
        self.messages.append({"role": "user", "content": message})
        for _ in range(self.cell.limits.max_rounds):
            body = {"model": self.model, "messages": self.messages, "tools": self.tools,
                    "max_tokens": self.cell.limits.max_output_tokens}
            response = self.client.post("/chat/completions", json=body)
            response.raise_for_status()
            data = response.json()
            usage = data.get("usage") or {}
            self.tokens["input_tokens"] += int(usage.get("prompt_tokens") or 0)
            self.tokens["output_tokens"] += int(usage.get("completion_tokens") or 0)
            answer = data["choices"][0]["message"]
            calls = answer.get("tool_calls") or []
            self.messages.append({"role": "assistant", "content": answer.get("content") or "",
                                  **({"tool_calls": calls} if calls else {})})
            if not calls:
                return answer.get("content") or ""
            for call in calls:
                try:
                    arguments = json.loads(call["function"].get("arguments") or "{}")
                except ValueError:
                    arguments = call["function"].get("arguments")  # the service answers what is wrong
                result = self.cell.call_tool(call["function"]["name"], arguments)
                self.messages.append({"role": "tool", "tool_call_id": call["id"],
                                      "content": json.dumps(result, ensure_ascii=False, sort_keys=True)})
        return "I have used all the steps I may take for this question, so I stop here."

    def usage(self) -> dict[str, int]:
        return dict(self.tokens)

    def close(self) -> None:
        self.client.close()


def make_agent(cell: Any) -> HttpxAgent:
    return HttpxAgent(cell, os.environ["AGENT_BASE_URL"], os.environ.get("AGENT_MODEL", "default"),
                      os.environ.get("AGENT_API_KEY"))
