"""What ``summary`` reads: a grading folder, and the results folders it graded.

The grade of a cell is in the grading folder (``docs/grading.md``); what the run measured
beside the grade (setting key, usage, cap hits, failed attempts, dates, skips, cells not
applicable) is in the results folders' records (``docs/records.md``). Both are read as
files of their documented formats, never through the grading code.

``grading.json`` names each results folder only by its name (``path_hint``, never an absolute
path), so the folders are found by name beside the grading folder (``GRADING/../NAME``) or one
folder further down (``GRADING/../*/NAME``: ``_eval_reports/run/oracle`` beside
``_eval_reports/grading``, the demo's ``results/oracle`` beside ``grading``), or given with
``--results``. A folder counts only when its ``run.json`` identity is the one the grading
recorded: a folder of the same name from another run is not this grading's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_assistant_eval.records import GRADED_CELL_FORMAT, GRADING_FORMAT, RUN_FORMAT, RecordError, read_json

__all__ = ["GradingSource", "open_grading", "read_graded_cells", "find_results_folder"]


@dataclass
class GradingSource:
    """A grading folder's index and graded cells, and where its results folders are (None: not found)."""

    path: Path
    index: dict[str, Any]
    cells: list[dict[str, Any]]
    folders: dict[str, Path | None]
    identities: dict[str, dict[str, Any]]
    ungraded: list[dict[str, Any]] = field(default_factory=list)  # blind-order entries with no graded cell yet

    @property
    def missing_folders(self) -> list[str]:
        return [name for name, path in self.folders.items() if path is None]

    def record(self, folder: str, cell: str) -> dict[str, Any] | None:
        """The cell's record in its results folder, or None when the folder or record is not there."""
        base = self.folders.get(folder)
        if base is None:
            return None
        try:
            with open(base / "cells" / f"{cell}.json", "rb") as handle:
                return json.loads(handle.read())
        except (OSError, ValueError):
            return None

    def run(self, folder: str) -> dict[str, Any] | None:
        base = self.folders.get(folder)
        return read_json(base / "run.json", RUN_FORMAT) if base is not None else None

    def extra_records(self, folder: str) -> Iterator[dict[str, Any]]:
        """Records of the folder that are not graded: cells not applicable (``status: na``)."""
        base = self.folders.get(folder)
        if base is None:
            return
        graded = {c["source"]["cell"] for c in self.cells if c["source"]["folder"] == folder}
        for path in sorted((base / "cells").glob("*.json")):
            if path.stem in graded:
                continue
            try:
                record = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if record.get("status") == "na":
                yield record

    def skips(self, folder: str) -> dict[str, dict[str, Any]]:
        """The cells the owner skipped in that folder (``skips.json``), by cell id."""
        from pytest_assistant_eval.skips import read_skips

        base = self.folders.get(folder)
        return read_skips(base) if base is not None else {}


def find_results_folder(grading_dir: Path, name: str, identity: dict[str, Any],
                        given: Sequence[Path] = ()) -> Path | None:
    """The results folder named ``name`` with ``identity``: among ``given``, else beside the grading folder."""
    candidates = list(given)
    parent = grading_dir.resolve().parent
    candidates.append(parent / name)
    try:
        candidates.extend(sorted(p / name for p in parent.iterdir() if p.is_dir() and p != grading_dir.resolve()))
    except OSError:
        pass
    for candidate in candidates:
        run_file = candidate / "run.json"
        if not run_file.is_file():
            continue
        try:
            run = read_json(run_file, RUN_FORMAT)
        except RecordError:
            continue
        if run.get("identity") == identity:
            return candidate
    return None


def read_graded_cells(grading_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """``grading.json``, every graded cell in blind order, and the order entries not graded yet."""
    index = read_json(grading_dir / "grading.json", GRADING_FORMAT)
    cells: list[dict[str, Any]] = []
    ungraded: list[dict[str, Any]] = []
    folder_cells = grading_dir / "cells"
    for entry in index["order"]:
        path = folder_cells / f"{entry['n']}.json"
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            ungraded.append(entry)  # not graded yet: it waits
            continue
        cell = json.loads(raw)
        if cell.get("format") != GRADED_CELL_FORMAT:
            raise RecordError(f"{path}: format {cell.get('format')!r}, expected {GRADED_CELL_FORMAT!r}")
        cells.append(cell)
    return index, cells, ungraded


def open_grading(grading_dir: Path, results: Sequence[Path] = ()) -> GradingSource:
    """Read ``grading.json`` and every graded cell, and find the graded results folders."""
    index, cells, ungraded = read_graded_cells(grading_dir)
    folders: dict[str, Path | None] = {}
    identities: dict[str, dict[str, Any]] = {}
    for folder in index["folders"]:
        identities[folder["name"]] = folder["identity"]
        folders[folder["name"]] = find_results_folder(grading_dir, folder["path_hint"], folder["identity"], results)
    from pytest_assistant_eval.review.overlay import overlay_reviews

    overlay_reviews(grading_dir, cells, index, ungraded)  # the owner's review, when queued (docs/review.md)
    return GradingSource(grading_dir, index, cells, folders, identities, ungraded)
