"""Digests: one short row per file of a folder, so the tables read one file instead of 100,000.

``leaderboard`` and ``summary`` need a few fields of each graded cell and each record, not
the files themselves (a graded cell is about 2 KB, a record about 35 KB). A digest file keeps,
per file of a folder, its name, size and modification time and the fields the tables read
(``derive``); the next read stats the folder, reuses every row whose file is unchanged and
derives the rest from their files. So a digest is never the truth, only a cache of it: a
missing, stale, foreign or damaged digest is rebuilt from the files, whoever wrote them (the
grading writer, the review, an older harness), and the tables print the same either way.

Format (``docs/digests.md``): JSON lines; the first is a header
``{"format": "assistant-eval.digest/1", "kind": ..., "version": ...}``, each further line ``["12.json", mtime_ns, size, inode, row]`` (a file replaced by a rename has a new
inode, so a rewrite within one clock tick at the same size is still seen). A header of another
format, kind or version makes the whole digest stale. Beside it, ``DIGEST.folder`` holds
``{"folder": [mtime_ns, inode], "digest_inode": ...}``: the folder as it was when the digest was
last found whole, for that digest file only.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from pytest_assistant_eval.records import HARNESS_VERSION

__all__ = ["DIGEST_FORMAT", "read_digest", "merge_primed", "entry_line", "loads", "no_gc", "without_gc"]

DIGEST_FORMAT = "assistant-eval.digest/1"

loads = orjson.loads


@contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic collector off while 100,000 small dicts are built (none is a cycle): a third of the time.

    Building them with it on makes it walk every young object again and again (measured: 2.0 s
    against 0.64 s for the digest of 100,000 graded cells).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def without_gc(command: Callable[..., int]) -> Callable[..., int]:
    """A table command run with ``no_gc``: it builds 100,000 acyclic rows and frees them by reference count.

    Measured on the leaderboard of 100,000 cells: a third of its time was the collector
    walking rows that can never be garbage while they are being counted.
    """
    import functools

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> int:
        with no_gc():
            return command(*args, **kwargs)

    return run


#: A folder changed less than this long before a scan may change again within its clock tick unseen
#: (the "racy" case): its stamp is then not trusted, and the next read stats every file.
RACY_NS = 2_000_000_000


def _header(kind: str, version: str) -> dict[str, Any]:
    # The harness version is part of it: a row is derived by code, and other code may derive otherwise.
    return {"format": DIGEST_FORMAT, "kind": kind, "version": f"{version}+{HARNESS_VERSION}"}


Rows = dict[str, list[Any]]  # name -> [name, mtime_ns, size, ino, row]


def _load(path: Path, header: dict[str, Any]) -> tuple[Rows, int | None]:
    """The digest's rows and the inode of the file they were read from; nothing when missing, foreign or damaged."""
    rows: Rows = {}
    try:
        handle = open(path, "rb")
    except OSError:
        return rows, None
    with handle:
        inode = os.fstat(handle.fileno()).st_ino
        try:
            head = loads(handle.readline())
            if not isinstance(head, dict) or {k: head.get(k) for k in header} != header:
                return {}, None
            for raw in handle:
                entry = loads(raw)
                rows[entry[0]] = entry
        except (ValueError, IndexError, KeyError, TypeError):
            return {}, None  # damaged (a crash mid-write cannot do this: it is written aside and renamed)
    return rows, inode


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".folder")


def _read_stamp(path: Path, digest_inode: int | None) -> Any:
    """The folder stamp ``[mtime_ns, inode]`` saved beside the digest, if it was saved for the digest file read."""
    try:
        saved = loads(_stamp_path(path).read_bytes())
        return saved["folder"] if saved["digest_inode"] == digest_inode else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save_stamp(path: Path, stamp: Any, digest_inode: int | None) -> None:
    """Save (or, with no stamp or no digest, remove) the folder stamp of the digest file with inode ``digest_inode``."""
    target = _stamp_path(path)
    try:
        if stamp is None or digest_inode is None:
            target.unlink(missing_ok=True)
            return
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(orjson.dumps({"folder": stamp, "digest_inode": digest_inode}))
        os.replace(tmp, target)
    except OSError:
        pass


