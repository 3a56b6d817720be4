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
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_assistant_eval.records import GRADED_CELL_FORMAT, GRADING_FORMAT, RUN_FORMAT, RecordError, read_json
from pytest_assistant_eval.judging.folders import folder_name_key  # noqa: F401 - the tables key folders by it too
from pytest_assistant_eval.tables.digest import read_digest

#: The grading folder's digests (``docs/digests.md``): caches of the graded cells and records, never the truth.
DIGESTS = ".digests"
SLIM_CELL_VERSION = "7"  # 7: the line part has checks_applied (issue 29); 6: a user error keeps its reason
SUMMARY_CELL_VERSION = "3"  # 3: the line part has checks_applied (issue 29); 2: a user error keeps its reason
RECORD_ROW_VERSION = "4"  # 3: input tokens over the requests (issue 24); 4: cached input tokens (issue 29)
#: What a slim cell keeps of a graded cell (``docs/digests.md``): what the leaderboard, the review
#: queue, the review overlay and the agreement read. The rest of a cell's line is in ``_line``.
_CELL_KEEP = ("format", "n", "source", "material_sha256", "model", "level", "case", "kind", "class", "repeat",
              "conversation_seconds", "outcome", "history", "review", "user_error")
_JUDGE_KEEP = ("grader", "route", "deterministic", "unparsed", "to_owner", "understandability")


def slim_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """The fields of a graded cell the tables and the review queue read, and its line part.

    Keys as in the graded cell (``docs/grading.md``), narrowed: ``parts`` keep their outcome,
    invented numbers and no_answer, ``task`` its final checks, ``items`` only the judged ones (id, kind,
    settled_by), the judge's verdicts their verdict and confidence. One more key, ``_line``: the
    cell's part of its results line before any review marker (``lines.line_base``), on which
    ``lines.line_part`` puts the marker the review gives it.
    """
    from pytest_assistant_eval.review.queue import queue_facts
    from pytest_assistant_eval.tables.lines import line_base

    out = {k: cell[k] for k in _CELL_KEEP if k in cell}
    if isinstance(cell.get("parts"), list):
        out["parts"] = [{"outcome": p.get("outcome"), "invented_numbers": p.get("invented_numbers", 0),
                         "no_answer": p.get("no_answer")}
                        for p in cell["parts"] if isinstance(p, dict)]
    if isinstance(cell.get("task"), dict):
        out["task"] = {"final": cell["task"].get("final") or {}}
    if isinstance(cell.get("items"), list):
        out["items"] = [{k: i.get(k) for k in ("id", "kind", "settled_by")} for i in cell["items"]
                        if isinstance(i, dict) and i.get("settled_by") != "check"]
    judge = cell.get("judge")
    if isinstance(judge, dict):
        slim = {k: judge[k] for k in _JUDGE_KEEP if k in judge}
        verdicts = judge.get("verdicts")
        if isinstance(verdicts, dict):
            slim["verdicts"] = {k: ({f: v[f] for f in ("verdict", "confidence") if f in v} if isinstance(v, dict)
                                    else v) for k, v in verdicts.items()}
        out["judge"] = slim
    elif "judge" in cell:
        out["judge"] = judge
    try:
        out["_queue"] = queue_facts(cell)
    except (KeyError, TypeError, AttributeError, ValueError):
        out["_queue"] = None  # the draw reads the cell itself (and says what is wrong)
    try:
        out["_line"] = line_base(cell)
    except (KeyError, TypeError, AttributeError, ValueError):
        out["_line"] = None  # not a whole graded cell: the summary reads the file itself (and says what is wrong)
    return out


#: What a summary cell keeps (``summary_cell``): the summary reads nothing else of a graded cell.
_SUMMARY_KEEP = ("format", "n", "source", "material_sha256", "level", "history", "user_error")


def summary_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """The narrower slim cell ``summary`` reads (``docs/digests.md``): where, what, the queue facts and the line part.

    Half a slim cell's size: the summary draws the review queue from ``_queue``
    (``review.queue.queue_facts``) and builds each line from ``_line``, so it needs neither the
    verdicts, items and parts nor the model; the agreement, which does, reads the slim cells.
    """
    return narrowed(slim_cell(cell))


