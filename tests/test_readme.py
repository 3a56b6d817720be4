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

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETUP = [
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && assistant-eval demo",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test,agentdojo]' && pytest -n 2",
]
INSTALL = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && "


def bash_blocks(text: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^```bash\n(.*?)^```", text, re.MULTILINE | re.DOTALL)]


def fresh_copy(target: Path) -> Path:
    """The tracked files of the working tree, as a clone would have them (no _eval_reports, no caches)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


#: A benchmark's exit codes: 1 says a measured rate missed its bar (seconds of sending are too few
#: in a test to reach it); the README's command itself ran.
MEASURED = {0, 1}


def commands_of(block: str) -> list[str]:
    """A block as its commands: benchmark lines one by one (each its own exit code), others whole."""
    lines = block.splitlines()
    if all(line.startswith("python benchmarks/") for line in lines):
        return lines
    return [block]


def run_block(block: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", "set -euo pipefail\n" + block], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


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


def test_every_readme_block_runs_in_order_in_a_fresh_copy(tmp_path):
    blocks = bash_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    copy = fresh_copy(tmp_path / "clone ä")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER",
                                                             "PYTEST_XDIST_TESTRUNUID", "PYTEST_CURRENT_TEST")}
    env["PYTHONPATH"] = str(copy)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    runnable = [blocks[0].removeprefix(INSTALL), *blocks[2:]]  # the demo, then every later block
    for number, block in enumerate(runnable, start=1):
        for command in commands_of(block):
            done = run_block(command, copy, env)
            allowed = MEASURED if "bench_pacing.py" in command else {0}
            assert done.returncode in allowed, (f"README block {number} failed (exit {done.returncode}):\n"
                                                f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    assert (copy / "_eval_reports" / "grading" / "grading.json").is_file()
