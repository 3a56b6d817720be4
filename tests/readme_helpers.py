"""The README's fresh copy and its first command's demo, made once per test session (issue 32, test-suite speed).

tests/test_readme.py runs every README block in order in a fresh copy; tests/test_demo_matrix.py checks
the demo's matrix. Both need the same `assistant-eval demo` (the README's first command, after the
install), the suite's longest single run, so it runs once for real, in the copy, by the first worker
that asks (under a file lock); test_readme then runs the later blocks in that same copy, and
test_demo_matrix reads the demo's folder there (``_eval_reports/demo``, which no later block writes).

The README's commands that mostly wait (:data:`WAITS`) start at the session's first test, in a copy
of their own (:func:`start_waits`), so the suite's other tests run while they sleep; test_readme
reads their exit codes and output when it gets to them (:func:`Waiting.result`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
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


def copy_env(copy: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a README block runs in (``base``, else this process's): the copy's package
    first, no pytest worker's variables."""
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_TESTRUNUID", "PYTEST_CURRENT_TEST")}
    env["PYTHONPATH"] = str(copy)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_block(block: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_shell(block), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


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


def readme_demo(shared: Path, environ: Mapping[str, str] | None = None) -> ReadmeDemo:
    """The session's one fresh copy with the README's first command's demo run in it (in ``environ``,
    else this process's environment: a thread started early passes the one it started in, so no
    test's patched variable reaches the demo)."""
    where = shared / "readme"
    done = shared / "readme.json"
    with FileLock(str(shared / "readme.lock")):
        if not done.exists():
            shutil.rmtree(where, ignore_errors=True)
            copy = fresh_copy(where / "clone ä")
            command = bash_blocks((copy / "README.md").read_text(encoding="utf-8"))[0].removeprefix(INSTALL)
            ran = run_block(command, copy, copy_env(copy, environ))
            done.write_text(json.dumps({"copy": str(copy), "command": command, "returncode": ran.returncode,
                                        "stdout": ran.stdout, "stderr": ran.stderr}), encoding="utf-8")
    made = json.loads(done.read_text(encoding="utf-8"))
    return ReadmeDemo(**{**made, "copy": Path(made["copy"])})


#: README commands that measure wall time and mostly sleep (the benchmarks' block: bench_pacing sends
#: for a fixed time at rate-limited fakes; it takes 46 s, 11 s of it CPU). Each runs in a fresh copy of
#: its own from the session's start (:func:`start_waits`), so no worker sits idle through it. Such a
#: command reads nothing an earlier block writes; its exit code is checked as any other's.
WAITS = ("bench_pacing.py",)

#: The README test, whose :data:`WAITS` commands the session starts early if it is to run.
README_TEST = "test_readme.py::test_every_readme_block_runs_in_order_in_a_fresh_copy"


def commands_of(block: str) -> list[str]:
    """A block as its commands: benchmark lines one by one (each its own exit code), others whole."""
    lines = block.splitlines()
    if all(line.startswith("python benchmarks/") for line in lines):
        return lines
    return [block]


def numbered_commands(blocks: list[str]) -> list[tuple[int, str]]:
    """Every command after the two set-up blocks, with the number of its block."""
    return [(number, command) for number, block in enumerate(blocks[2:], start=2) for command in commands_of(block)]


def waits_of(blocks: list[str]) -> list[tuple[int, str]]:
    """The numbered commands of :data:`WAITS`."""
    return [(number, command) for number, command in numbered_commands(blocks)
            if any(name in command for name in WAITS)]


@dataclass(frozen=True)
class Waiting:
    """A README command running in the background: its folder gets ``stdout``, ``stderr`` and,
    once the command has ended, ``rc`` (its exit code), whichever worker started it."""

    number: int
    command: str
    folder: Path

    def result(self, timeout: float = 600) -> tuple[int, str, str]:
        """The exit code, stdout and stderr, once the command has ended."""
        deadline = time.monotonic() + timeout
        while not (self.folder / "rc").exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"README block {self.number} still runs after {timeout} s: {self.command}")
            time.sleep(0.1)
        read = lambda name: (self.folder / name).read_text(encoding="utf-8", errors="replace")  # noqa: E731
        return int(read("rc")), read("stdout"), read("stderr")


#: What the background shell does: the block's own shell, its exit code written once it has ended.
_FILED = 'bash -c "$1" >"$2/stdout" 2>"$2/stderr"; echo $? >"$2/rc.part" && mv "$2/rc.part" "$2/rc"'


def start_waits(shared: Path, readme: Path) -> tuple[list[Waiting], list[subprocess.Popen[bytes]]]:
    """The README's :data:`WAITS` commands, started once per session (by the first worker that asks,
    in a fresh copy of their own); the processes are returned to the worker that started them only."""
    where = shared / "readme-waits"
    listed = shared / "readme-waits.json"
    started: list[subprocess.Popen[bytes]] = []
    with FileLock(str(shared / "readme-waits.lock")):
        if not listed.exists():
            shutil.rmtree(where, ignore_errors=True)
            copy = fresh_copy(where / "clone ä")
            env = copy_env(copy)
            waiting = []
            for place, (number, command) in enumerate(waits_of(bash_blocks(readme.read_text(encoding="utf-8")))):
                folder = where / f"command-{place}"
                folder.mkdir()
                started.append(subprocess.Popen(["bash", "-c", _FILED, "bash", _shell(command)[2], str(folder)],
                                                cwd=copy, env=env, stdin=subprocess.DEVNULL, start_new_session=True))
                waiting.append({"number": number, "command": command, "folder": str(folder)})
            listed.write_text(json.dumps(waiting), encoding="utf-8")
    made = json.loads(listed.read_text(encoding="utf-8"))
    return [Waiting(w["number"], w["command"], Path(w["folder"])) for w in made], started


def end_waits(started: Iterable[subprocess.Popen[bytes]]) -> None:
    """Reap what :func:`start_waits` started (each has written its exit code by then, or is still running)."""
    for process in started:
        process.wait(timeout=600)