def narrowed(slim: dict[str, Any]) -> dict[str, Any]:
    """The summary cell of a slim cell."""
    return {**{k: slim[k] for k in _SUMMARY_KEEP if k in slim}, "_queue": slim["_queue"], "_line": slim["_line"]}


@dataclass(frozen=True)
class DigestSpec:
    """One digest of a grading folder: its file under ``GRADING/.digests``, kind and row version."""

    file: str
    kind: str
    version: str


CELLS_DIGEST = DigestSpec("cells.jsonl", "graded-cells", SLIM_CELL_VERSION)
SUMMARY_DIGEST = DigestSpec("summary-cells.jsonl", "summary-cells", f"{SUMMARY_CELL_VERSION}.{SLIM_CELL_VERSION}")


def records_digest(folder: str) -> DigestSpec:
    """The digest of the records of the graded results folder named ``folder``."""
    return DigestSpec(f"records-{folder}.jsonl", "records", RECORD_ROW_VERSION)


def record_row(record: dict[str, Any]) -> list[Any]:
    """What the tables read of a record: ``[measured values, na]``.

    The values are ``lines.measured(record)``'s in ``lines.MEASURED_FIELDS`` order (a list, not
    a dict: 100,000 rows of 22 named fields were a third of the summary's memory); ``na`` is
    None, or for a record not applicable its cell's fields with ``_measured`` (a dict).
    """
    from pytest_assistant_eval.tables.lines import measured

    got = measured(record)
    na = None
    if record.get("status") == "na":
        na = {k: record.get(k) for k in ("cell", "case", "kind", "class", "level", "repeat", "na_reason",
                                         "status")}
        na["_measured"] = got
    return [list(got.values()), na]

__all__ = ["GradingSource", "open_grading", "read_graded_cells", "find_results_folder", "slim_cell", "summary_cell",
           "narrowed", "record_row", "DigestSpec", "CELLS_DIGEST", "SUMMARY_DIGEST", "records_digest"]


@dataclass
class GradingSource:
    """A grading folder's index and graded cells, and where its results folders are (None: not found)."""

    path: Path
    index: dict[str, Any]
    cells: list[dict[str, Any]]
    folders: dict[str, Path | None]
    identities: dict[str, dict[str, Any]]
    ungraded: list[dict[str, Any]] = field(default_factory=list)  # blind-order entries with no graded cell yet
    #: With ``open_grading(slim=True)``: per folder, ``{record file name: record digest row}`` (``record_row``).
    digests: dict[str, dict[str, Any]] | None = None
    _graded: dict[str, set[str]] | None = field(default=None, repr=False)
    #: The cells are summary cells (``summary_cell``): no verdicts, items, parts or model.
    narrow: bool = False

    def record_digest(self, folder: str) -> dict[str, Any]:
        """``{record file name: record_row(record)}`` of one results folder, through its digest in the grading folder."""
        if self.digests is None:
            self.digests = {}
        if folder not in self.digests:
            base = self.folders.get(folder)
            spec = records_digest(folder)
            self.digests[folder] = {} if base is None else read_digest(
                base / "cells", self.path / DIGESTS / spec.file, spec.kind, spec.version, record_row,
                skip_unreadable=True)
        return self.digests[folder]

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

    def graded_names(self) -> dict[str, set[str]]:
        """The graded cells' names per results folder (once: ``extra_records`` asks for each folder)."""
        if self._graded is None:
            self._graded = {}
            for c in self.cells:
                self._graded.setdefault(c["source"]["folder"], set()).add(c["source"]["cell"])
        return self._graded

    def extra_records(self, folder: str) -> Iterator[dict[str, Any]]:
        """Records of the folder that are not graded: cells not applicable (``status: na``)."""
        base = self.folders.get(folder)
        if base is None:
            return
        graded = self.graded_names().get(folder, set())
        if self.digests is not None:  # slim: the digest row of a record not applicable is the record's fields
            rows = self.record_digest(folder)
            for name in sorted(rows):
                if name[:-5] not in graded and rows[name][1] is not None:
                    yield rows[name][1]
            return
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
        from pytest_assistant_eval.results.skips import read_skips

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


