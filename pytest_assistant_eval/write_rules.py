"""Where each command may write: one rule, checked before anything is written (issue 31, items D and E).

Every command that writes where its user points it (``run --out``, ``grade-ai --dir``,
``report --out``) asks this module first, and a refusal names the rule it breaks:

1. never a filesystem root (``--out /`` made ``/run.json`` and ``/cells/``);
2. never inside a grounding world or a calibration folder (they are inputs of every run);
3. never over a file the harness reads: a results folder's or a grading folder's own files
   (``run.json``, ``grading.json``, ``spent.json``, their ``cells/`` and ``partial/``), the results
   file ``results.jsonl``; a page the report writes is an ``.html`` file;
4. never outside ``--out`` through a model's name (a model named ``..``).

It sits below every stage (like ``paths``): it reads only names and markers, imports no stage.
"""

from __future__ import annotations

from pathlib import Path

WORLD_MARKER = ".assistant_eval_world.json"
#: The files of a results or grading folder the harness reads back (and the append-only results file).
HARNESS_FILES = frozenset({"run.json", "grading.json", "spent.json", "skips.json", ".ledger.json", ".writer.json",
                           "results.jsonl", "review.json", "queue.json", WORLD_MARKER})
#: The folders of a results or grading folder whose files are records the harness reads back.
RECORD_DIRS = frozenset({"cells", "partial", "broken", ".work", ".usage"})
#: What a page written by the report may be named like.
PAGE_SUFFIXES = (".html", ".htm")


class WriteRefused(ValueError):
    """A command was pointed where it may not write; the message names the option and the rule."""


def _absolute(path: Path) -> Path:
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return Path(path).expanduser().absolute()


def _is_calibration(folder: Path) -> bool:
    return (folder / "levels.yaml").is_file() and (folder / "cells.py").is_file()


def _is_harness_folder(folder: Path) -> bool:
    return (folder / "run.json").is_file() or (folder / "grading.json").is_file()


def _common_rules(target: Path, option: str, shown: Path, calibration: Path | None) -> None:
    if target == Path(target.anchor):
        raise WriteRefused(f"{option} {shown} is a filesystem root: the harness never writes there "
                           "(rule: never a filesystem root); choose a folder of its own, e.g. _eval_reports/…")
    calibration_real = _absolute(calibration) if calibration is not None else None
    for folder in (target, *target.parents):
        if (folder / WORLD_MARKER).is_file():
            raise WriteRefused(f"{option} {shown} is inside the grounding world {folder} (rule: never into a world "
                               "or a calibration folder, they are every run's inputs); choose a folder outside it")
        if folder == calibration_real or _is_calibration(folder):
            raise WriteRefused(f"{option} {shown} is inside the calibration folder {folder} (rule: never into a "
                               "world or a calibration folder, they are every run's inputs); choose a folder "
                               "outside it")


def check_folder(path: Path, option: str, *, calibration: Path | None = None) -> None:
    """``path`` may be the folder a command writes (``run --out``, ``grade-ai --dir``), or :class:`WriteRefused`."""
    target = _absolute(path)
    _common_rules(target, option, Path(path), calibration)
    for folder in (target, *target.parents):
        if folder.name in RECORD_DIRS and _is_harness_folder(folder.parent):
            raise WriteRefused(f"{option} {path} is inside {folder}, the records of {folder.parent} (rule: never "
                               "over a file the harness reads); choose a folder outside it")


def check_page(path: Path, option: str, *, calibration: Path | None = None) -> None:
    """``path`` may be the page ``report`` writes, or :class:`WriteRefused` naming the rule."""
    target = _absolute(path)
    _common_rules(target, option, Path(path), calibration)
    if target.name in HARNESS_FILES or target.suffix == ".jsonl":
        raise WriteRefused(f"{option} {path} is a file the harness reads ({target.name}) (rule: never over a file "
                           "the harness reads); write the page elsewhere, e.g. GRADING/report.html")
    if target.parent.name in RECORD_DIRS and _is_harness_folder(target.parent.parent):
        raise WriteRefused(f"{option} {path} is a record of {target.parent.parent} (rule: never over a file the "
                           "harness reads); write the page elsewhere, e.g. GRADING/report.html")
    if target.suffix.lower() not in PAGE_SUFFIXES:
        raise WriteRefused(f"{option} {path} does not end in .html (rule: the report writes a page, never over "
                           "another kind of file); name the page e.g. report.html")
    if target.is_dir():
        raise WriteRefused(f"{option} {path} is a folder (rule: the report writes one page); name a file in it")


def check_child(parent: Path, name: str, option: str) -> None:
    """A folder named after a model (``name``) must stay inside ``parent`` (rule 4)."""
    if name in ("", ".", "..") or "/" in name or "\\" in name or any(ord(c) < 32 for c in name):
        raise WriteRefused(f"the model's folder name {name!r} would not be a folder inside {option} {parent} "
                           "(rule: never outside --out through a model's name); rename the model")
    real, inside = _absolute(parent), _absolute(Path(parent) / name)
    if inside.parent != real:
        raise WriteRefused(f"the model's folder {name!r} resolves outside {option} {parent} (rule: never outside "
                           "--out through a model's name); rename the model")
