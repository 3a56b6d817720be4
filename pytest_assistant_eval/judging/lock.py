"""The grading folder's one lock (``GRADING/.lock``): grade-ai, review and summary --record
write the same folder, so one of them works on it at a time, and the others are refused at
once with the same words rather than waiting behind it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = ["grading_lock"]


@contextmanager
def grading_lock(grading_dir: Path, refused: type[Exception]) -> Iterator[None]:
    """Hold ``GRADING/.lock`` for the block; raise ``refused`` (the caller's own error) when it is taken."""
    lock = FileLock(str(grading_dir / ".lock"))
    try:
        lock.acquire(timeout=0.5)
    except Timeout:
        raise refused(f"{grading_dir} is in use by another grade-ai, review or summary --record; "
                      "wait for it to finish and run this command again") from None
    try:
        yield
    finally:
        lock.release()
