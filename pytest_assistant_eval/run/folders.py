"""A run's results folders: run.json and its plan, the selection, skips, set-aside records, world copies.

Every suite's folder has the same layout (docs/results.md): ``run.json`` (the suite's format,
``identity`` and one entry per run with its plan), ``cells/``, ``partial/``, ``spent.json``,
``skips.json``, ``broken/`` and ``.work/``. ``prepare`` writes or extends each model's
run.json before any cell runs (controller only) and refuses a folder of another identity, a
grading folder, and a folder with records without ``--resume``; ``record_selection`` makes
the cells ``-k``/``-m`` chose the run's plan. Nothing here runs a cell or talks to a provider.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from pytest_assistant_eval.run.cell_checkpoints import now
from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions, UsageError, results_dir
from pytest_assistant_eval.records import HARNESS_VERSION, RecordError, read_json, redact_data, set_aside, write_json_atomic
from pytest_assistant_eval.results.usage import fold_journals
from pytest_assistant_eval.run.results_folder import refuse_grading_folder, remove_harness_temporaries

__all__ = ["WORK_DIR", "BROKEN_DIR", "prepare", "record_selection", "skip_cells", "set_aside_unreadable",
           "work_dir", "cell_work_dir", "record_path"]

WORK_DIR = ".work"  # the cells' world copies, in their results folder (under its writer lock)
BROKEN_DIR = "broken"  # records that did not parse, moved aside by --resume


def record_path(options: RunOptions, spec: ModelSpec, cell_id: str) -> Path:
    return results_dir(options, spec) / "cells" / f"{cell_id}.json"


def prepare(options: RunOptions, suite: Any, models: dict[str, ModelSpec], commit: str | None) -> None:
    """Write or extend each model's run.json before any cell runs (controller only)."""
    folders = [results_dir(options, spec) for spec in models.values()]
    for folder in {options.out, *folders}:
        refuse_grading_folder(folder, UsageError)  # a grading folder is never a results folder
    # Only the folders this run writes (and holds the lock of) are cleaned: a parent --out of
    # several models may hold another live run's folders beside ours.
    for folder in folders:
        remove_harness_temporaries(folder)  # a killed run's half-written temporaries, nothing else
        shutil.rmtree(folder / WORK_DIR, ignore_errors=True)  # and the world copies of its cells
    for label, spec in models.items():
        folder = results_dir(options, spec)
        path = folder / "run.json"
        planned = [c for c in suite.cells if c.model == label]
        entry = {"started_at": now(), "pace": options.pace, "stream": options.stream,
                 "resume": options.resume, "matrix": suite.matrix(planned), "git_commit": commit}
        identity = suite.identity(spec)
        if path.exists():
            fold_journals(path)  # a killed process's usage, into its own run entry (results/usage.py)
            data = read_json(path)
            if not isinstance(data, dict) or data.get("format") != suite.run_format:
                found = data.get("format") if isinstance(data, dict) else None
                raise UsageError(f"{folder.name}: run.json is of format {found!r}, not this suite's "
                                 f"{suite.run_format!r}; choose another --out")
            if data["identity"] != identity:
                differs = sorted(k for k in {*identity, *data["identity"]}  # a key only one has differs too
                                 if data["identity"].get(k) != identity.get(k))
                raise UsageError(f"{folder.name}: this results folder belongs to another run "
                                 f"(it differs in {', '.join(differs)}); choose another --out")
            if not options.resume and any((folder / "cells").glob("*.json")):
                raise UsageError(f"{folder.name}: the results folder already holds records; "
                                 "run again with --resume to continue it, or choose another --out")
            data["runs"].append(entry)
        else:
            if not options.resume and any((folder / "cells").glob("*.json")):
                raise UsageError(f"{folder.name}: the results folder already holds records; "
                                 "run again with --resume to continue it, or choose another --out")
            data = {"format": suite.run_format, "harness_version": HARNESS_VERSION,
                    "identity": identity, **suite.run_fields(spec), "runs": [entry]}
        folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, redact_data(data))


