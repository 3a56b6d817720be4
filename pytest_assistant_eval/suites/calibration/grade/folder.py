"""``grade-ai``: results folders in, a grading folder out (S6.4, with the offline judge).

The grading folder holds ``grading.json`` (the folder set, the judge, the seed and the
blind order) and ``cells/<n>.json`` (one graded cell each: the automatic checks' items,
the judge's verdicts, the outcome). Every record is read and checked before anything
is written, so a malformed record or one of another format grades nothing. A cell
already graded from the same material is skipped when the command runs again.

Records are streamed (issue 15): a folder's records are a :class:`FolderRecords`, read from
disk one at a time whenever they are gone through and never held. The refusals that need
every record work from each folder's ``run.json``, its file names, and a first pass that
reads each record for its format, fields, identity and versions and keeps nothing. Graded
cells are written without an fsync each and the grading folder is synced once per batch; a
graded cell that a power cut left unreadable is graded again by the next run.

Size: just over the limit: the folder pass (read, refuse, blind order) and the parallel
offline grading (`_grade_locked`, `_graded_cells`, `grade_one`, `sync_folder`) are two jobs;
the second would move to a module of its own.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, Protocol


from pytest_assistant_eval.paths import default_calibration_dir
from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.suites.calibration.cases.errors import CaseFileErrors
from pytest_assistant_eval.suites.calibration.cases.model import CaseSet
from pytest_assistant_eval.suites.calibration.levels import LevelsError
from pytest_assistant_eval.suites.calibration.world.names import Names
from pytest_assistant_eval.judging.lock import grading_lock
from pytest_assistant_eval.suites.calibration.grade.order import BlindOrder, cell_numbers, write_index
from pytest_assistant_eval.results.writer_lock import refuse_live
from pytest_assistant_eval.suites.calibration.checks.checked import (  # noqa: F401 - also this module's public names
    JUDGES,
    RUBRIC_VERSION,
    CheckedCell,
    check_record,
    graded_cell,
    material_sha,
    previous_grade,
    rules_judge_info,
)
from pytest_assistant_eval.judging.errors import GradingError, JudgeStopped  # noqa: F401
from pytest_assistant_eval.judging.request import JUDGE_RUBRIC
from pytest_assistant_eval.judging.options import JudgeOptions
from pytest_assistant_eval.suites.calibration.checks.rules_judge import JUDGE_ID, judge_items
from pytest_assistant_eval.judging.folders import check_folders, check_model_folders  # noqa: F401 - also this module's
from pytest_assistant_eval.records import (
    CELL_FORMAT,
    GRADED_CELL_FORMAT,
    GRADING_FORMAT,
    RUN_FORMAT,
    RecordError,
    read_json,
    remove_stale_temporaries,
    write_all,
)

#: Fields every record must have for grading to read it.
RECORD_FIELDS = ("cell", "case", "kind", "class", "level", "repeat", "transcript", "service_log", "turns", "state",
                 "model", "user", "versions", "world")
#: Graded cells written between two syncs of the grading folder.
BATCH = 500


class Priming(Protocol):
    """What primes the tables' digests while grade-ai holds every record and graded cell
    (``tables.priming``, docs/digests.md). The front door that chose the tables hands it in: a
    suite sits below the tables and never imports them (issue 32). Without it the first table
    derives the same rows from the files. ``primed_rows`` runs in the grading workers (a
    module-level function, so it crosses to them); ``DigestPrimer(grading_dir)`` collects them."""

    primed_rows: Callable[..., list[Any]]
    DigestPrimer: Callable[[Path], Any]


def read_record(folder: Path, name: str, identity: dict[str, Any]) -> dict[str, Any]:
    """One record of a results folder, checked for its format, its fields, its name and its folder."""
    path = folder / "cells" / f"{name}.json"
    record = read_json(path, CELL_FORMAT)
    for key in RECORD_FIELDS:
        if key not in record:
            raise RecordError(f"{path}: the record has no {key!r}")
    if record["cell"] != path.stem:
        raise RecordError(f"{path}: the record is of cell {record['cell']!r}, not {path.stem!r}")
    _check_belongs(folder, path, identity, record)
    return record


class FolderRecords(Sequence):  # type: ignore[type-arg]
    """The records of one results folder, read (and checked) from disk each time they are gone
    through: a pass over 100,000 records holds one at a time (issue 15)."""

    def __init__(self, folder: Path, identity: dict[str, Any], names: list[str]) -> None:
        self.folder = folder
        self.identity = identity
        self.names = names

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for name in self.names:
            yield read_record(self.folder, name, self.identity)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [read_record(self.folder, name, self.identity) for name in self.names[i]]
        return read_record(self.folder, self.names[i], self.identity)


def load_results(folder: Path, calibration: Path | None = None) -> tuple[dict[str, Any], FolderRecords]:
    """run.json and the folder's records (read when gone through); an unfinished folder is refused
    from the names alone."""
    run = read_json(folder / "run.json", RUN_FORMAT)
    names = sorted(path.stem for path in (folder / "cells").glob("*.json"))
    # A run of some cells (-k, -m) plans only those; every cell some run of the folder planned must be finished.
    planned = list(dict.fromkeys(c for entry in run["runs"] for c in entry["matrix"]["cells"]))
    from pytest_assistant_eval.results.skips import read_skips

    have = set(names) | set(read_skips(folder))  # a skipped cell is no gap
    missing = [c for c in planned if c not in have]
    if missing:
        from pytest_assistant_eval.judging.unfinished import unfinished_message

        raise GradingError(unfinished_message(folder, run, missing, calibration))
    return run, FolderRecords(folder, run["identity"], names)


def _check_belongs(folder: Path, path: Path, identity: dict[str, Any], record: dict[str, Any]) -> None:
    """A record copied in from another model's folder or another world build would be counted twice."""
    name = f"{folder.name}/cells/{path.name}"
    model = record.get("model") or {}
    if (model.get("preset"), model.get("model")) != (identity.get("preset"), identity.get("model")):
        raise GradingError(f"{name} is a record of {model.get('preset')}:{model.get('model')}, not of this "
                           f"folder's {identity.get('preset')}:{identity.get('model')}; move it to its own folder")
    world = record.get("world") or {}
    if world.get("fingerprint") != identity.get("world"):
        raise GradingError(f"{name} was made on another build of the world than its folder "
                           f"({world.get('fingerprint')} is not {identity.get('world')}); move it out")


