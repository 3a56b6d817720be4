"""A world's identity is its content (issue 29, item 4): two builds of the same fixtures are one world.

Every build is a new build (S1.7: its own build time in the databases, new background-run ids,
its own fingerprint), and ``run --resume`` still refuses a results folder of another build, so a
half-finished folder's records are never continued on other bytes. But what a model was asked
is the fixtures' content: two builds of the same fixture files (and the same database schema and
marker format) give every cell the same world, so results made on different days on fresh builds
grade, summarise and compare together. Grading compares worlds by ``content`` here; a refusal
names what differs (which fixture file, the schema, or a folder made before worlds had a
content) and what to do.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CONTENT_VERSION", "content_of", "fixture_file_hashes", "world_content", "content_differences"]

#: Bumped when what a build makes of the same fixtures changes (another table, another run rule).
CONTENT_VERSION = 1


def fixture_file_hashes(source_dir: Path) -> dict[str, str]:
    """Every fixture and override file of a world's sources: relative path -> sha256 of its bytes."""
    from pytest_assistant_eval.suites.calibration.world.fixtures import fixture_files

    return {p.relative_to(source_dir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in fixture_files(source_dir)}


def content_of(fixtures_sha256: str, schema_format: Any, marker_format: Any) -> str:
    """The content id of a build: its fixtures' digest, the schema it made and how it was built."""
    payload = json.dumps({"fixtures_sha256": fixtures_sha256, "schema_format": schema_format,
                          "marker_format": marker_format, "content_version": CONTENT_VERSION},
                         sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def world_content(run: Mapping[str, Any]) -> str:
    """The world a results folder's ``run.json`` ran on, by content; a folder made before worlds had a
    content (no ``world_identity.content``) is known only by its build: ``build:FINGERPRINT``."""
    recorded = run.get("world_identity") or {}
    content = recorded.get("content") if isinstance(recorded, Mapping) else None
    return str(content) if content else f"build:{(run.get('identity') or {}).get('world')}"


def content_differences(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """What differs between the worlds of ``runs`` ((folder name, run.json) pairs), in words."""
    first_name, first = runs[0]
    base = first.get("world_identity") or {}
    out: list[str] = []
    for name, run in runs[1:]:
        other = run.get("world_identity") or {}
        if world_content(run) == world_content(first):
            continue
        if not other.get("content") or not base.get("content"):
            old = name if not other.get("content") else first_name
            out.append(f"{old} was made before a world was known by its content (its run.json names only its "
                       "build): it grades only with folders of its own build")
            continue
        files_a, files_b = dict(base.get("fixture_files") or {}), dict(other.get("fixture_files") or {})
        changed = sorted(f for f in set(files_a) | set(files_b) if files_a.get(f) != files_b.get(f))
        if changed:
            shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
            out.append(f"{first_name} and {name} ran on worlds built from different fixture files: {shown}")
        elif base.get("schema_format") != other.get("schema_format"):
            out.append(f"{first_name} and {name} ran on worlds of database schema {base.get('schema_format')} and "
                       f"{other.get('schema_format')}")
        else:
            out.append(f"{first_name} and {name} ran on worlds of different content (another harness version built "
                       "one of them)")
    return out
