"""The stages below the CLI never import it (issue 10, item 13): shared meaning lives below both."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["pytest_assistant_eval.suites.calibration.grade.folder", "pytest_assistant_eval.tables.leaderboard"])
def test_grading_and_tables_do_not_import_the_cli_or_pytest(module):
    code = (f"import sys, {module} as m\n"
            "m.default_calibration_dir()\n"
            "print(sorted(n for n in sys.modules if n in ('pytest_assistant_eval.cli', 'pytest', "
            "'pytest_assistant_eval.run.session', 'pytest_assistant_eval.plugin')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_default_calibration_folder_is_the_shipped_one():
    from pytest_assistant_eval.paths import default_calibration_dir

    assert (default_calibration_dir() / "levels.yaml").is_file()


@pytest.mark.parametrize("module", ["pytest_assistant_eval.suites.calibration.user.scripted", "pytest_assistant_eval.conversation.loop",
                                    "pytest_assistant_eval.suites.calibration.reference"])
def test_the_run_stage_does_not_import_the_grading_stage(module):
    """The simulated user and the reference assistants read text with ``suites/calibration/readers/``, the same
    readers the checks use, without reaching into the stage that grades their runs."""
    code = (f"import sys, {module}\n"
            "print(sorted(n for n in sys.modules if n.startswith('pytest_assistant_eval.suites.calibration.checks')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
