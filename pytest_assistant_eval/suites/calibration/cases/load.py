"""Loading every case file of ``calibration/`` at once (S2.5).

``load_cases`` reads the question set, the answer key and every task, checks them
against each other, the world's tools and its variants, and raises one
:class:`CaseFileErrors` listing every problem, or returns the :class:`CaseSet`.
The tool names and variants are parameters, so this package never imports the world.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from .errors import CaseError, CaseFileErrors
from .key import DEFAULT_LEVELS, parse_answer_key
from .model import AnswerKey, CaseSet, QuestionSet, Task
from .questions import parse_question_set
from .tasks import parse_task
from pytest_assistant_eval.yaml_source import Source

__all__ = ["load_cases", "load_question_set", "load_answer_key", "load_tasks", "QUESTION_SET_FILE", "ANSWER_KEY_FILE", "TASKS_DIR"]

QUESTION_SET_FILE = "grounding_set.yaml"
ANSWER_KEY_FILE = "answer_key.yaml"
TASKS_DIR = "tasks"


def _raise(errors: list[CaseError]) -> None:
    if errors:
        raise CaseFileErrors(errors)


def load_question_set(path: Path, variants: Collection[str]) -> QuestionSet:
    errors: list[CaseError] = []
    qs = parse_question_set(Source(Path(path), errors), set(variants))
    _raise(errors)
    assert qs is not None
    return qs


def load_answer_key(path: Path, variants: Collection[str], tool_names: Collection[str], levels: Collection[str] = DEFAULT_LEVELS) -> AnswerKey:
    errors: list[CaseError] = []
    key = parse_answer_key(Source(Path(path), errors), set(variants), set(tool_names), set(levels))
    _raise(errors)
    assert key is not None
    return key


def _task_files(tasks_dir: Path) -> list[Path]:
    return sorted([*tasks_dir.glob("*.yaml"), *tasks_dir.glob("*.yml")])


def _read_tasks(tasks_dir: Path, tool_names: set[str], variants: set[str], errors: list[CaseError]) -> list[Task]:
    tasks: list[Task] = []
    if not tasks_dir.is_dir():
        errors.append(CaseError(str(tasks_dir), 0, "the tasks folder is missing"))
        return tasks
    files = _task_files(tasks_dir)
    if not files:
        errors.append(CaseError(str(tasks_dir), 0, "the tasks folder has no task files (*.yaml)"))
    seen: dict[str, Task] = {}
    broken: set[str] = set()
    some_unnamed = False
    for path in files:
        src = Source(path, errors)
        task = parse_task(src, tool_names, variants)
        broken |= src.broken_ids
        some_unnamed |= src.broken_without_id
        if task is None:
            continue
        if task.id in seen:
            first = seen[task.id]
            errors.append(CaseError(task.file, task.line, f"duplicate task id {task.id!r} (first in {first.file}:{first.line})"))
            continue
        seen[task.id] = task
        tasks.append(task)
    by_id = {t.id: t for t in tasks}
    for t in tasks:
        if t.pair is None:
            continue
        other = by_id.get(t.pair)
        if other is None and (t.pair in broken or some_unnamed):
            continue  # its file has errors of its own
        if other is None:
            errors.append(CaseError(t.file, t.line, f"task {t.id}: its pair {t.pair!r} is not a task"))
        elif other.pair != t.id:
            back = f"points to {other.pair!r}" if other.pair else "names no pair"
            errors.append(CaseError(t.file, t.line, f"task {t.id}: its pair {t.pair} does not point back ({t.pair} {back})"))
    return tasks


def load_tasks(tasks_dir: Path, tool_names: Collection[str], variants: Collection[str]) -> tuple[Task, ...]:
    errors: list[CaseError] = []
    tasks = _read_tasks(Path(tasks_dir), set(tool_names), set(variants), errors)
    _raise(errors)
    return tuple(tasks)


def load_cases(
    calibration_dir: Path | str,
    tool_names: Collection[str],
    variants: Collection[str],
    *,
    levels: Collection[str] = DEFAULT_LEVELS,
) -> CaseSet:
    """Every case of ``calibration_dir``, validated together; raises :class:`CaseFileErrors`
    with every error of every file (never only the first)."""
    base = Path(calibration_dir)
    tools, vars_ = set(tool_names), set(variants)
    errors: list[CaseError] = []
    qsrc = Source(base / QUESTION_SET_FILE, errors)
    qs = parse_question_set(qsrc, vars_)
    ksrc = Source(base / ANSWER_KEY_FILE, errors)
    key = parse_answer_key(ksrc, vars_, tools, set(levels))
    tasks = _read_tasks(base / TASKS_DIR, tools, vars_, errors)
    if qs is not None and key is not None:
        asked = {q.id: q for q in (*qs.questions, *qs.scenario.turns)}
        for qid, entry in key.entries.items():
            if qid not in asked and qid not in qsrc.broken_ids and not qsrc.broken_without_id:
                errors.append(CaseError(ksrc.display, entry.line, f"key entry {qid}: no such question in {QUESTION_SET_FILE}"))
        for qid, q in asked.items():
            if qid not in key.entries and qid not in ksrc.broken_ids:
                errors.append(CaseError(qsrc.display, q.line, f"question {qid} has no entry in {ANSWER_KEY_FILE}"))
        task_ids = {t.id for t in tasks}
        for qid, q in asked.items():
            if qid in task_ids:
                errors.append(CaseError(qsrc.display, q.line, f"question {qid} has the id of a task"))
    _raise(errors)
    assert qs is not None and key is not None
    return CaseSet(questions=qs, key=key, tasks=tuple(tasks))
