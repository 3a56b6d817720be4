"""Digest rows primed by grade-ai, which has every record and graded cell in hand as it grades.

Without them the first ``summary`` or ``leaderboard`` after a grading reads every graded cell
and every record again to build its digests (``docs/digests.md``): at 100,000 cells of the
demo's records that was most of a 20 s first run. grade-ai derives the rows where it already
holds the files (``primed_rows``, in its workers), appends them to one file per digest as it
goes (``DigestPrimer``) and folds those into the digests when the grading is whole
(``digest.merge_primed``). A primed row is a cache row like any other: the tables check it
against its file's stat, so a row primed wrong costs a read, never a wrong table.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from pytest_assistant_eval.tables.digest import entry_line, loads, merge_primed
from pytest_assistant_eval.tables.grading_source import (
    CELLS_DIGEST,
    DIGESTS,
    SUMMARY_DIGEST,
    DigestSpec,
    narrowed,
    record_row,
    records_digest,
    slim_cell,
)

__all__ = ["PRIMED_PREFIX", "primed_rows", "DigestPrimer"]

#: Primed rows wait in ``GRADING/.digests/.primed-<digest file>`` until the grading is whole.
PRIMED_PREFIX = ".primed-"

#: (digest, the folder its rows describe, one digest line)
Rows = list[tuple[DigestSpec, str, bytes]]


def primed_rows(cell_path: Path, cell_bytes: bytes, record_path: Path, record: dict[str, Any],
                record_stat: os.stat_result | None, folder_name: str) -> Rows:
    """The digest lines of one graded cell just written (``cell_bytes`` at ``cell_path``) and of its record.

    The cell's rows are derived from the bytes as written (what a reader parses, not the
    dict they were dumped from); the record's only when its file was the same before and after
    it was read (``record_stat``: its stat before; None to leave it to the tables).
    """
    rows: Rows = []
    try:
        st = os.stat(cell_path)  # a rename into cells/ keeps the inode, size and modification time
        slim = slim_cell(loads(cell_bytes))
    except (OSError, ValueError):
        return rows  # a cell the tables cannot read either (a NaN, say): they say so, grading goes on
    name = cell_path.name
    rows.append((CELLS_DIGEST, "", entry_line(name, st, slim)))  # "": the grading folder's cells/
    rows.append((SUMMARY_DIGEST, "", entry_line(name, st, narrowed(slim))))
    if record_stat is not None:
        try:
            after = os.stat(record_path)
        except OSError:
            return rows
        if (after.st_mtime_ns, after.st_size, after.st_ino) == (record_stat.st_mtime_ns, record_stat.st_size,
                                                                 record_stat.st_ino):
            rows.append((records_digest(folder_name), str(record_path.parent),
                         entry_line(record_path.name, after, record_row(record))))
    return rows


class DigestPrimer:
    """Collects primed rows of one grade-ai run in files beside the digests, and folds them in at its end."""

    def __init__(self, grading_dir: Path) -> None:
        self.grading_dir = grading_dir
        self.folder = grading_dir / DIGESTS
        self.handles: dict[DigestSpec, IO[bytes]] = {}
        self.described: dict[DigestSpec, Path] = {}
        self.discard()  # what a killed run left: rows of cells it may never have moved into cells/

    def add(self, rows: Rows) -> None:
        for spec, described, line in rows:
            handle = self.handles.get(spec)
            if handle is None:
                self.folder.mkdir(parents=True, exist_ok=True)
                handle = self.handles[spec] = open(self.folder / f"{PRIMED_PREFIX}{spec.file}", "wb")
                self.described[spec] = Path(described) if described else self.grading_dir / "cells"
            handle.write(line)

    def finish(self) -> None:
        """Fold every primed file into its digest; a digest that cannot be written is removed (and rebuilt).

        Call it holding the grading lock, with every graded cell in ``cells/``: the cells'
        digests are then stamped whole at once (no other writer of ``cells/`` can run), so the
        first table reads them as every later one does.
        """
        for spec, handle in self.handles.items():
            handle.close()
            target = self.folder / spec.file
            described = self.described[spec]
            try:
                merge_primed(target, spec.kind, spec.version, self.folder / f"{PRIMED_PREFIX}{spec.file}",
                             described, sole_writer=described == self.grading_dir / "cells")
            except (OSError, ValueError):
                target.unlink(missing_ok=True)  # a cache: the tables derive it from the files instead
        self.handles = {}
        self.discard()

    def discard(self) -> None:
        """Drop every primed row not folded in (a refused or killed run's)."""
        for handle in self.handles.values():
            handle.close()
        self.handles = {}
        if self.folder.is_dir():
            for path in self.folder.glob(f"{PRIMED_PREFIX}*"):
                path.unlink(missing_ok=True)
            try:
                self.folder.rmdir()  # only when empty: a refused grading leaves nothing behind
            except OSError:
                pass
