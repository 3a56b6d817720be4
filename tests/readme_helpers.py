"""The README's fresh copy and its first command's demo, made once per test session (issue 32, test-suite speed).

tests/test_readme.py runs every README block in order in a fresh copy; tests/test_demo_matrix.py checks
the demo's matrix. Both need the same `assistant-eval demo` (the README's first command, after the
install), the suite's longest single run, so it runs once for real, in the copy, by the first worker
that asks (under a file lock); test_readme then runs the later blocks in that same copy, and
test_demo_matrix reads the demo's folder there (``_eval_reports/demo``, which no later block writes).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

REPO = Path(__file__).resolve().parent.parent
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


def copy_env(copy: Path) -> dict[str, str]:
    """The environment a README block runs in: the copy's package first, no pytest worker's variables."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER",
                                                             "PYTEST_XDIST_TESTRUNUID", "PYTEST_CURRENT_TEST")}
    env["PYTHONPATH"] = str(copy)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_block(block: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_shell(block), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def start_block(block: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """A README command started in the background (:func:`run_block`'s shell, not waited for)."""
    return subprocess.Popen(_shell(block), cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _shell(block: str) -> list[str]:
    """A README block as bash runs it here: stopping at the first failing command."""
    return ["bash", "-c", "set -euo pipefail\n" + block]


@dataclass(frozen=True)
class ReadmeDemo:
    """The fresh copy, and what the README's demo command did in it."""

    copy: Path
    command: str
    returncode: int
    stdout: str
    stderr: str

    @property
    def demo_folder(self) -> Path:
        """The demo's folder, from the ``Report:`` line it prints (relative to the copy it ran in)."""
        found = re.search(r"^Report: (.+\.html) \(", self.stdout, re.M)
        assert found, self.stdout[-2000:]
        return self.copy / Path(found.group(1)).parent


def readme_demo(shared: Path) -> ReadmeDemo:
    """The session's one fresh copy with the README's first command's demo run in it."""
    where = shared / "readme"
    done = shared / "readme.json"
    with FileLock(str(shared / "readme.lock")):
        if not done.exists():
            shutil.rmtree(where, ignore_errors=True)
            copy = fresh_copy(where / "clone ä")
            command = bash_blocks((copy / "README.md").read_text(encoding="utf-8"))[0].removeprefix(INSTALL)
            ran = run_block(command, copy, copy_env(copy))
            done.write_text(json.dumps({"copy": str(copy), "command": command, "returncode": ran.returncode,
                                        "stdout": ran.stdout, "stderr": ran.stderr}), encoding="utf-8")
    made = json.loads(done.read_text(encoding="utf-8"))
    return ReadmeDemo(**{**made, "copy": Path(made["copy"])})
