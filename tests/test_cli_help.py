"""Every option of every subcommand says what it is for, and the command tells its version (issue 10, item 10)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from pytest_assistant_eval.cli import build_parser


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_option_of_a_subcommand_has_a_help_line(name):
    parser = subcommands()[name]
    silent = [a.option_strings[0] if a.option_strings else a.dest for a in parser._actions
              if not (a.help or "").strip() or a.help == argparse.SUPPRESS]
    assert silent == []


def test_the_top_level_options_have_help_lines():
    parser = build_parser()
    silent = [a.dest for a in parser._actions if not isinstance(a, argparse._SubParsersAction)
              and not (a.help or "").strip()]
    assert silent == []


def test_the_command_tells_its_version():
    from pytest_assistant_eval.records import HARNESS_VERSION

    proc = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"assistant-eval {HARNESS_VERSION}"


@pytest.mark.parametrize("where", ["before", "after"])
def test_calibration_is_read_before_or_after_the_subcommand(where, tmp_path):
    args = ["build", "--out", str(tmp_path)]
    given = ["--calibration", str(tmp_path / "mine")]
    parsed, extra = build_parser().parse_known_args([*given, *args] if where == "before" else [*args, *given])
    assert extra == [] and parsed.calibration == tmp_path / "mine"
