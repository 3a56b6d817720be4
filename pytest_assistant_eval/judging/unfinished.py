"""Naming an unfinished results folder (S6.4): each cell's checkpoint place and a resume command that works.

grade-ai refuses a folder whose runs planned cells that have no record. The message names
every such cell with where its checkpoint stands ("(unfinished: checkpoint at turn 2,
request 7)", or "(not started)") and the command that finishes them, built from what the
folder records: the model, its address, the levels and repeats its runs planned, the
options its identity fixes, and the grounding world found by its fingerprint. Only a
checkpoint's position is read, never what it holds (it is unredacted).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

WORLD_MARKER = ".assistant_eval_world.json"


def checkpoint_place(folder: Path, cell: str) -> str:
    """Where a cell without a record stands."""
    path = folder / "partial" / f"{cell}.json"
    try:
        from pytest_assistant_eval.conversation.checkpoint import load_checkpoint  # a journal since format 2

        pending = (load_checkpoint(path) or {}).get("pending") or {}
    except (OSError, ValueError, AttributeError):
        return "(not started)" if not path.exists() else "(unfinished: a checkpoint that does not parse)"
    if not pending:
        return "(unfinished: checkpoint before its first request)"
    return f"(unfinished: checkpoint at turn {int(pending.get('turn', 0)) + 1}, request {pending.get('request')})"


def find_world(fingerprint: str, near: list[Path]) -> Path | None:
    """The built world of this fingerprint in the usual places: the current folder, the results
    folder's parents and their direct subfolders (``worlds/Grounding world ä``)."""
    seen: set[Path] = set()
    for base in near:
        for folder in [base, *base.parents][:4]:
            for candidate in [folder, *_children(folder)]:
                for world in [candidate, *_children(candidate)]:
                    if world in seen:
                        continue
                    seen.add(world)
                    marker = world / WORLD_MARKER
                    try:
                        if json.loads(marker.read_text(encoding="utf-8")).get("fingerprint") == fingerprint:
                            return world
                    except (OSError, ValueError, AttributeError):
                        continue
    return None


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))[:50]
    except OSError:
        return []


def _shown(path: Path) -> str:
    try:
        return shlex.quote(str(path.resolve().relative_to(Path.cwd().resolve())))
    except ValueError:
        return shlex.quote(str(path))


def resume_command(folder: Path, run: dict[str, Any], missing: list[str], calibration: Path | None) -> str:
    """``assistant-eval run ... --resume`` that finishes exactly the missing cells."""
    ident = run["identity"]
    world = find_world(ident.get("world", ""), [folder.resolve(), Path.cwd().resolve()])
    from pytest_assistant_eval.paths import default_calibration_dir

    parts = ["assistant-eval", "run"]
    if calibration is not None and calibration.resolve() != default_calibration_dir().resolve():
        parts += ["--calibration", _shown(calibration)]
    parts += ["--world", _shown(world) if world else "WORLD",
              "--model", shlex.quote(f"{ident['preset']}:{ident['model']}")]
    if ident.get("address"):
        parts += ["--base-url", shlex.quote(ident["address"])]
    levels = sorted({c.split("__")[1] for c in missing if c.count("__") == 2})
    if levels:
        parts += ["--levels", ",".join(levels)]
    repeats = next((e["matrix"].get("repeats") for e in reversed(run.get("runs", []))
                    if e.get("matrix", {}).get("repeats")), None)
    if repeats:
        parts += ["--repeats", str(repeats)]
    if ident.get("ollama_contexts"):
        parts += ["--ollama-context", ",".join(f"{k}={v}" for k, v in ident["ollama_contexts"].items())]
    if ident.get("cpu_offload"):
        parts.append("--allow-cpu-offload")
    if ident.get("data_collection"):
        parts.append("--relax-data-collection")
    parts += ["--out", _shown(folder), "--resume"]
    from pytest_assistant_eval.providers.notices import notice_for

    if notice_for(ident["preset"], ident["model"], ident.get("address")):
        parts.append("--accept-data-notice")
    parts += selection_args(run, missing)
    command = " ".join(parts)
    if world is None:
        command += f"  (WORLD: the grounding world of fingerprint {ident.get('world')}, not found near the folder)"
    return command


def selection_args(run: dict[str, Any], missing: list[str]) -> list[str]:
    """The ``-k`` that selects what is left: the run's own selection, not a list of every missing cell.

    ``--resume`` skips finished cells, so the expressions the run was started with (recorded in
    each run.json entry) select exactly the cells still to do; listing them made a one-line
    expression of kilobytes for a run of hundreds of cells (issue 24). A run.json without its
    selections (written before they were recorded) gets the list.
    """
    entries = run.get("runs") or []
    selections = [e.get("selection") for e in entries]
    if entries and all(isinstance(s, dict) and not s.get("markexpr") for s in selections):
        keywords = list(dict.fromkeys(s.get("keyword") for s in selections))  # type: ignore[union-attr]
        if None in keywords:
            return []  # a run asked its whole matrix: --resume alone finishes it
        expression = keywords[0] if len(keywords) == 1 else " or ".join(f"({k})" for k in keywords)
        return ["-k", shlex.quote(expression)]
    return ["-k", shlex.quote(" or ".join(missing))]


def unfinished_message(folder: Path, run: dict[str, Any], missing: list[str], calibration: Path | None) -> str:
    shown = [f"{c} {checkpoint_place(folder, c)}" for c in missing[:8]]
    more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
    return (f"{folder.name}: {len(missing)} cell(s) not finished: {', '.join(shown)}{more}; finish them first: "
            f"{resume_command(folder, run, missing, calibration)}")
