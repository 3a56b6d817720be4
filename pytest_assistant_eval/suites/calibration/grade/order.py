"""The blind order of a new grading, held as one number a cell (issue 32: flat memory).

``grading.json`` lists every cell as ``{"n", "folder", "cell"}``. Held as those dicts (and as a
map from (folder, cell) to n, and a job list beside it) they cost about half a kilobyte a cell
in grade-ai's parent process, which holds them for the whole pass: 50 MB at 100,000 cells.
:class:`BlindOrder` keeps the folders' own name lists (which the pass holds anyway) and the
shuffled permutation as an ``array`` of 8 bytes a cell; it reads as the list of dicts it stands for
(``len``, indexing, iteration). ``write_index`` writes ``grading.json`` in pieces with the
bytes ``write_json_atomic`` would have written.

The order is the one ``random.Random(seed).shuffle`` gives the cells sorted by (folder name,
cell name): a shuffle moves positions whatever they hold, so shuffling the positions gives
the same order as shuffling the cells.
"""

from __future__ import annotations

import json
import random
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_assistant_eval.records import dumps, write_chunks_atomic

__all__ = ["BlindOrder", "cell_numbers", "write_index"]


class BlindOrder(Sequence):  # type: ignore[type-arg]
    """The blind order as ``{"n", "folder", "cell"}`` dicts, made on demand from a permutation."""

    def __init__(self, folders: list[str], names: list[Sequence[str]], seed: int) -> None:
        self.folders = folders
        self.names = names
        self.starts = array("q", [0])
        for held in names:
            self.starts.append(self.starts[-1] + len(held))
        # Positions in the sorted list of (folder name, cell name), then shuffled as the cells were.
        self.order = array("q", self._sorted_positions())
        random.Random(seed).shuffle(self.order)  # type: ignore[arg-type]

    def _sorted_positions(self) -> Iterator[int]:
        """Every cell's position (folder by folder, in its names' order), sorted by (folder, cell),
        ties in that order (a stable sort); a folder's names are sorted already."""
        by_name = sorted(range(len(self.folders)), key=lambda i: self.folders[i])
        if len(set(self.folders)) == len(self.folders):
            for i in by_name:
                yield from range(self.starts[i], self.starts[i + 1])
            return
        # Two folders of one name (in other parents): their cells interleave by cell name.
        yield from sorted(range(self.starts[-1]), key=lambda g: (self.folders[self._folder_of(g)], self._name_of(g)))

    def _folder_of(self, g: int) -> int:
        return bisect_right(self.starts, g, 0, len(self.folders)) - 1  # the last folder starting at or before g

    def _name_of(self, g: int) -> str:
        i = self._folder_of(g)
        return self.names[i][g - self.starts[i]]

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        g = self.order[k]
        i = self._folder_of(g)
        return {"n": k + 1, "folder": self.folders[i], "cell": self.names[i][g - self.starts[i]]}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[k] for k in range(len(self)))

    def numbers(self) -> list[array]:  # type: ignore[type-arg]
        """Per folder, each of its names' number in the order (8 bytes a cell)."""
        out = [array("q", bytes(8 * len(held))) for held in self.names]
        starts = self.starts
        for k, g in enumerate(self.order, start=1):
            i = self._folder_of(g)
            out[i][g - starts[i]] = k
        return out


def cell_numbers(order: Sequence[dict[str, Any]], folders: list[str], names: list[Sequence[str]]) -> list[array] | None:  # type: ignore[type-arg]
    """Per folder, each of its names' number in ``order`` (a :class:`BlindOrder` or the list a
    ``grading.json`` holds); None when a name is not in the order (the caller says which)."""
    if isinstance(order, BlindOrder) and order.folders == folders and order.names == names:
        return order.numbers()
    by_ref = {(o["folder"], o["cell"]): o["n"] for o in order}
    out = []
    for folder, held in zip(folders, names):
        numbers = array("q")
        for name in held:
            n = by_ref.get((folder, name))
            if n is None:
                return None
            numbers.append(n)
        out.append(numbers)
    return out


_ORDER_AT = '\n  "order": []'  # where the top level's (two-space) order stands in the text with an empty one


def write_index(path: Path, index: dict[str, Any]) -> None:
    """``write_json_atomic(path, index)``, the same bytes, with a :class:`BlindOrder` written
    entry by entry instead of as one text of every cell."""
    order = index.get("order")
    if not isinstance(order, BlindOrder) or not len(order):
        text = dumps({**index, "order": list(order)} if isinstance(order, BlindOrder) else index)
        write_chunks_atomic(path, [text.encode("utf-8")])
        return
    text = dumps({**index, "order": []})
    at = text.index(_ORDER_AT) + len(_ORDER_AT) - 1  # just before the "]"
    head, tail = text[:at], text[at:]

    def chunks() -> Iterator[bytes]:
        yield head.encode("utf-8")
        folders = [json.dumps(f, ensure_ascii=False) for f in order.folders]
        batch: list[str] = []
        starts = order.starts
        for k, g in enumerate(order.order, start=1):
            i = order._folder_of(g)
            cell = json.dumps(order.names[i][g - starts[i]], ensure_ascii=False)
            batch.append(f"{',' if k > 1 else ''}\n    {{\n      \"n\": {k},\n      \"folder\": {folders[i]},"
                         f"\n      \"cell\": {cell}\n    }}")
            if len(batch) >= 4096:
                yield "".join(batch).encode("utf-8")
                batch = []
        yield ("".join(batch) + "\n  " + tail).encode("utf-8")

    write_chunks_atomic(path, chunks())