def refuse_results_folder(grading_dir: Path) -> None:
    """A results folder (or a run's parent folder) given as ``--dir``: say what it is and what to run (issue 24)."""
    if (grading_dir / "grading.json").exists():
        return
    shown = shlex.quote(str(grading_dir))
    if (grading_dir / "run.json").exists():
        raise RecordError(f"{grading_dir} is a results folder (it holds run.json), not a grading folder: grade it "
                          f"first, with the results folders of the other models: assistant-eval grade-ai {shown} "
                          "OTHER_RESULTS... --dir GRADING (or --single-model), then give --dir GRADING")
    try:
        inside = sorted(p for p in grading_dir.iterdir() if p.is_dir() and (p / "run.json").exists())
    except OSError:
        return
    if inside:
        given = " ".join(shlex.quote(str(p)) for p in inside)
        raise RecordError(f"{grading_dir} holds results folders ({', '.join(p.name for p in inside)}), not a "
                          f"grading: grade them first: assistant-eval grade-ai {given} --dir GRADING, "
                          "then give --dir GRADING")


def read_graded_cells(grading_dir: Path, *, slim: bool = False, narrow: bool = False
                      ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """``grading.json``, every graded cell in blind order, and the order entries not graded yet.

    ``slim``: the cells as ``slim_cell`` keeps them, read through the grading folder's digest
    (one file instead of one per cell; rebuilt from the cells wherever it is missing or stale).
    ``narrow`` (with ``slim``): as ``summary_cell`` keeps them, through a digest of their own.
    """
    refuse_results_folder(grading_dir)
    index = read_json(grading_dir / "grading.json", GRADING_FORMAT)
    cells: list[dict[str, Any]] = []
    ungraded: list[dict[str, Any]] = []
    folder_cells = grading_dir / "cells"
    if slim:
        spec, derive = (SUMMARY_DIGEST, summary_cell) if narrow else (CELLS_DIGEST, slim_cell)
        rows = read_digest(folder_cells, grading_dir / DIGESTS / spec.file, spec.kind, spec.version, derive)
        for entry in index["order"]:
            name = f"{entry['n']}.json"
            cell = rows.get(name)
            if cell is None:
                ungraded.append(entry)
                continue
            if cell.get("format") != GRADED_CELL_FORMAT:
                raise RecordError(f"{folder_cells / name}: format {cell.get('format')!r}, "
                                  f"expected {GRADED_CELL_FORMAT!r}")
            cells.append(cell)
        return index, cells, ungraded
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


def _refuse_merged_names(grading_dir: Path, index: dict[str, Any]) -> None:
    """Tables key a grading's results folders by name: a grading that names two folders alike
    (made before grade-ai refused it) merged their cells, and no table of it is true."""
    seen: dict[str, str] = {}
    for folder in index["folders"]:
        key = folder_name_key(folder["name"])
        if key in seen:
            raise RecordError(f"{grading_dir / 'grading.json'} names two results folders alike ({seen[key]!r}, "
                              f"{folder['name']!r}): their cells were merged when graded; rename one folder and "
                              "grade them again into a new --dir")
        seen[key] = folder["name"]


def open_grading(grading_dir: Path, results: Sequence[Path] = (), *, slim: bool = False,
                 narrow: bool = False, command: str | None = None) -> GradingSource:
    """Read ``grading.json`` and every graded cell, and find the graded results folders.

    ``slim``: slim cells and record digests (``docs/digests.md``), for tables that read only their fields;
    ``narrow``: summary cells (``summary_cell``) instead of slim cells. ``command`` (summary, report):
    refuse (``FolderInUse``) a graded results folder whose run is still writing it.
    """
    index, cells, ungraded = read_graded_cells(grading_dir, slim=slim, narrow=narrow)
    folders: dict[str, Path | None] = {}
    identities: dict[str, dict[str, Any]] = {}
    _refuse_merged_names(grading_dir, index)
    for folder in index["folders"]:
        identities[folder["name"]] = folder["identity"]
        folders[folder["name"]] = find_results_folder(grading_dir, folder["path_hint"], folder["identity"], results)
    if command is not None:
        from pytest_assistant_eval.results.writer_lock import refuse_live

        for found in folders.values():
            if found is not None:
                refuse_live(found, command)
    from pytest_assistant_eval.review.overlay import overlay_reviews

    overlay_reviews(grading_dir, cells, index, ungraded)  # the owner's review, when queued (docs/review.md)
    return GradingSource(grading_dir, index, cells, folders, identities, ungraded, {} if slim else None,
                         narrow=slim and narrow)
