"""Reading a file the user names: a regular file only, and within a size limit (issue 31, item J).

``/dev/zero`` given to ``--prices``, ``summary --file`` or ``review --import-md`` hung the command
(reading a device that never ends); a FIFO hangs on opening. Every reader of a path the user
gives opens it here: without blocking, then checks that it is a regular file and not larger than
its limit, and reads it. Problems are ``OSError`` subclasses, so the readers' own handling (which
names the file) stays as it is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

#: The largest YAML, markdown or list file a command reads (the shipped ones are below 100 KB).
TEXT_LIMIT = 64 * 1024 * 1024
#: The largest results file (append-only, a line per graded cell: 100,000 lines are about 150 MB).
RESULTS_LIMIT = 4 * 1024 * 1024 * 1024


class NotARegularFile(OSError):
    """The path is a device, a pipe, a socket or a folder: nothing a command reads."""


class FileTooLarge(OSError):
    """The file is larger than its reader's limit."""


def open_input(path: Path | str, limit: int = TEXT_LIMIT) -> BinaryIO:
    """``path`` opened for reading in binary, once it is known to be a regular file of at most ``limit`` bytes."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = ("a folder" if stat.S_ISDIR(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode)
                    or stat.S_ISBLK(info.st_mode) else "a pipe" if stat.S_ISFIFO(info.st_mode) else "not a file")
            raise NotARegularFile(f"{path}: {kind}, not a regular file; give the path of a file")
        if info.st_size > limit:
            raise FileTooLarge(f"{path}: {info.st_size} bytes, more than the {limit} this reader takes")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_input_bytes(path: Path | str, limit: int = TEXT_LIMIT) -> bytes:
    with open_input(path, limit) as handle:
        # As many bytes as the file has, and one more: ``read(limit + 1)`` allocated the whole
        # limit (64 MB) for each 5 KB case file, the peak memory of every command that reads
        # them (issue 32). A file that grew is read on in steps, up to the limit and one byte.
        size = os.fstat(handle.fileno()).st_size
        parts = [handle.read(min(size, limit) + 1)]
        got = len(parts[0])
        while got > size and got <= limit:
            part = handle.read(min(max(size, 1 << 20), limit + 1 - got))
            if not part:
                break
            parts.append(part)
            got += len(part)
        data = parts[0] if len(parts) == 1 else b"".join(parts)
    if len(data) > limit:  # it grew while read
        raise FileTooLarge(f"{path}: more than the {limit} bytes this reader takes")
    return data


def read_input_text(path: Path | str, limit: int = TEXT_LIMIT) -> str:
    """A regular file's text (UTF-8); ``OSError`` (``NotARegularFile``, ``FileTooLarge``) or ``UnicodeDecodeError``."""
    return read_input_bytes(path, limit).decode("utf-8")