def check_one_world(loaded: Sequence[tuple[Path, dict[str, Any], Any]]) -> None:
    """Folders graded together ran on one world by content (``world/content.py``, issue 29): builds of
    the same fixtures are one world; other fixtures are refused, naming what differs and what to do."""
    from pytest_assistant_eval.suites.calibration.world.content import content_differences, world_content

    if len({world_content(run) for _, run, _ in loaded}) <= 1:
        return
    differs = content_differences([(folder.name, run) for folder, run, _ in loaded])
    raise GradingError("these results folders ran on different worlds: " + "; ".join(differs)
                       + ". Grade each world's folders into a grading of its own, or run the models again on "
                         "one world (assistant-eval build from the same calibration/world, then run)")


def _model_and_world(run: dict[str, Any]) -> str:
    """A folder's model and world by content: two builds of the same fixtures are one world."""
    from pytest_assistant_eval.suites.calibration.world.content import world_content

    identity = {k: v for k, v in run["identity"].items() if k != "world"}
    return json.dumps({**identity, "world": world_content(run)}, sort_keys=True)


def check_no_cell_twice(loaded: Sequence[tuple[Path, dict[str, Any], "FolderRecords"]]) -> None:
    """Two folders of one identity (one model on one world, e.g. a folder and its copy, or one on
    another build of the same fixtures) holding the same cell would grade and count that cell twice."""
    identities = [_model_and_world(run) for _, run, _ in loaded]
    shared = {i for i in identities if identities.count(i) > 1}  # a folder alone of its identity holds each cell once
    holders: dict[tuple[str, str], Path] = {}
    for (folder, _, records), identity in zip(loaded, identities):
        if identity not in shared:
            continue
        for name in records.names:
            other = holders.setdefault((identity, name), folder)
            if other != folder:
                raise GradingError(f"{other} and {folder} are results folders of one model and world and both "
                                   f"hold the cell {name}: it would be graded and counted twice; "
                                   "grade one of them (or move the copy away)")


def grade_record(record: dict[str, Any], cases: CaseSet, levels: levels_mod.Levels) -> dict[str, Any]:
    """Automatic checks, then the offline judge, for one record (the world's names indexed once for all its checks)."""
    with Names.reading():
        checked = check_record(record, cases, levels)
        return checked.finish(judge_items(checked.items), rules_judge_info(record))


