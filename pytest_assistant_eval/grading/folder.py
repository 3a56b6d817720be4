"""``grade-ai``: results folders in, a grading folder out (S6.4, with the offline judge).

The grading folder holds ``grading.json`` (the folder set, the judge, the seed and the
blind order) and ``cells/<n>.json`` (one graded cell each: the automatic checks' items,
the judge's verdicts, the outcome). Every record is read and checked before anything
is written, so a malformed record or one of another format grades nothing. A cell
already graded from the same material is skipped when the command runs again.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from pytest_assistant_eval.paths import default_calibration_dir
from pytest_assistant_eval import levels as levels_mod
from pytest_assistant_eval.cases.errors import CaseFileErrors
from pytest_assistant_eval.cases.model import CaseSet
from pytest_assistant_eval.levels import LevelsError
from pytest_assistant_eval.grading.answers import check_answer
from pytest_assistant_eval.grading.items import Item
from pytest_assistant_eval.grading.outcomes import question_outcome, worst
from pytest_assistant_eval.grading.rules_judge import JUDGE_ID, judge_items
from pytest_assistant_eval.grading.tasks import grade_task, task_outcome
from pytest_assistant_eval.records import (
    CELL_FORMAT,
    GRADED_CELL_FORMAT,
    GRADING_FORMAT,
    RUN_FORMAT,
    RecordError,
    read_json,
    write_json_atomic,
)

JUDGES = {JUDGE_ID: {"route": "offline", "deterministic": True}}
RUBRIC_VERSION = "r1"


class GradingError(Exception):
    """Why nothing was graded; the message names the files or cells."""


def _sha(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _case_material(cases: CaseSet, record: dict[str, Any]) -> Any:
    """What the key says about this cell's case: a changed entry or task is changed material."""
    import dataclasses

    if record["kind"] == "task":
        task = next((t for t in cases.tasks if t.id == record["case"]), None)
        # Where the task stands (file, line) is not what it says.
        return repr(dataclasses.replace(task, file="", line=0)) if task is not None else None
    ids = [record["case"]] if record["kind"] == "question" else [q.id for q in cases.questions.scenario.turns]
    entries = [cases.key.entries.get(i) for i in ids]
    return [repr(dataclasses.replace(e, line=0)) if e is not None else None for e in entries]


