"""The folder rules every grading keeps, whatever its suite (S6.4): which results folders and which --dir.

The same folder twice would grade its cells twice; two folders of one name would merge their
cells (a grading names its folders by name); a grading folder inside a results folder writes
graded cells among the records. The calibration's grade-ai and AgentDojo's both ask these
before anything is written (issue 32: they were in the calibration's grade, which AgentDojo
had to import).
"""

from __future__ import annotations

import shlex
import unicodedata
from pathlib import Path

from pytest_assistant_eval.judging.errors import GradingError

__all__ = ["folder_name_key", "check_model_folders", "check_folders"]


def folder_name_key(name: str) -> str:
    """The form in which two folder names collide: as a file name on a disk that folds case or
    normalises Unicode (a graded folder's name is the key of its cells and of its digest file)."""
    return unicodedata.normalize("NFC", name).casefold()


def check_model_folders(results: list[Path], grading_dir: Path) -> None:
    """A run of several models writes a parent folder of results folders: name them, not "run.json: no such file"."""
    for folder in results:
        if (folder / "run.json").exists() or not folder.is_dir():
            continue
        try:
            inside = sorted(p for p in folder.iterdir() if p.is_dir() and (p / "run.json").exists())
        except OSError:
            continue
        if inside:
            others = [shlex.quote(str(f)) for f in results if f != folder]
            given = " ".join([*others, *(shlex.quote(str(p)) for p in inside)])
            raise GradingError(f"{folder} is the parent folder of a run of {len(inside)} model(s), not a results "
                               f"folder; its results folders are {', '.join(p.name for p in inside)}: grade them "
                               f"together: assistant-eval grade-ai {given} --dir {shlex.quote(str(grading_dir))}")


def check_folders(results: list[Path], grading_dir: Path) -> None:
    """The same folder twice would grade its cells twice; a grading folder inside a results folder
    writes graded cells among the records, after which that folder cannot be graded again."""
    from pytest_assistant_eval.write_rules import WriteRefused, check_folder

    try:
        check_folder(grading_dir, "--dir")  # the one rule of where a command writes (issue 31 D/E)
    except WriteRefused as exc:
        raise GradingError(str(exc)) from None
    seen: dict[Path, Path] = {}
    names: dict[str, Path] = {}
    target = grading_dir.resolve()
    for folder in results:
        real = folder.resolve()
        if real in seen:
            raise GradingError(f"the results folder {folder} is given twice (also as {seen[real]})")
        seen[real] = folder
        # A grading names its folders by name (the blind order, graded cells, digests, tables):
        # two of one name (a/res, b/res; or Res and res on a disk that folds case) would merge.
        name = folder_name_key(folder.name)
        if name in names:
            raise GradingError(f"the results folders {names[name]} and {folder} have the same name "
                               f"({names[name].name!r}, {folder.name!r}): a grading names its folders by name, "
                               "so their cells would be merged; rename one and grade them again")
        names[name] = folder
        if target == real or real in target.parents:
            raise GradingError(f"--dir {grading_dir} is inside the results folder {folder}: choose a grading "
                               "folder outside every results folder (e.g. _eval_reports/grading)")
