"""An agent that reaches its tools only through MCP (``cell.mcp_url``), on an OpenAI-compatible model.

    AGENT_BASE_URL=http://127.0.0.1:8000/v1 AGENT_MODEL=qwen2.5 \\
      assistant-eval run --world W --model agent:mcp_agent:make_agent --agent-path examples/agents

Its ``turn`` is async: each turn opens an MCP session over streamable HTTP with the ``mcp``
client (``pip install 'pytest-assistant-eval[agents]'``), lists the tools there and calls them
there; the model is asked with httpx. It never uses ``cell.tools`` or ``cell.call_tool``, as
an agent whose tools live behind an MCP server would not.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx
from mcp import ClientSession

try:
    from mcp.client.streamable_http import streamable_http_client as connect
except ImportError:  # an mcp 1.x release from before the name changed
    from mcp.client.streamable_http import streamablehttp_client as connect


class MCPAgent:
    def __init__(self, cell: Any, base_url: str, model: str, key: str | None = None) -> None:
        self.cell = cell
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.headers = {"authorization": f"Bearer {key}"} if key else {}
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": cell.instructions}, *cell.history]

    async def turn(self, message: str) -> str:
        self.messages.append({"role": "user", "content": message})
        async with connect(self.cell.mcp_url) as (read, write, _), ClientSession(read, write) as mcp:
            await mcp.initialize()
            listed = await mcp.list_tools()
            tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                       "parameters": t.inputSchema}} for t in listed.tools]
            async with httpx.AsyncClient(base_url=self.base_url, headers=self.headers, timeout=300) as http:
                for _ in range(self.cell.limits.max_rounds):
                    response = await http.post("/chat/completions", json={
                        "model": self.model, "messages": self.messages, "tools": tools,
                        "max_tokens": self.cell.limits.max_output_tokens})
                    response.raise_for_status()
                    answer = response.json()["choices"][0]["message"]
                    calls = answer.get("tool_calls") or []
                    self.messages.append({"role": "assistant", "content": answer.get("content") or "",
                                          **({"tool_calls": calls} if calls else {})})
                    if not calls:
                        return answer.get("content") or ""
                    for call in calls:
                        arguments = json.loads(call["function"].get("arguments") or "{}")
                        result = await mcp.call_tool(call["function"]["name"], arguments)
                        text = "".join(part.text for part in result.content if part.type == "text")
                        self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
        return "I have used all the steps I may take for this question, so I stop here."


def make_agent(cell: Any) -> MCPAgent:
    return MCPAgent(cell, os.environ["AGENT_BASE_URL"], os.environ.get("AGENT_MODEL", "default"),
                    os.environ.get("AGENT_API_KEY"))
