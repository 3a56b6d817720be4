"""The shipped calibration world as a suite (docs/suites.md): questions, S01 and tasks on the grounding world.

``CalibrationSuite`` (``suite.py``) is what ``RunSession`` runs by default (``--suite calibration``):
it verifies the built world (its marker, S1.7), loads the cases and levels, plans the cells
(``planning.plan_cells``) and, for one cell, opens its SQLite copy, gives the level setting,
the opening turns, the simulated user of a task and the record (``record.py``).

The package holds what the suite brings: ``world/``, ``cases/``, ``checks/``, ``readers/``,
``levels``, ``user/`` (the scripted and model-played user), ``grade/`` (its grade-ai) and
``reference`` (the reference assistants). Importing a part must not import the whole suite,
so nothing is imported here (``CalibrationSuite`` is read lazily).
"""

from typing import Any

__all__ = ["CalibrationSuite"]


def __getattr__(name: str) -> Any:
    if name == "CalibrationSuite":
        from pytest_assistant_eval.suites.calibration.suite import CalibrationSuite

        return CalibrationSuite
    raise AttributeError(name)
