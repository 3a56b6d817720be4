"""What the tables, the review and serve-tools read of the calibration suite, without a run (issue 32).

The ``Suite`` protocol's reading members (suites/base.py): the owner's levels and their trust
bars (``levels.yaml``), the cases and levels the grading read, the task pairs the leaderboard
shows, the automatic placement of a model, the world's tool specs (a prompt estimate counts
their definitions), the code checks the owner's grade repeats, the material the owner reads and
a record's ``state``. ``suites.get_suite("calibration")`` makes this class; the run's
``CalibrationSuite`` is one too. What each member needs is imported when it is asked, so a table
that reads only the levels loads no world and no checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_assistant_eval.suites.base import SuiteBase
from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.suites.calibration.cases.errors import CaseFileErrors

__all__ = ["CalibrationReading", "reading_suite"]


class CalibrationReading(SuiteBase):
    """The calibration suite's reading members; ``CalibrationSuite`` adds the run's."""

    name = "calibration"
    data_source = "the grounding world built for this evaluation"
    definition_errors: tuple[type[Exception], ...] = (levels_mod.LevelsError, CaseFileErrors)

    def load_levels(self, definition: Path) -> levels_mod.Levels:
        """``DIR/levels.yaml``; its tools are not checked against the world's (a table reads old folders too)."""
        return levels_mod.load_levels(Path(definition) / "levels.yaml", known_tools=None)

    def load_cases(self, definition: Path) -> tuple[Any, levels_mod.Levels]:
        from pytest_assistant_eval.suites.calibration.plan import load_calibration

        return load_calibration(definition)

    def task_pairs(self, definition: Path) -> dict[str, str]:
        cases, _ = self.load_cases(definition)
        return {t.id: t.pair for t in cases.tasks if t.pair}

    def automatic_level(self, model_name: str, context_window: int | None, levels: Any,
                        provider: str | None) -> str | None:
        return levels_mod.placement(model_name, None, context_window, levels, provider=provider)

    def tool_specs(self) -> dict[str, Any]:
        from pytest_assistant_eval.suites.calibration.world.tools import SPECS_BY_NAME

        return SPECS_BY_NAME

    def check_record(self, record: dict[str, Any], cases: Any, levels: Any) -> Any:
        from pytest_assistant_eval.suites.calibration.checks.checked import check_record

        return check_record(record, cases, levels)

    def review_sections(self, record: dict[str, Any], cell: dict[str, Any], cases: Any) -> list[Any]:
        """A task's request and report, or a question's (or the scenario's) answer and key."""
        from pytest_assistant_eval.suites.calibration.checks.material import question_sections, task_sections

        if cell["kind"] == "task":
            return task_sections(record, next(t for t in cases.tasks if t.id == cell["case"]))
        return question_sections(record, cases)

    def state_record(self, start: Any, end: Any) -> dict[str, Any]:
        """The grounding world's digests and field-level diff (docs/records.md ``state``)."""
        from pytest_assistant_eval.suites.calibration.world.state import diff_states, state_digest

        return {"start_digest": state_digest(start), "final_digest": state_digest(end),
                "diff": [change.to_dict() for change in diff_states(start, end)], "final": end}


def reading_suite() -> CalibrationReading:
    """The suite as ``suites.get_suite`` gives it: no run planned, no world checked."""
    return CalibrationReading()