def grade_command(results: list[Path], grading_dir: Path, judge: str, *, seed: int | None = None,
                  single_model: bool = False, calibration: Path | None = None, out: Any = None,
                  options: JudgeOptions | None = None, priming: Priming | None = None) -> int:
    """The grade-ai command: exit 0 when done (or a daily budget is used), 1 when the canary was
    marked right, 2 when refused or stopped by a provider error."""
    from pytest_assistant_eval.providers.errors import ConfigurationError, ProviderError

    out = out or sys.stdout
    try:
        summary = grade(results, grading_dir, judge, seed=seed, single_model=single_model, calibration=calibration,
                        options=options, out=out, priming=priming)
    except (GradingError, RecordError, CaseFileErrors, LevelsError, ConfigurationError) as exc:
        print(f"assistant-eval grade-ai: {exc}", file=sys.stderr)
        return 2
    except JudgeStopped as stop:
        print(f"assistant-eval grade-ai: {stop}", file=sys.stderr)
        return 0 if stop.budget else 2
    except ProviderError as exc:  # pragma: no cover - JudgeStopped wraps them; a safety net
        print(f"assistant-eval grade-ai: the judge's provider failed ({exc.code}): {exc}", file=sys.stderr)
        return 2
    for line in summary.get("lines", []):
        print(line, file=out)
    if summary.get("started"):
        print(f"Started {grading_dir}: {summary['cells']} cell(s) in its blind order; no request was sent", file=out)
        return 0
    if "exported" in summary or "recorded" in summary:
        return 1 if summary.get("canary_failed") else 0
    print(f"Graded {summary['graded']} cell(s), {summary['skipped']} already graded, into {grading_dir}"
          + (f"; {summary['requests']} judge request(s), {summary['reused']} saved judgment(s) reused"
             if judge != JUDGE_ID else ""), file=out)
    return 1 if summary.get("canary_failed") else 0


def grade(results: list[Path], grading_dir: Path, judge: str, *, seed: int | None = None,
          single_model: bool = False, calibration: Path | None = None, options: JudgeOptions | None = None,
          out: Any = None, priming: Priming | None = None) -> dict[str, Any]:
    options = options or JudgeOptions()
    if judge == JUDGE_ID and (options.export_requests is not None or options.import_replies is not None):
        given = "--export-requests" if options.export_requests is not None else "--import-replies"
        raise GradingError(f"{given} is the file route of a model judge, and the judge is the offline "
                           f"{JUDGE_ID}, which sends no request: give the judge whose requests these are, "
                           f"--judge PRESET:MODEL (e.g. --judge openai:gpt-4.1-mini {given} FILE); nothing was graded")
    if judge != JUDGE_ID:
        parse_judge(judge)
    check_model_folders(results, grading_dir)
    if len(results) == 1 and not single_model:
        raise GradingError("one results folder alone is graded only with --single-model "
                           "(blind grading mixes the cells of several models)")
    from pytest_assistant_eval.suites.calibration.plan import load_calibration

    check_folders(results, grading_dir)
    for folder in results:  # a folder whose run still writes it is no finished folder
        refuse_live(folder, "grade-ai", GradingError)
    cases, levels = load_calibration(calibration or default_calibration_dir())
    loaded = [(folder, *load_results(folder, calibration)) for folder in results]  # names and run.json only
    check_no_cell_twice(loaded)
    check_one_world(loaded)
    if judge != JUDGE_ID:  # a model judge's first pass: every record checked, none kept
        for folder, _, records in loaded:
            for record in records:
                check_versions(folder, record, cases)
    grading_dir.mkdir(parents=True, exist_ok=True)
    with grading_lock(grading_dir, GradingError):
        index = _open_index(loaded, grading_dir, judge, seed, cases, options)
        created = index.pop("_new", False)
        if options.start_only:
            return {"started": True, "cells": len(index["order"])}
        if judge == JUDGE_ID:
            try:
                return _grade_locked(loaded, grading_dir, index, cases, levels, options,
                                     calibration or default_calibration_dir(), priming)
            except (GradingError, RecordError):
                if created:  # a record refused in the pass: this run leaves nothing behind
                    (grading_dir / "grading.json").unlink(missing_ok=True)
                raise
        if options.export_requests is not None or options.import_replies is not None:
            from pytest_assistant_eval.suites.calibration.grade.file_route import grade_with_files

            return grade_with_files(loaded, grading_dir, index, cases, levels, options)
        from pytest_assistant_eval.suites.calibration.grade.model_judge import grade_with_model

        return grade_with_model(loaded, grading_dir, index, cases, levels, options, out=out)


