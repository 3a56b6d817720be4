"""The exceptions of grade-ai, in a module of their own so every grading module can raise them.

The folder pass, the model judge and the file route all raise them; keeping them here (and not
in ``folder.py``) is what lets those modules import each other in one direction only (issue 25).
"""

from __future__ import annotations


class GradingError(Exception):
    """Why nothing was graded; the message names the files or cells."""


class JudgeStopped(Exception):
    """A provider error stopped a model judge; every cell graded before it is kept."""

    def __init__(self, message: str, *, budget: bool = False) -> None:
        super().__init__(message)
        self.budget = budget
