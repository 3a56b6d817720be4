"""Your own assistant as a cell's assistant (issue 33, docs/agents.md).

``--model agent:MODULE:FACTORY`` runs a Python agent instead of a model behind a chat endpoint:
``provider`` drives it one user turn per request of the conversation loop, ``cell`` is what its
factory is given, ``recorder`` records each of its tool calls through the loop's own path (the
service log, the transcript, the caps), ``mcp_server`` serves the same tools over MCP
(``cell.mcp_url`` and ``assistant-eval serve-tools``). The ``mcp`` SDK is imported only there.
"""