def check_versions(folder: Path, record: dict[str, Any], cases: CaseSet) -> None:
    versions = record["versions"]
    if versions["set_version"] != cases.questions.set_version or versions["key_version"] != cases.key.key_version:
        raise GradingError(f"{folder.name}/cells/{record['cell']}.json was asked with question set "
                           f"{versions['set_version']} and key {versions['key_version']}; "
                           f"this calibration has {cases.questions.set_version} and {cases.key.key_version}")


def parse_judge(judge: str) -> tuple[str, str]:
    """PRESET:MODEL of a model judge; anything else is refused naming the offline judge."""
    from pytest_assistant_eval.providers.presets import PRESETS

    preset, sep, model = judge.partition(":")
    if not sep or not model or preset not in PRESETS:
        raise GradingError(f"judge {judge!r} is not PRESET:MODEL of a provider preset "
                           f"({', '.join(sorted(PRESETS))}); the offline judge is {JUDGE_ID}")
    return preset, model


def judge_entry(judge: str, options: JudgeOptions) -> dict[str, Any]:
    if judge == JUDGE_ID:
        return {"grader": judge, **JUDGES[judge]}
    preset, model = parse_judge(judge)
    return {"grader": judge, "route": "api", "deterministic": False, "preset": preset, "model": model,
            "address": options.base_url, "rubric": JUDGE_RUBRIC}


def _open_index(loaded: list[tuple[Path, dict[str, Any], list[dict[str, Any]]]], grading_dir: Path, judge: str,
                seed: int | None, cases: CaseSet, options: JudgeOptions) -> dict[str, Any]:
    """grading.json: read (and checked against the folders and the judge), or written once."""
    index_path = grading_dir / "grading.json"
    folders = [{"name": folder.name, "path_hint": folder.name, "identity": run["identity"]} for folder, run, _ in loaded]
    if index_path.exists():
        index = read_json(index_path, GRADING_FORMAT)
        if [f["identity"] for f in index["folders"]] != [f["identity"] for f in folders]:
            raise GradingError(f"{grading_dir} grades another set of results folders; use another --dir")
        if index["judge"]["grader"] != judge:
            raise GradingError(f"{grading_dir} is graded by {index['judge']['grader']}, not {judge}; "
                               "give that --judge, or grade into another --dir")
        return index
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    # The cells sorted by (folder, cell), shuffled by the seed: one number a cell (grade/order.py).
    order = BlindOrder([folder.name for folder, _, _ in loaded], [records.names for _, _, records in loaded], seed)
    index = {"format": GRADING_FORMAT, "folders": folders, "judge": judge_entry(judge, options),
             "rubric_version": RUBRIC_VERSION, "seed": seed, "order": order,
             "key_version": cases.key.key_version, "set_version": cases.questions.set_version}
    if judge != JUDGE_ID:
        index["canary"] = {"n": len(order) + 1}  # never in order: no folder, no rate
    write_index(index_path, index)
    if judge != JUDGE_ID:
        index["order"] = list(order)  # a model judge's routes read the order as grading.json holds it
    index["_new"] = True  # (not written) a refusal before any cell is graded removes it again
    return index


STAGING = ".staging"