def load_results(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """run.json and every cell record of one results folder, each checked for its format."""
    run = read_json(folder / "run.json", RUN_FORMAT)
    records = []
    for path in sorted((folder / "cells").glob("*.json")):
        record = read_json(path, CELL_FORMAT)
        for key in ("cell", "case", "kind", "class", "level", "repeat", "transcript", "service_log", "turns", "state",
                    "model", "user", "versions", "world"):
            if key not in record:
                raise RecordError(f"{path}: the record has no {key!r}")
        if record["cell"] != path.stem:
            raise RecordError(f"{path}: the record is of cell {record['cell']!r}, not {path.stem!r}")
        _check_belongs(folder, path, run["identity"], record)
        records.append(record)
    # A run of some cells (-k, -m) plans only those; every cell some run of the folder planned must be finished.
    planned = list(dict.fromkeys(c for entry in run["runs"] for c in entry["matrix"]["cells"]))
    from pytest_assistant_eval.skips import read_skips

    have = {r["cell"] for r in records} | set(read_skips(folder))  # a skipped cell is no gap
    missing = [c for c in planned if c not in have]
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        ident = run["identity"]
        raise GradingError(f"{folder.name}: {len(missing)} cell(s) not finished: {shown}; finish them first: "
                           f"assistant-eval run --world WORLD --model {ident['preset']}:{ident['model']} "
                           f"--out {folder} --resume")
    return run, records


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


def check_folders(results: list[Path], grading_dir: Path) -> None:
    """The same folder twice would grade its cells twice; a grading folder inside a results folder
    writes graded cells among the records, after which that folder cannot be graded again."""
    seen: dict[Path, Path] = {}
    target = grading_dir.resolve()
    for folder in results:
        real = folder.resolve()
        if real in seen:
            raise GradingError(f"the results folder {folder} is given twice (also as {seen[real]})")
        seen[real] = folder
        if target == real or real in target.parents:
            raise GradingError(f"--dir {grading_dir} is inside the results folder {folder}: choose a grading "
                               "folder outside every results folder (e.g. _eval_reports/grading)")


def grade_record(record: dict[str, Any], cases: CaseSet, levels: levels_mod.Levels) -> dict[str, Any]:
    """Automatic checks, then the offline judge, for one record."""
    level = levels.levels[record["level"]]
    items: list[Item] = []
    result: dict[str, Any] = {}
    if record["user"].get("user_error"):
        return {"outcome": "user_error", "items": [], "user_error": record["user"]["user_error"]}
    if record["kind"] == "task":
        task = next(t for t in cases.tasks if t.id == record["case"])
        grade = grade_task(task, record, level.escalation_sentence)
        items = grade.items
        result["task"] = grade.to_dict()
        verdicts = _judge(items)
        outcome, final = task_outcome(grade, {k: v["verdict"] for k, v in verdicts.items()})
        result["task"]["final"] = final
        result["outcome"] = outcome
    else:
        parts = []
        tool_texts: list[str] = []
        user_texts: list[str] = []
        question_ids = [record["case"]] if record["kind"] == "question" else [
            q.id for q in cases.questions.scenario.turns]
        turns_final = {t["turn"]: t for t in record["turns"]}
        for turn_index, qid in enumerate(question_ids):
            for entry in record["transcript"]:
                if entry.get("turn") != turn_index:
                    continue
                if entry["type"] == "tool":
                    tool_texts.append(entry["text"])
                elif entry["type"] == "user":
                    user_texts.append(entry["text"])
            answer = turns_final.get(turn_index, {}).get("final", "")
            key = cases.key.entries[qid]
            turn_items, flags = check_answer(key, answer, tool_texts=list(tool_texts), user_texts=list(user_texts),
                                             escalation_sentence=level.escalation_sentence)
            for item in turn_items:
                item.id = f"{qid}/{item.id}"
            items.extend(turn_items)
            parts.append((qid, turn_items, flags))
        verdicts = _judge(items)
        flat = {k: v["verdict"] for k, v in verdicts.items()}
        result["parts"] = []
        for qid, turn_items, flags in parts:
            out = question_outcome(turn_items, flags, flat)
            out.update({"question": qid, "escalated": flags.escalated, "items": [i.id for i in turn_items]})
            result["parts"].append(out)
        result["outcome"] = worst([p["outcome"] for p in result["parts"]])
    result["items"] = [i.to_dict() for i in items]
    result["judge"] = {"grader": JUDGE_ID, **JUDGES[JUDGE_ID], "verdicts": verdicts,
                       "understandability": 1 if record["turns"] and any(t["final"] for t in record["turns"]) else None}
    return result


def _judge(items: list[Item]) -> dict[str, dict[str, Any]]:
    return judge_items(items)


def grade_command(results: list[Path], grading_dir: Path, judge: str, *, seed: int | None = None,
                  single_model: bool = False, calibration: Path | None = None, out=sys.stdout) -> int:
    try:
        summary = grade(results, grading_dir, judge, seed=seed, single_model=single_model, calibration=calibration)
    except (GradingError, RecordError, CaseFileErrors, LevelsError) as exc:
        print(f"assistant-eval grade-ai: {exc}", file=sys.stderr)
        return 2
    print(f"Graded {summary['graded']} cell(s), {summary['skipped']} already graded, into {grading_dir}", file=out)
    return 0


def grade(results: list[Path], grading_dir: Path, judge: str, *, seed: int | None = None,
          single_model: bool = False, calibration: Path | None = None) -> dict[str, int]:
    if judge not in JUDGES:
        raise GradingError(f"judge {judge!r} is not available here; the offline judge is {JUDGE_ID} "
                           "(model judges come with the judge issue)")
    if len(results) == 1 and not single_model:
        raise GradingError("one results folder alone is graded only with --single-model "
                           "(blind grading mixes the cells of several models)")
    from pytest_assistant_eval.planning import load_calibration

    check_folders(results, grading_dir)
    cases, levels = load_calibration(calibration or default_calibration_dir())
    loaded = []
    for folder in results:
        run, records = load_results(folder)
        for record in records:
            versions = record["versions"]
            if versions["set_version"] != cases.questions.set_version or versions["key_version"] != cases.key.key_version:
                raise GradingError(f"{folder.name}/cells/{record['cell']}.json was asked with question set "
                                   f"{versions['set_version']} and key {versions['key_version']}; "
                                   f"this calibration has {cases.questions.set_version} and {cases.key.key_version}")
        loaded.append((folder, run, records))
    worlds = {run["identity"]["world"] for _, run, _ in loaded}
    if len(worlds) > 1:
        raise GradingError("these results folders were made on different builds of the world; "
                           "they cannot be graded together")
    grading_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(grading_dir / ".lock"))
    try:
        lock.acquire(timeout=0.5)
    except Timeout:
        raise GradingError(f"{grading_dir} is in use by another grade-ai, review or summary --record") from None
    try:
        return _grade_locked(loaded, grading_dir, judge, seed, cases, levels)
    finally:
        lock.release()