def _order(name: str) -> tuple[int, str]:
    """The order rows are written in: the tables' (graded cells by blind number, "9.json" before "10.json")."""
    return len(name), name


def _write(path: Path, header: dict[str, Any], rows: Rows) -> int | None:
    """Write the digest aside and rename it over the old one; its inode, or None when the folder is read-only."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(orjson.dumps(header) + b"\n")
            dumps = orjson.dumps
            # In the order the tables walk the files (graded cells by blind number: "9.json" before
            # "10.json"): rows read back are then laid out in memory in that order, and a pass over
            # 100,000 of them took half the time of one in the folder's order.
            ordered = sorted(rows.values(), key=lambda entry: _order(entry[0]))
            handle.write(b"".join(dumps(entry) + b"\n" for entry in ordered))
            inode = os.fstat(handle.fileno()).st_ino
        os.replace(tmp, path)  # no fsync: a digest lost to a power cut is rebuilt from the files
        return inode
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass  # a read-only folder: the tables still print, from the files, every time
        return None


def read_digest(folder: Path, digest: Path, kind: str, version: str,
                derive: Callable[[dict[str, Any]], Any], *, skip_unreadable: bool = False) -> dict[str, Any]:
    """``{file name: row}`` for every ``*.json`` file of ``folder``, through the digest file ``digest``.

    When the folder itself is unchanged since the digest was written (its modification time and
    inode: every writer of these folders replaces a file by a rename, which changes the folder),
    the digest's rows are the answer. Otherwise every file is stat-ed: rows of unchanged files
    (same size, modification time and inode) come from the digest, the other files are read and
    ``derive``d, and the digest is rewritten. A file that is not JSON raises ``ValueError`` as
    reading it directly would, or with ``skip_unreadable`` has no row (and is read again next time).
    """
    with no_gc():
        return _read_digest(folder, digest, _header(kind, version), derive, skip_unreadable)


def _read_digest(folder: Path, digest: Path, header: dict[str, Any], derive: Callable[[dict[str, Any]], Any],
                 skip_unreadable: bool) -> dict[str, Any]:
    cached, loaded_inode = _load(digest, header)
    stamp = _read_stamp(digest, loaded_inode) if cached else None
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        if cached:
            _write(digest, header, {})
        return {}
    now_stamp = [st.st_mtime_ns, st.st_ino]
    if stamp is not None and stamp == now_stamp:
        return {name: entry[4] for name, entry in cached.items()}
    trusted = time.time_ns() - st.st_mtime_ns > RACY_NS
    rows: Rows = {}
    changed = False
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                fst = entry.stat()
            except FileNotFoundError:
                continue
            old = cached.get(name)
            if old is not None and old[1] == fst.st_mtime_ns and old[2] == fst.st_size and old[3] == fst.st_ino:
                rows[name] = old
                continue
            try:
                with open(entry.path, "rb") as handle:
                    data = handle.read()
            except FileNotFoundError:
                continue
            try:
                doc = loads(data)
            except ValueError:
                if skip_unreadable:
                    changed = True
                    continue
                raise
            rows[name] = [name, fst.st_mtime_ns, fst.st_size, fst.st_ino, derive(doc)]
            changed = True
    if changed or len(rows) != len(cached):
        inode = _write(digest, header, rows)
    else:
        inode = loaded_inode  # the digest read above, found whole for this folder
    _save_stamp(digest, now_stamp if trusted else None, inode)
    return {name: entry[4] for name, entry in rows.items()}


def entry_line(name: str, st: os.stat_result, row: Any) -> bytes:
    """One digest line for the file ``name`` with stat ``st`` (``read_digest`` reuses it while the file is unchanged)."""
    return orjson.dumps([name, st.st_mtime_ns, st.st_size, st.st_ino, row]) + b"\n"


def _head_of(raw: bytes) -> tuple[str, tuple[int, int, int] | None]:
    """The file name a digest line starts with and its (mtime_ns, size, inode), without parsing its row.

    Every digest line is written by ``orjson.dumps`` as ``["NAME",MTIME,SIZE,INODE,...``; names
    hold no quote or backslash. Anything else is parsed whole.
    """
    end = raw.find(b'"', 2)
    name = raw[2:end]
    if raw.startswith(b'["') and end > 0 and b"\\" not in name and raw[end + 1:end + 2] == b",":
        parts = raw[end + 2:end + 80].split(b",", 3)
        try:
            return name.decode(), (int(parts[0]), int(parts[1]), int(parts[2]))
        except (ValueError, IndexError):
            return name.decode(), None
    entry = loads(raw)
    return str(entry[0]), (entry[1], entry[2], entry[3])


def _whole_for(folder: Path, stats: dict[str, tuple[int, int, int] | None]) -> list[int] | None:
    """The folder's stamp when ``stats`` has a row, of the file as it is now, for each of its files, and no more."""
    try:
        before = os.stat(folder)
        seen = 0
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(".json") or name.startswith("."):
                    continue
                st = entry.stat()
                if stats.get(name) != (st.st_mtime_ns, st.st_size, st.st_ino):
                    return None
                seen += 1
        after = os.stat(folder)
    except OSError:
        return None
    if seen != len(stats) or (before.st_mtime_ns, before.st_ino) != (after.st_mtime_ns, after.st_ino):
        return None
    return [after.st_mtime_ns, after.st_ino]


def merge_primed(digest: Path, kind: str, version: str, primed: Path, folder: Path | None = None, *,
                 sole_writer: bool = False) -> None:
    """Fold the rows another stage primed (``entry_line``s in ``primed``) into ``digest``, then remove ``primed``.

    The digest becomes its own rows (when whole and of this kind and version), each replaced by
    a primed row of the same file, plus the new primed rows, in the tables' order: the first
    table after a grading then reads no graded cell or record again. It goes line by line,
    holding only names, stats and offsets (100,000 rows of 4 KB would be 400 MB). A primed row
    is still only a cache: ``read_digest`` checks every row against its file's stat as always.

    With ``folder`` (the folder the rows describe), the folder's stamp is saved when every file
    in it has a row of its stat and there are no other rows, so the next read stats no file:
    when the folder changed within the last 2 s only if the caller is its ``sole_writer`` (holds
    the lock every writer of it takes), else the racy rule of ``read_digest`` holds.
    """
    header = orjson.dumps(_header(kind, version)) + b"\n"
    spans: dict[str, tuple[int, int, int]] = {}  # name -> (source, offset, length); primed rows win
    stats: dict[str, tuple[int, int, int] | None] = {}
    sources = []
    try:
        old = open(digest, "rb")
    except OSError:
        old = None
    with open(primed, "rb") as fresh:
        if old is not None:
            with old:
                if old.readline() == header:  # else stale as a whole: its files are derived on the next read
                    sources.append(old.name)
                    offset = old.tell()
                    for raw in old:
                        name, stats[name] = _head_of(raw)
                        spans[name] = (0, offset, len(raw))
                        offset += len(raw)
        at = len(sources)
        sources.append(fresh.name)
        offset = 0
        for raw in fresh:
            name, stats[name] = _head_of(raw)
            spans[name] = (at, offset, len(raw))
            offset += len(raw)
    tmp = digest.with_name(f".{digest.name}.{os.getpid()}.tmp")
    handles = [open(path, "rb") for path in sources]
    try:
        with open(tmp, "wb") as out:
            out.write(header)
            for name in sorted(spans, key=_order):
                source, offset, length = spans[name]
                handles[source].seek(offset)
                out.write(handles[source].read(length))
            inode = os.fstat(out.fileno()).st_ino
    finally:
        for handle in handles:
            handle.close()
    os.replace(tmp, digest)  # no fsync, as for every digest: one lost to a power cut is rebuilt
    stamp = _whole_for(folder, stats) if folder is not None else None
    if stamp is not None and not sole_writer and time.time_ns() - stamp[0] <= RACY_NS:
        stamp = None
    _save_stamp(digest, stamp, inode)  # without a stamp the next read stats every file
    primed.unlink()
