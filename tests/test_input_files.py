"""Every input path is a regular file within a size limit; YAML merge keys are refused by line (issue 31, J).

``/dev/zero`` given to ``--prices``, ``calibrate --file`` or ``review --import-md`` hung the command;
a merge key (``<<: *base``) in a world fixture or a prices file gave a ``ConstructorError``
traceback. Each is now one clear refusal naming the file (and the line).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_assistant_eval.input_files import FileTooLarge, NotARegularFile, read_input_text
from tests.provider_runs_helpers import CALIBRATION


def _cli(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=60)  # a hang fails the test (TimeoutExpired)


@pytest.fixture()
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


def test_a_device_a_pipe_a_folder_and_a_huge_file_are_refused_at_once(tmp_path, fifo):
    for path in (Path("/dev/zero"), fifo, tmp_path):
        with pytest.raises(NotARegularFile, match="not a regular file"):
            read_input_text(path)
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(FileTooLarge):
        read_input_text(big, limit=1024)
    assert read_input_text(big, limit=4096) == "x" * 2048


@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
@pytest.mark.parametrize("argv", [
    ["report", "--dir", "{tmp}/grading", "--prices", "{path}"],
    ["summary", "--dir", "{tmp}/grading", "--prices", "{path}"],
    ["calibrate", "--file", "{path}"],
    ["review", "--dir", "{tmp}/grading", "--import-md", "{path}"],
])
def test_a_command_given_a_device_or_a_pipe_refuses_it_without_hanging(argv, source, tmp_path, fifo):
    path = "/dev/zero" if source == "/dev/zero" else str(fifo)
    done = _cli(*(a.format(tmp=tmp_path, path=path) for a in argv), cwd=tmp_path)
    text = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in text, text
    if argv[0] != "review":  # review first looks for its grading folder
        assert "not a regular file" in text, text


def test_a_merge_key_in_a_prices_file_is_refused_with_its_line(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("format: assistant-eval.prices/1\ncurrency: USD\nbase: &b {input: 1.0, output: 2.0}\n"
                      "models:\n  openai:gpt-4.1:\n    <<: *b\n", encoding="utf-8")
    done = _cli("report", "--dir", tmp_path / "grading", "--prices", prices, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "ConstructorError" not in done.stderr
    assert f"{prices}:6: a YAML merge key ('<<') is not supported" in done.stderr, done.stderr


def test_a_merge_key_in_a_world_fixture_is_refused_with_its_file_and_line(tmp_path):
    source = tmp_path / "calibration"
    shutil.copytree(CALIBRATION, source)
    contacts = source / "world" / "contacts.yaml"
    text = contacts.read_text(encoding="utf-8")
    contacts.write_text(text + "\nx-defaults: &d {city: Lyon}\nx-more:\n  <<: *d\n", encoding="utf-8")
    done = _cli("--calibration", source, "build", "--out", tmp_path / "w", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "contacts.yaml" in done.stderr and "merge key" in done.stderr, done.stderr


def test_a_small_file_is_read_without_allocating_the_readers_limit(tmp_path):
    """Issue 32: ``read(limit + 1)`` allocated 64 MB for each 5 KB case file (every command's peak memory)."""
    import tracemalloc

    from pytest_assistant_eval.input_files import TEXT_LIMIT

    path = tmp_path / "case.yaml"
    path.write_text("id: T01\n" * 700)
    tracemalloc.start()
    try:
        text = read_input_text(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text == "id: T01\n" * 700
    assert peak < TEXT_LIMIT // 16


def test_a_file_that_grew_after_its_stat_is_read_whole_or_refused_past_the_limit(tmp_path, monkeypatch):
    from pytest_assistant_eval import input_files

    path = tmp_path / "grown.txt"
    path.write_bytes(b"x" * 5000)
    real_fstat = os.fstat

    class Smaller:  # the stat of the file as it was before it grew to 5,000 bytes
        def __init__(self, st):
            self.st_mode, self.st_size = st.st_mode, 10

    monkeypatch.setattr(input_files.os, "fstat", lambda fd: Smaller(real_fstat(fd)))
    assert input_files.read_input_bytes(path) == b"x" * 5000
    assert input_files.read_input_bytes(path, limit=5000) == b"x" * 5000
    with pytest.raises(FileTooLarge):
        input_files.read_input_bytes(path, limit=4999)
