"""``assistant-eval demo --out DIR`` never deletes a folder it did not make (issue 10, item 1).

The demo used to remove DIR whatever it held: ``--out .`` removed a project folder, ``.git``
included. It now writes into an empty or new folder, marks it as a demo folder, and on a later
run replaces only what it wrote there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_assistant_eval.demo import DEMO_MARK, DemoFolderRefused, prepare_demo_folder


def demo(out: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "demo", "--out", str(out)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def test_demo_refuses_a_folder_that_holds_anything_else_and_deletes_nothing(tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "notes.txt").write_text("mine", encoding="utf-8")
    proc = demo(Path("."), cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not empty and not a demo folder" in proc.stderr and str(project) in proc.stderr
    assert (project / ".git").is_dir() and (project / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in project.iterdir()) == [".git", "notes.txt"]


def test_a_new_or_empty_folder_becomes_a_demo_folder(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new" / "demo", empty):
        prepare_demo_folder(out)
        assert (out / DEMO_MARK).is_file()


def test_a_demo_folder_run_again_loses_only_what_the_demo_wrote(tmp_path):
    out = tmp_path / "demo"
    prepare_demo_folder(out)
    for part in ("world", "results", "grading"):
        (out / part / "sub").mkdir(parents=True)
    (out / "my notes.txt").write_text("kept", encoding="utf-8")
    prepare_demo_folder(out)
    assert sorted(p.name for p in out.iterdir()) == [DEMO_MARK, "my notes.txt"]


def test_a_file_given_as_the_demo_folder_is_refused(tmp_path):
    path = tmp_path / "a file"
    path.write_text("x", encoding="utf-8")
    with pytest.raises(DemoFolderRefused, match="not a folder"):
        prepare_demo_folder(path)
    assert path.read_text(encoding="utf-8") == "x"