def record_selection(options: RunOptions, suite: Any, models: dict[str, ModelSpec], selected: list[Any],
                     keyword: str | None, markexpr: str | None) -> None:
    """The run asks only the selected cells (-k, -m): that is its plan in each run.json (controller only).

    run.json is written before collection with every planned cell; a plan of cells the run never
    asks would leave the folder "unfinished" for grade-ai for ever. The selection is recorded so
    the plan can be told from a smaller matrix.
    """
    from pytest_assistant_eval.results.usage import update_run

    for label, spec in models.items():
        mine = [c for c in selected if c.model == label]
        everything = [c for c in suite.cells if c.model == label]
        selection = {"keyword": keyword or None, "markexpr": markexpr or None, "cells": len(mine),
                     "of": len(everything)}

        def change(data: dict[str, Any], mine: list[Any] = mine, selection: dict[str, Any] = selection) -> None:
            entry = data["runs"][-1]
            entry["matrix"] = suite.matrix(mine)
            entry["selection"] = selection
            suite.on_selection(data, mine, selection)

        update_run(results_dir(options, spec) / "run.json", change)


def skip_cells(options: RunOptions, suite: Any, skip: list[str], reason: str, unskip: list[str]) -> list[str]:
    """``--skip`` / ``--unskip``: needs the folder's identity options only (no key, no notice)."""
    from pytest_assistant_eval.conversation.checkpoint import load_checkpoint  # a journal since format 2
    from pytest_assistant_eval.results import skips
    from pytest_assistant_eval.results.writer_lock import WriterLock

    if len(options.models) != 1:
        raise UsageError("--skip and --unskip work on one results folder: name one model")
    spec = options.models[0]
    folder = results_dir(options, spec)
    if not (folder / "run.json").exists():
        raise UsageError(f"{folder}: not a results folder (no run.json)")
    identity = read_json(folder / "run.json", suite.run_format)["identity"]
    if (identity["preset"], identity["model"]) != (spec.preset, spec.model):
        raise UsageError(f"{folder.name}: this results folder is of {identity['preset']}:{identity['model']}")
    planned = [c.cell_id for c in suite.cells]
    lock = WriterLock(folder)  # one writer per results folder: never beside a live run
    lock.acquire()
    try:
        lines = [skips.skip(folder, cell, reason, planned, load_checkpoint=load_checkpoint) for cell in skip]
        lines += [skips.unskip(folder, cell, planned) for cell in unskip]
    finally:
        lock.release()
    return lines


def set_aside_unreadable(folder: Path, cell_id: str, path: Path, record_format: str) -> str | None:
    """A record that does not parse is no finished cell: move it aside (kept) and say where."""
    try:
        read_json(path, record_format)
        return None
    except RecordError as exc:
        moved = set_aside(path, folder / BROKEN_DIR)
        why = str(exc).replace(str(path), path.name)
        return (f"{cell_id}: its record could not be read ({why}); it was moved aside to "
                f"{BROKEN_DIR}/{moved.name} and the cell is asked again")


def work_dir(options: RunOptions, spec: ModelSpec) -> Path:
    """Where a model's cells copy the world: inside its results folder, so the next run of the
    folder removes what a killed one left (and no run touches another's copies)."""
    return results_dir(options, spec) / WORK_DIR


def cell_work_dir(options: RunOptions, spec: ModelSpec) -> Path:
    """A new folder for one cell's world copy. Another worker that finishes removes the shared
    folder when it is empty, possibly between our mkdir and mkdtemp: make it again then."""
    work = work_dir(options, spec)
    for _ in range(5):
        work.mkdir(parents=True, exist_ok=True)
        try:
            return Path(tempfile.mkdtemp(prefix="assistant-eval-cell-", dir=work))
        except FileNotFoundError:
            continue
    work.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="assistant-eval-cell-", dir=work))


def remove_work_dirs(options: RunOptions, models: dict[str, ModelSpec]) -> None:
    for spec in models.values():
        try:
            work_dir(options, spec).rmdir()  # only when empty: another worker may still be running a cell
        except OSError:
            pass