def _grade_locked(loaded: list[tuple[Path, dict[str, Any], FolderRecords]], grading_dir: Path,
                  index: dict[str, Any], cases: CaseSet, levels: levels_mod.Levels,
                  options: JudgeOptions, calibration: Path | None = None,
                  priming: Priming | None = None) -> dict[str, Any]:
    """The offline judge's single pass: each record read, checked and graded once, one at a time.

    Graded cells go to ``GRADING/.staging/`` first and into ``cells/`` only once every record
    has passed its checks, so a refusal anywhere (a record of another format, of another
    folder, of another key version) still writes nothing. A run killed before the move leaves
    staged cells, each the whole grade of a record that passed: the next run moves them in
    first. The pass runs on the machine's cores (records are independent); the folder is
    synced once per batch, never once per cell.
    """
    names = [records.names for _, _, records in loaded]
    numbers = cell_numbers(index["order"], [folder.name for folder, _, _ in loaded], names)
    if numbers is None:
        by_ref = {(o["folder"], o["cell"]) for o in index["order"]}
        folder, name = next((folder.name, name) for folder, _, records in loaded for name in records.names
                            if (folder.name, name) not in by_ref)
        raise GradingError(f"{folder}/{name} is not in this grading folder's blind order")
    cells_dir = grading_dir / "cells"
    staging = grading_dir / STAGING
    remove_stale_temporaries(cells_dir)  # what a killed run was writing
    _adopt_staged(staging, cells_dir)
    staging.mkdir(parents=True, exist_ok=True)
    wheres = [str(folder) for folder, _, _ in loaded]  # one string a folder, not one a job (100,000 jobs)
    # Made as the pass takes them: a name and its number are all a cell holds here (issue 32).
    jobs = ((where, name, n) for where, held, ns in zip(wheres, names, numbers) for name, n in zip(held, ns))
    count = sum(len(held) for held in names)
    identities = {str(folder): run["identity"] for folder, run, _ in loaded}
    graded = skipped = batch = 0
    primer = priming.DigestPrimer(grading_dir) if priming is not None else None
    prime_rows = priming.primed_rows if priming is not None else None
    try:
        for status, rows in _graded_cells(jobs, identities, grading_dir, calibration, options.changed, cases,
                                          levels, prime_rows, count=count):
            if status == "skipped":
                skipped += 1
                continue
            if primer is not None:
                primer.add(rows)
            graded += 1
            batch += 1
            if batch >= BATCH:
                sync_folder(staging)
                batch = 0
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # nothing of a refused run is kept
        if primer is not None:
            primer.discard()
        raise
    cells_dir.mkdir(exist_ok=True)
    _adopt_staged(staging, cells_dir)
    sync_folder(cells_dir)
    if primer is not None:
        primer.finish()  # the tables' digests, so their first run reads no file again (docs/digests.md)
    return {"graded": graded, "skipped": skipped}


def _adopt_staged(staging: Path, cells_dir: Path) -> None:
    """Move whole staged cells into ``cells/`` (a run killed after its pass left them)."""
    if not staging.is_dir():
        return
    remove_stale_temporaries(staging)
    with os.scandir(staging) as entries:  # one entry at a time: a listing of 100,000 cells is never held
        for entry in entries:
            if entry.name.endswith(".json"):
                cells_dir.mkdir(exist_ok=True)
                os.replace(entry.path, cells_dir / entry.name)
    try:
        staging.rmdir()
    except OSError:
        pass


# -- the pass itself, in worker processes ---------------------------------------------------

_WORKER: dict[str, Any] = {}


def _worker_start(calibration: str | None, grading_dir: str, identities: dict[str, Any], changed: bool,
                  prime_rows: Callable[..., list[Any]] | None = None) -> None:
    if "cases" not in _WORKER:  # a forked worker has the parent's (``_graded_cells``); a spawned one reads them
        from pytest_assistant_eval.suites.calibration.plan import load_calibration

        cases, levels = load_calibration(Path(calibration) if calibration else default_calibration_dir())
        _WORKER.update(cases=cases, levels=levels)
    _WORKER.update(grading_dir=Path(grading_dir), identities=identities, changed=changed, prime_rows=prime_rows)


def _grade_chunk(chunk: list[tuple[str, str, int]]) -> tuple[list[tuple[str, list[Any]]], tuple[str, str] | None]:
    """Grade some cells; (their statuses and digest rows, or the refusal that stops the run as (class, message))."""
    statuses = []
    try:
        for folder, name, n in chunk:
            statuses.append(grade_one(Path(folder), name, n, **_WORKER))
    except (GradingError, RecordError) as exc:
        return statuses, (type(exc).__name__, str(exc))
    return statuses, None


