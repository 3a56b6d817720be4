"""The synthetic world of services (S1): fixtures -> SQLite build, marker, tools, states.

Public surface::

    build_world(out_dir, source_dir=None, *, replace=False) -> Path
    verify_world(world_dir, source_dir=None) -> WorldIdentity        # raises WorldRefused
    list_variants(world_dir) -> list[str]
    open_world(world_dir, variant, workdir, policy=Policy()) -> SqliteWorld
    tool_specs() -> list[ToolSpec]
    query(world_dir, variant, sql, params=()) -> list[tuple]
    diff_states(a, b) -> list[FieldChange];  state_digest(state) -> str
"""

from __future__ import annotations

from pytest_assistant_eval.conversation.backend import ForbiddenCall, LogEntry, Policy, State, ToolResult, ToolSpec, WorldBackend
from .build import (
    MARKER_NAME,
    WORLD_DIR_NAME,
    WorldIdentity,
    build_world,
    database_path,
    list_variants,
    query,
    read_marker,
    verify_world,
)
from .clock import NOW, NOW_ISO
from .errors import FixtureError, WorldError, WorldExists, WorldRefused
from .services import SqliteWorld, open_world
from .state import FieldChange, diff_states, state_digest
from .tools import BEHAVIOUR_VERSION, tool_specs

__all__ = [
    "BEHAVIOUR_VERSION", "MARKER_NAME", "NOW", "NOW_ISO", "WORLD_DIR_NAME",
    "FieldChange", "FixtureError", "ForbiddenCall", "LogEntry", "Policy", "SqliteWorld", "State", "ToolResult",
    "ToolSpec", "WorldBackend", "WorldError", "WorldExists", "WorldIdentity", "WorldRefused",
    "build_world", "database_path", "diff_states", "list_variants", "open_world", "query", "read_marker",
    "state_digest", "tool_specs", "verify_world",
]
