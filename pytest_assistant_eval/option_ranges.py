"""The range of every numeric option, checked when the command line is parsed (issue 31, item H).

``--request-deadline inf`` (or ``1e999``, ``1e12``) was accepted and every cell then failed with
``OverflowError: timestamp out of range``. Each numeric option of every command (``run``, the
plugin, ``grade-ai``, ``review``, the tables, AgentDojo's) takes its type from here: a finite
number inside the range the harness can use, or argparse's usage error naming the range.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

DAY = 86400.0


def seconds(low: float, high: float, *, above: bool = False) -> Callable[[str], float]:
    """A finite number of seconds in ``[low, high]`` (``above``: strictly above ``low``)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
        if not math.isfinite(value) or value > high or value < low or (above and value == low):
            side = "above" if above else "at least"
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: a number of seconds {side} {low:g} "
                                             f"and at most {high:g}")
        return value

    parse.__name__ = "seconds"  # argparse names the type in its messages
    return parse


def count(low: int, high: int) -> Callable[[str], int]:
    """A whole number in ``[low, high]``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: a whole number from {low} to {high}")
        return value

    parse.__name__ = "count"
    return parse


#: The shared ranges: the same option has the same range in every command.
PACE = seconds(0.0, DAY)
REQUEST_DEADLINE = seconds(0.0, DAY, above=True)
REPEATS = count(1, 1000)
REQUESTS_PER_DAY = count(0, 10_000_000)
SEED = count(0, 2 ** 63 - 1)
PASS_K = count(1, 1000)
SITTING = count(0, 1_000_000)
PER_LEVEL = count(1, 1_000_000)
CONTEXT_TOKENS = count(1, 100_000_000)
