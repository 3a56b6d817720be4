"""The README runs as written (issue 10, item 8): every ``bash`` block, in order, in a fresh copy.

The copy holds the repository's tracked files as they are in the working tree (what a clone
of this commit holds) and nothing the suite or an earlier run made. ``PYTHONPATH`` points at
the copy, so ``assistant-eval`` and ``python -m`` run the copy's package and its shipped
calibration. The two set-up commands cannot run here (a virtual environment and a network
install; the second is this very suite): they are checked word for word, and the first one's
``assistant-eval demo`` is run. Every other block runs as it stands, each with ``set -e`` from
the copy's root; a command that fails names its block.
"""

from __future__ import annotations

import re
from pathlib import Path

from readme_helpers import INSTALL, WAITS, ReadmeDemo, Waiting, bash_blocks, copy_env, numbered_commands, run_block

REPO = Path(__file__).resolve().parent.parent
SETUP = [
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && assistant-eval demo",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test,agentdojo]' && pytest -n 2",
]


#: A benchmark's exit codes: 1 says a measured rate missed its bar (seconds of sending are too few
#: in a test to reach it); the README's command itself ran.
MEASURED = {0, 1}


def test_the_two_setup_commands_are_kept_word_for_word():
    blocks = bash_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    assert blocks[:2] == SETUP
    assert (REPO / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith("pytest -n 2")


def test_the_readme_test_command_installs_what_ci_installs():
    """The README's test command is what .ci/run does: the same extras, then the same pytest."""
    readme = bash_blocks((REPO / "README.md").read_text(encoding="utf-8"))[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    extras = re.findall(r"pip install (?:--quiet )?-e '(\.\[[^\]]*\])'", ci)
    assert extras and re.findall(r"pip install -e '(\.\[[^\]]*\])'", readme) == extras


def test_every_readme_block_runs_in_order_in_a_fresh_copy(readme_waits: list[Waiting], readme_demo: ReadmeDemo):
    """Block 1's demo ran in the session's fresh copy (conftest.py's ``readme_demo``, which
    test_demo_matrix.py reads too); every later block runs after it, in order, in that copy
    (a command of readme_helpers.WAITS from the session's start, in a copy of its own:
    conftest.py's ``readme_waits``)."""
    blocks = bash_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    copy = readme_demo.copy
    env = copy_env(copy)
    assert readme_demo.command == blocks[0].removeprefix(INSTALL)
    assert readme_demo.returncode == 0, (f"README block 1 failed (exit {readme_demo.returncode}):\n"
                                         f"{readme_demo.command}\n{readme_demo.stdout[-3000:]}\n"
                                         f"{readme_demo.stderr[-3000:]}")
    numbered = numbered_commands(blocks)
    assert len(readme_waits) == len(WAITS), "a README command the test waits for is gone from the README"
    assert [(w.number, w.command) for w in readme_waits] == [
        (number, command) for number, command in numbered if any(name in command for name in WAITS)]
    for number, command in numbered:  # every block after the demo, in order
        if any(name in command for name in WAITS):
            continue
        done = run_block(command, copy, env)
        assert done.returncode == 0, (f"README block {number} failed (exit {done.returncode}):\n"
                                      f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    for waited in readme_waits:
        returncode, stdout, stderr = waited.result(timeout=600)
        assert returncode in MEASURED, (f"README block {waited.number} failed (exit {returncode}):\n"
                                        f"{waited.command}\n{stdout[-3000:]}\n{stderr[-3000:]}")
    assert (copy / "_eval_reports" / "grading" / "grading.json").is_file()
