"""One lock for the grading folder: grade-ai, review and summary --record refuse at once, with the
same words, while another of them holds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from filelock import FileLock

from pytest_assistant_eval.suites.calibration.grade.folder import GradingError
from pytest_assistant_eval.judging.lock import grading_lock
from pytest_assistant_eval.review.store import ReviewRefused
from pytest_assistant_eval.review.store import grading_lock as review_lock


def test_a_held_grading_folder_refuses_the_next_writer_naming_it(tmp_path: Path) -> None:
    holder = FileLock(str(tmp_path / ".lock"))
    holder.acquire()
    try:
        with pytest.raises(GradingError, match="is in use by another grade-ai, review or summary --record"):
            with grading_lock(tmp_path, GradingError):
                pass
        with pytest.raises(ReviewRefused, match=str(tmp_path)):
            with review_lock(tmp_path):
                pass
    finally:
        holder.release()
    with grading_lock(tmp_path, GradingError):  # free again: taken and given back
        assert (tmp_path / ".lock").exists()