def grade_one(folder: Path, name: str, n: int, *, cases: CaseSet, levels: levels_mod.Levels, grading_dir: Path,
              identities: dict[str, Any], changed: bool,
              prime_rows: Callable[..., list[Any]] | None = None) -> tuple[str, list[Any]]:
    """Read, check and grade one record into the staging folder: ``graded`` or ``skipped``, and its digest rows.

    The rows (``prime_rows``: ``Priming.primed_rows``) are what the tables' digests would read
    these two files for; none without it.
    """
    record_path = folder / "cells" / f"{name}.json"
    try:
        before: os.stat_result | None = os.stat(record_path)
    except OSError:
        before = None  # read_record says what is wrong
    record = read_record(folder, name, identities[str(folder)])
    check_versions(folder, record, cases)
    material = material_sha(record, cases, JUDGE_ID)
    skip, history = previous_grade(grading_dir / "cells" / f"{n}.json", material, changed, n)
    if skip:
        return "skipped", []
    cell = graded_cell(n, folder, record, material, grade_record(record, cases, levels))
    if history:
        cell["history"] = history
    # Whole or absent after a kill (a fixed temporary name: the grading lock is held); synced per batch.
    target = grading_dir / STAGING / f"{n}.json"
    tmp = target.with_name(f".{n}.json.tmp")
    data = (json.dumps(cell, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    _write_new(tmp, data)
    os.replace(tmp, target)
    if prime_rows is None:
        return "graded", []
    return "graded", prime_rows(target, data, record_path, record, before, folder.name)


def _write_new(path: Path, data: bytes) -> None:
    """``path.write_bytes(data)`` without the buffered file object (the same file, mode 0o666 less
    the umask as ``open`` makes it; 16 of 36 us a cell, issue 32)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def _graded_cells(jobs: Iterable[tuple[str, str, int]], identities: dict[str, Any], grading_dir: Path,
                  calibration: Path | None, changed: bool, cases: CaseSet, levels: levels_mod.Levels,
                  prime_rows: Callable[..., list[Any]] | None = None, *,
                  count: int | None = None) -> Iterator[tuple[str, list[Any]]]:
    """Each job's status and digest rows, on a pool of the machine's cores when there is enough to share.

    ``jobs`` are taken as the pool asks for them (``count`` of them: ``len(jobs)`` by default)."""
    workers = int(os.environ.get("ASSISTANT_EVAL_GRADE_WORKERS") or min(os.cpu_count() or 1, 8))
    chunk = 32
    count = len(jobs) if count is None else count  # type: ignore[arg-type]
    if workers < 2 or count < 4 * chunk:
        context = {"cases": cases, "levels": levels, "grading_dir": grading_dir, "identities": identities,
                   "changed": changed, "prime_rows": prime_rows}
        for folder, name, n in jobs:
            yield grade_one(Path(folder), name, n, **context)
        return
    import multiprocessing

    taken = iter(jobs)
    chunks = iter(lambda: list(islice(taken, chunk)), [])  # made as the pool takes them
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    if method == "fork":
        # The workers inherit them: no worker reads the calibration again, nor builds the unit
        # registry and the date parser (0.4 s of CPU each; the parent grows by what each worker
        # would, so the largest process is no larger; issue 32).
        from pytest_assistant_eval.suites.calibration.readers import warm_up

        warm_up()
        _WORKER.update(cases=cases, levels=levels)
    pool = multiprocessing.get_context(method).Pool(
        workers, initializer=_worker_start,
        initargs=(str(calibration) if calibration else None, str(grading_dir), identities, changed, prime_rows))
    try:
        for statuses, refusal in pool.imap_unordered(_grade_chunk, chunks):
            yield from statuses
            if refusal is not None:
                kind, message = refusal
                raise (RecordError if kind == "RecordError" else GradingError)(message)
    finally:
        pool.terminate()
        pool.join()
        _WORKER.clear()


def sync_folder(folder: Path) -> None:
    """One sync for a batch of graded cells: ``syncfs`` of the folder's file system where Linux has
    it, else every file system (``sync``). A cell a power cut still tears is graded again."""
    global _SYNCFS
    if _SYNCFS is None:
        _SYNCFS = _find_syncfs()
    fd = os.open(folder, os.O_RDONLY)
    try:
        if _SYNCFS is False or _SYNCFS(fd) != 0:  # type: ignore[operator]
            os.sync()
    finally:
        os.close(fd)


_SYNCFS: Any = None


def _find_syncfs() -> Any:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).syncfs  # the process's own libc (find_library spawns ldconfig)
    except (OSError, AttributeError):
        return False


def read_grading(grading_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    index = read_json(grading_dir / "grading.json", GRADING_FORMAT)
    cells = [read_json(grading_dir / "cells" / f"{o['n']}.json", GRADED_CELL_FORMAT)
             for o in index["order"] if (grading_dir / "cells" / f"{o['n']}.json").exists()]
    return index, cells


def judge_options(args: Any) -> JudgeOptions:
    return JudgeOptions(base_url=args.base_url, accept_data_notice=args.accept_data_notice,
                        stream=not args.no_stream, pace=args.pace, max_requests_per_day=args.max_requests_per_day,
                        saved=args.saved_judgments, changed=args.changed, start_only=args.start_only,
                        export_requests=args.export_requests, import_replies=args.import_replies)
