"""Shared fixtures for the repository's tests: one built world per test session."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import graded_helpers
import readme_helpers
import pytest
from hypothesis import HealthCheck, settings

# No timing assertion in a test whose subject is not time (issue 23, item 20): Hypothesis's
# 200 ms deadline per example failed a property test of kappa on a loaded machine. The whole
# suite runs under this profile; a test whose subject is time measures it itself.
settings.register_profile("assistant-eval", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("assistant-eval")

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"


@pytest.fixture(scope="session")
def calibration_dir() -> Path:
    return CALIBRATION


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder the whole session shares, every xdist worker alike: what is built once per session
    lives there, built by the first worker under a file lock (issue 32, test-suite speed)."""
    return graded_helpers.shared_temp(tmp_path_factory)


@pytest.fixture(scope="session")
def world_dir(shared_dir: Path) -> Path:
    """A freshly built grounding world, one for the whole session (all workers), shared read-only."""
    from filelock import FileLock

    from pytest_assistant_eval.suites.calibration.world.build import build_world

    folder = shared_dir / "session-world"
    with FileLock(str(shared_dir / "session-world.lock")):
        if not (shared_dir / "session-world.done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            (shared_dir / "session-world.path").write_text(str(build_world(folder, CALIBRATION / "world")),
                                                           encoding="utf-8")
            (shared_dir / "session-world.done").touch()
    return Path((shared_dir / "session-world.path").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def readme_demo(shared_dir: Path) -> readme_helpers.ReadmeDemo:
    """The README's fresh copy with its demo command run in it: once per session, for
    tests/test_readme.py and tests/test_demo_matrix.py alike (see tests/readme_helpers.py)."""
    return readme_helpers.readme_demo(shared_dir)


@pytest.fixture(scope="session", autouse=True)
def _readme_demo_early(request: pytest.FixtureRequest, shared_dir: Path) -> Iterator[threading.Thread | None]:
    """The README's demo, started at the session's first test in a thread of each worker (the first
    thread to take readme_demo's file lock runs it; the other finds it made), so no worker sits idle
    through its 23 s while the other runs it: each goes on with other tests, and the tests that
    read the demo (test_demo_matrix, test_readme) come after the longest ones (SLOW_FIRST)."""
    if not any("readme_demo" in getattr(item, "fixturenames", ()) for item in request.session.items):
        yield None
        return
    early = threading.Thread(target=readme_helpers.readme_demo, args=(shared_dir, dict(os.environ)),
                             name="readme-demo", daemon=True)
    early.start()
    yield early
    early.join(timeout=600)


@pytest.fixture(scope="session", autouse=True)
def readme_waits(request: pytest.FixtureRequest, shared_dir: Path) -> Iterator[list[readme_helpers.Waiting]]:
    """The README commands that mostly sleep (readme_helpers.WAITS), started at the session's first
    test if the README test is to run, so both workers work while they wait; test_readme checks them
    when it gets to them (issue 32: they kept the README test's worker idle for 40 s)."""
    if not any(item.nodeid.endswith(readme_helpers.README_TEST) for item in request.session.items):
        yield []
        return
    waiting, started = readme_helpers.start_waits(shared_dir, REPO / "README.md")
    yield waiting
    readme_helpers.end_waits(started)


@pytest.fixture(scope="session", autouse=True)
def _graded_cache(shared_dir: Path) -> Iterator[None]:
    """The reference assistants' runs of tests/graded_helpers.py, cached for the session's workers."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(graded_helpers.CACHE_VARIABLE, str(shared_dir / "graded-runs"))
        yield


#: Test files holding the suite's longest tests, longest first (from ``pytest -n 2 --durations``;
#: issue 32, test-suite speed). They run first: xdist hands out the queue in order, so a long
#: test started last would keep one worker busy after the other has finished. Whole files move,
#: in their own order, so each worker still builds a file's module fixtures once.
SLOW_FIRST = (
    "test_secret_scan.py",
    "test_crash_resume.py",
    "test_plugin_cells.py",     # runs at 0 and 2 workers, once for the module
    "test_no_key_leaks.py",
    "test_report.py",
    # Reads the README's demo run, which starts at the session's first test (_readme_demo_early) and
    # is made by the time the files above have been handed out.
    "test_demo_matrix.py",
    # Every README block in a fresh copy: after the demo it shares is made and once the benchmark it
    # waits for (readme_waits, from the session's start) has mostly run, so its worker waits for neither.
    "test_readme.py",
    "test_owner_messages.py",
    "test_agentdojo_session.py",
    "test_agentdojo_pytest.py",
    "test_agentdojo.py",
    "test_agentdojo_settings.py",
    "test_progress_terminal.py",
)


@pytest.hookimpl(trylast=True)  # after pytest's own reordering by fixture
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


def _share_compiled_modules() -> None:
    """Let the processes the tests start reuse compiled modules.

    This machine (and CI) sets ``PYTHONDONTWRITEBYTECODE=1``, so every ``assistant-eval`` or
    ``pytest`` a test starts compiled the package from source again: about 0.4 s of CPU a process,
    hundreds of times. The children may now write bytecode: the package's and the tests' own
    ``__pycache__`` (git ignores them) and site-packages' (pip compiled those at install). A run
    never leaves any in the calibration folder (the plugin imports ``cells.py`` without writing it:
    tests/test_write_rules.py), so a test sees the same calibration either way (issue 32).

    A bytecode prefix (``PYTHONPYCACHEPREFIX``) the machine sets is kept. None is set here: with
    one, Python reads compiled modules only from under it, so in a fresh checkout every child that
    started before the prefix filled compiled everything it imports, site-packages included (3.7 s
    of an AgentDojo run's 5.5 s, 1.1 s of a calibration run's 1.8 s)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _compile_the_package_once(config: pytest.Config) -> None:
    """Compile the package before any child starts (on the controller, once per session).

    In a fresh checkout the package has no bytecode yet, and the children started in the first
    half-minute (dozens of them, side by side) each compiled all of it from source: the first
    ``.ci/run`` of a fresh clone took 318 s, a second run in the same clone 290 s. Compiling it
    here costs 0.3 s of CPU, once (under a bytecode prefix the machine sets, if any, where the
    children read too). The calibration folder is left alone: it holds only the
    cells module, which no run may compile into it (the plugin's rule, tests/test_write_rules.py)."""
    if hasattr(config, "workerinput"):
        return
    import compileall

    compileall.compile_dir(str(REPO / "pytest_assistant_eval"), quiet=1, workers=1)
    compileall.compile_file(str(REPO / "assistant_eval.py"), quiet=1)


def pytest_configure(config: pytest.Config) -> None:
    _share_compiled_modules()
    _compile_the_package_once(config)
    # Hand tests to the two workers a few at a time, not a quarter of the suite at once: with the
    # long files first, a worker that draws one gets no long queue of others behind it.
    if getattr(config.option, "maxschedchunk", "absent") is None:
        config.option.maxschedchunk = 4
