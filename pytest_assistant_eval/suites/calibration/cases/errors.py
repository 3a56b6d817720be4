"""Case-file errors (S2.5): every problem names its file, its line and what is wrong.

Loaders collect :class:`CaseError` values instead of raising on the first one, so the
owner sees every error of every case file at once, before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable


@dataclass(frozen=True, order=True)
class CaseError:
    """One problem in one case file. ``line`` is 1-based (0 when the file has no line)."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class CaseFileErrors(Exception):
    """All errors found across all case files; ``str()`` gives one ``file:line: message`` per line."""

    def __init__(self, errors: Iterable[CaseError]):
        self.errors: tuple[CaseError, ...] = tuple(sorted(set(errors), key=lambda e: (e.file, e.line, e.message)))
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)

    def __reduce__(self):  # picklable across xdist workers
        return (CaseFileErrors, (self.errors,))


__all__ = ["CaseError", "CaseFileErrors"]
