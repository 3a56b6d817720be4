"""What a run may do to the folder it is given as ``--out`` (issue 23, item 5).

Two rules, both checked before the run writes anything:

- a grading folder (one holding ``grading.json``) or a folder inside one is never a results
  folder: a run written there mixed records with graded cells, and the grading could no
  longer be read or continued;
- a run cleans only what the harness itself created: the temporary files its atomic writes
  (``records.write_bytes_atomic``: ``.<name>.<8 random characters>.tmp``) leave when a
  process is killed, and only in the places it writes (the folder, ``cells/``, ``partial/``).
  Anything else an owner keeps in the folder (``notes/.my-draft.tmp``) is left alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from pytest_assistant_eval.records import GRADING_FORMAT, remove_stale_temporaries
from pytest_assistant_eval.write_rules import WriteRefused, check_child, check_folder

__all__ = ["refuse_grading_folder", "remove_harness_temporaries", "HARNESS_TEMPORARY"]

#: The name ``tempfile.mkstemp(prefix=".NAME.", suffix=".tmp")`` gives a temporary of file NAME.
HARNESS_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")
#: The files the harness writes at the top of a results folder (run.json, spent.json, ...).
TOP_FILES = frozenset({"run.json", "spent.json", "skips.json", ".ledger.json", ".writer.json"})
#: The folders of a results folder whose every ``*.json`` the harness writes (records, checkpoints).
RECORD_DIRS = ("cells", "partial")


def _is_grading_folder(folder: Path) -> bool:
    index = folder / "grading.json"
    if not index.is_file():
        return False
    try:
        return json.loads(index.read_text(encoding="utf-8")).get("format") == GRADING_FORMAT
    except (OSError, ValueError, AttributeError):
        return True  # a grading.json that does not parse is still no results folder's file


def refuse_grading_folder(out: Path, error: type[Exception]) -> None:
    """Raise ``error`` when ``out`` is a grading folder or lies inside one."""
    out = Path(out).absolute()
    for folder in (out, *out.parents):
        if _is_grading_folder(folder):
            where = "is a grading folder" if folder == out else f"is inside the grading folder {folder}"
            raise error(f"--out {out} {where} (it holds grading.json); a run writes a results folder: "
                        "choose another --out (e.g. _eval_reports/results)")


def check_run_folders(out: Path, labels: list[str], error: type[Exception], *, several: bool) -> None:
    """``run --out`` and each model's folder in it obey the one write rule (``write_rules``), or ``error``."""
    try:
        check_folder(out, "--out")
        for label in labels if several else ():
            check_child(out, label, "--out")
    except WriteRefused as exc:
        raise error(str(exc)) from None


def remove_harness_temporaries(folder: Path) -> int:
    """Delete the temporaries a killed writer of the harness left in a results folder; never another file."""
    def ours_in(names: Callable[[str], bool]) -> Callable[[Path], bool]:
        def check(path: Path) -> bool:
            found = HARNESS_TEMPORARY.match(path.name)
            return found is not None and names(found.group("name")) and path.is_file()
        return check

    removed = remove_stale_temporaries(folder, ours_in(lambda name: name in TOP_FILES), deep=False)
    for sub in RECORD_DIRS:
        removed += remove_stale_temporaries(folder / sub, ours_in(lambda name: name.endswith(".json")), deep=False)
    return removed
