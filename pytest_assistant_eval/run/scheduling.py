"""xdist scheduling by provider route (S4.14).

Every cell of one limited route (preset and address) goes to one worker, so pacing
and budgets stay exact; limit-free cells (the scripted preset) are each their own
scope and spread freely. We group through our own scope function instead of xdist's
``loadgroup``, which rewrites node ids with ``@group`` suffixes.
"""

from __future__ import annotations

from typing import Any, Callable

from xdist.scheduler import LoadScopeScheduling


def scope_for(nodeid: str, routes: dict[str, str], limited: dict[str, bool]) -> str:
    """The scheduling scope of a cell's node id: its route, or the node id itself."""
    param = nodeid[nodeid.find("[") + 1 : -1] if nodeid.endswith("]") and "[" in nodeid else nodeid
    if len(routes) == 1:
        label = next(iter(routes))
    else:
        label = next((name for name in sorted(routes, key=len, reverse=True) if param.startswith(name + "-")), None)
        if label is None:
            return nodeid
    return f"route:{routes[label]}" if limited.get(label) else nodeid


class RouteScheduling(LoadScopeScheduling):
    def __init__(self, config: Any, log: Any = None, *, scope: Callable[[str], str]) -> None:
        super().__init__(config, log)
        self._scope = scope

    def _split_scope(self, nodeid: str) -> str:
        return self._scope(nodeid)