def _grade_locked(loaded: list[tuple[Path, dict[str, Any], list[dict[str, Any]]]], grading_dir: Path, judge: str,
                  seed: int | None, cases: CaseSet, levels: levels_mod.Levels) -> dict[str, int]:
    index_path = grading_dir / "grading.json"
    folders = [{"name": folder.name, "path_hint": folder.name, "identity": run["identity"]} for folder, run, _ in loaded]
    if index_path.exists():
        index = read_json(index_path, GRADING_FORMAT)
        if [f["identity"] for f in index["folders"]] != [f["identity"] for f in folders]:
            raise GradingError(f"{grading_dir} grades another set of results folders; use another --dir")
    else:
        seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        cells = [{"folder": folder.name, "cell": r["cell"]} for folder, _, records in loaded for r in records]
        cells.sort(key=lambda c: (c["folder"], c["cell"]))
        random.Random(seed).shuffle(cells)
        order = [{"n": n, **c} for n, c in enumerate(cells, start=1)]
        index = {"format": GRADING_FORMAT, "folders": folders, "judge": {"grader": judge, **JUDGES[judge]},
                 "rubric_version": RUBRIC_VERSION, "seed": seed, "order": order,
                 "key_version": cases.key.key_version, "set_version": cases.questions.set_version}
        write_json_atomic(index_path, index)
    by_ref = {(o["folder"], o["cell"]): o["n"] for o in index["order"]}
    graded = skipped = 0
    for folder, _, records in loaded:
        for record in records:
            n = by_ref.get((folder.name, record["cell"]))
            if n is None:
                raise GradingError(f"{folder.name}/{record['cell']} is not in this grading folder's blind order")
            material = _sha({"record": record, "key": _case_material(cases, record), "rubric": RUBRIC_VERSION})
            path = grading_dir / "cells" / f"{n}.json"
            if path.exists():
                old = read_json(path, GRADED_CELL_FORMAT)
                if old["material_sha256"] == material:
                    skipped += 1
                    continue
                raise GradingError(f"cell #{n} changed since it was graded (its answer, the key or the rubric); "
                                   "grading it again needs --changed, which this version does not have yet")
            result = grade_record(record, cases, levels)
            graded_cell = {
                "format": GRADED_CELL_FORMAT,
                "n": n,
                "source": {"folder": folder.name, "cell": record["cell"]},
                "material_sha256": material,
                "model": record["model"],
                "level": record["level"],
                "case": record["case"],
                "kind": record["kind"],
                "class": record["class"],
                "repeat": record["repeat"],
                "conversation_seconds": record.get("conversation_seconds"),
                "requests": len(record.get("requests", [])),
                # Carried for the results lines (S4.8); never part of what a judge is shown.
                "resumes": (record.get("resume") or {}).get("count", 0),
                "resume_points": [{k: p.get(k) for k in ("turn", "round", "request", "code")}
                                  for p in (record.get("resume") or {}).get("points", [])],
                "resume_codes": sorted({p.get("code") for p in (record.get("resume") or {}).get("points", [])}),
                **result,
            }
            write_json_atomic(path, graded_cell)
            graded += 1
    return {"graded": graded, "skipped": skipped}


def read_grading(grading_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    index = read_json(grading_dir / "grading.json", GRADING_FORMAT)
    cells = [read_json(grading_dir / "cells" / f"{o['n']}.json", GRADED_CELL_FORMAT)
             for o in index["order"] if (grading_dir / "cells" / f"{o['n']}.json").exists()]
    return index, cells
