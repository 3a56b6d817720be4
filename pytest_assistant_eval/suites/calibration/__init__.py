"""The shipped calibration world as a suite (docs/suites.md): questions, S01 and tasks on the grounding world.

``CalibrationSuite`` is what ``RunSession`` runs by default (``--suite calibration``): it
verifies the built world (its marker, S1.7), loads the cases and levels, plans the cells
(``planning.plan_cells``) and, for one cell, opens its SQLite copy, gives the level setting,
the opening turns, the simulated user of a task and the record (``record.py``).
"""

from pytest_assistant_eval.suites.calibration.suite import CalibrationSuite

__all__ = ["CalibrationSuite"]
