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


def test_primed_rows_fold_into_the_digest_in_table_order_and_are_reused_while_their_files_stay(tmp_path: Path):
    from pytest_assistant_eval.tables.digest import entry_line, merge_primed

    folder, dig = tmp_path / "cells", tmp_path / ".digests" / "cells.jsonl"
    folder.mkdir()
    for n in (2, 10):
        _write(folder / f"{n}.json", {"v": n})
    derived: list[int] = []

    def derive(doc: dict) -> int:
        derived.append(doc["v"])
        return doc["v"] * 10

    read_digest(folder, dig, "t", "1", derive)
    _write(folder / "10.json", {"v": 11})  # rewritten, and a new file, by the stage that primes their rows
    _write(folder / "9.json", {"v": 9})
    primed = dig.with_name(".primed-cells.jsonl")
    primed.write_bytes(entry_line("10.json", os.stat(folder / "10.json"), 110)
                       + entry_line("9.json", os.stat(folder / "9.json"), 90))
    merge_primed(dig, "t", "1", primed)
    assert not primed.exists()
    names = [json.loads(line)[0] for line in dig.read_text().splitlines()[1:]]
    assert names == ["2.json", "9.json", "10.json"]  # blind-number order, the order the tables walk
    derived.clear()
    assert read_digest(folder, dig, "t", "1", derive) == {"2.json": 20, "9.json": 90, "10.json": 110}
    assert derived == []  # no file read: every row, old or primed, matched its file

    # A digest of another row version is stale as a whole: only the primed rows are kept, the rest derived.
    _write(folder / "2.json", {"v": 3})
    primed.write_bytes(entry_line("2.json", os.stat(folder / "2.json"), 30))
    merge_primed(dig, "t", "2", primed)
    assert [json.loads(line)[0] for line in dig.read_text().splitlines()[1:]] == ["2.json"]
    derived.clear()
    assert read_digest(folder, dig, "t", "2", derive) == {"2.json": 30, "9.json": 90, "10.json": 110}
    assert sorted(derived) == [9, 11]

    # A primed row whose file changed since (or a wrong one) costs a read, never a wrong row.
    primed.write_bytes(entry_line("9.json", os.stat(folder / "10.json"), 999))
    merge_primed(dig, "t", "2", primed)
    derived.clear()
    assert read_digest(folder, dig, "t", "2", derive)["9.json"] == 90
    assert derived == [9]


def test_a_merged_digest_is_stamped_whole_only_when_every_file_has_its_row_and_no_change_can_hide(tmp_path: Path):
    from pytest_assistant_eval.tables.digest import entry_line, merge_primed

    folder, dig = tmp_path / "cells", tmp_path / ".digests" / "cells.jsonl"
    folder.mkdir()
    dig.parent.mkdir()
    for n in (1, 2):
        _write(folder / f"{n}.json", {"v": n})
    stamp = dig.with_name("cells.jsonl.folder")
    primed = dig.with_name(".primed-cells.jsonl")

    def prime(*names: str) -> None:
        primed.write_bytes(b"".join(entry_line(n, os.stat(folder / n), 0) for n in names))

    prime("1.json")  # 2.json has no row: the next read must stat the folder's files
    merge_primed(dig, "t", "1", primed, folder, sole_writer=True)
    assert not stamp.exists()
    prime("1.json", "2.json")
    merge_primed(dig, "t", "1", primed, folder)  # whole, but the folder changed under 2 s ago
    assert not stamp.exists()
    prime("2.json")
    merge_primed(dig, "t", "1", primed, folder, sole_writer=True)  # the caller holds every writer's lock
    st = os.stat(folder)
    assert json.loads(stamp.read_text())["folder"] == [st.st_mtime_ns, st.st_ino]
    _age(folder)
    prime("1.json")
    merge_primed(dig, "t", "1", primed, folder)  # whole, and the folder older than any clock tick
    assert json.loads(stamp.read_text())["folder"] == [os.stat(folder).st_mtime_ns, st.st_ino]
    assert read_digest(folder, dig, "t", "1", lambda doc: 1 / 0) == {"1.json": 0, "2.json": 0}

    (folder / "2.json").unlink()  # its row stays in the digest: the folder is no longer as the rows say
    prime("1.json")
    merge_primed(dig, "t", "1", primed, folder, sole_writer=True)
    assert not stamp.exists()
    assert read_digest(folder, dig, "t", "1", lambda doc: 1 / 0) == {"1.json": 0}


def test_a_graded_cell_the_tables_cannot_read_primes_no_row_and_stops_nothing(tmp_path: Path):
    from pytest_assistant_eval.tables.priming import primed_rows

    cell = tmp_path / "7.json"
    cell.write_bytes(b'{"n": 7, "conversation_seconds": NaN}\n')  # what json.dumps writes for a NaN
    record = tmp_path / "G01__basic__r1.json"
    record.write_text("{}")
    assert primed_rows(cell, cell.read_bytes(), record, {}, os.stat(record), "m") == []
