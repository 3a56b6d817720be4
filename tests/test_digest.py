"""Digests (docs/digests.md): a cache of one row per file, never the truth."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pytest_assistant_eval.tables import digest as digest_mod
from pytest_assistant_eval.tables.digest import read_digest


def _write(path: Path, data: dict) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)  # as every writer of these folders does


def _age(folder: Path, seconds: float = 10) -> None:
    st = os.stat(folder)
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def test_rows_follow_the_files_through_renames_removals_and_damage(tmp_path: Path) -> None:
    folder, dig = tmp_path / "cells", tmp_path / ".digests" / "cells.jsonl"
    folder.mkdir()
    for n in range(3):
        _write(folder / f"{n}.json", {"v": n})
    derived: list[int] = []

    def derive(doc: dict) -> int:
        derived.append(doc["v"])
        return doc["v"] * 10

    assert read_digest(folder, dig, "t", "1", derive) == {"0.json": 0, "1.json": 10, "2.json": 20}
    assert sorted(derived) == [0, 1, 2]
    derived.clear()
    _age(folder)
    assert read_digest(folder, dig, "t", "1", derive) == {"0.json": 0, "1.json": 10, "2.json": 20}
    assert derived == []  # every row reused
    assert (dig.parent / "cells.jsonl.folder").exists()

    _write(folder / "1.json", {"v": 7})  # same size, new inode, folder changed
    (folder / "2.json").unlink()
    assert read_digest(folder, dig, "t", "1", derive) == {"0.json": 0, "1.json": 70}
    assert derived == [7]

    derived.clear()
    assert read_digest(folder, dig, "t", "2", derive) == {"0.json": 0, "1.json": 70}  # another row version
    assert sorted(derived) == [0, 7]

    derived.clear()
    dig.write_text("not json\n")
    assert read_digest(folder, dig, "t", "2", derive) == {"0.json": 0, "1.json": 70}
    assert sorted(derived) == [0, 7]


def test_a_stamp_counts_only_for_the_digest_it_was_saved_with(tmp_path: Path, monkeypatch) -> None:
    folder, dig = tmp_path / "cells", tmp_path / "d.jsonl"
    folder.mkdir()
    _write(folder / "a.json", {"v": 1})
    _age(folder)
    assert read_digest(folder, dig, "t", "1", lambda d: d["v"]) == {"a.json": 1}
    # Another digest file in its place (another inode): the stamp is not trusted, files are stat-ed.
    text = dig.read_text()
    os.unlink(dig)
    dig.write_text(text.replace(",1]", ",99]"))
    # The file's own stat still matches its row, so the (planted) row is what comes back: the
    # stamp was not used to skip the stat, and nothing was derived again.
    assert read_digest(folder, dig, "t", "1", lambda d: d["v"]) == {"a.json": 99}
    monkeypatch.setattr(digest_mod, "RACY_NS", 10**18)  # a folder just changed: no stamp saved
    _write(folder / "b.json", {"v": 2})
    assert read_digest(folder, dig, "t", "1", lambda d: d["v"])["b.json"] == 2
    assert not (tmp_path / "d.jsonl.folder").exists()
