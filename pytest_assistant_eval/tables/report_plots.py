"""The report's plots (S8.6): rates with their Wilson intervals, drawn by matplotlib as inline SVG.

matplotlib is imported here only, inside the functions, so no other command pays its import
time. Figures are made with ``matplotlib.figure.Figure`` (no pyplot: no global state, no GUI
backend), text is kept as SVG text (small, searchable, and escaped by matplotlib's SVG writer)
and mathtext is off, so a model named ``$x$`` is drawn as written. The SVG has no external
reference: the page stays one offline file.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_assistant_eval.stats import Interval

__all__ = ["RatePoint", "behaviour_svg", "answered_svg", "draw", "PlotProcess", "serve"]

_RC = {"svg.fonttype": "none", "text.parse_math": False, "svg.hashsalt": "assistant-eval-report",
       "font.size": 8, "axes.titlesize": 9, "font.family": "sans-serif"}
LEVEL_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


@dataclass(frozen=True)
class RatePoint:
    """One rate to plot: where it goes (group, series) and its interval."""

    group: str
    series: str
    interval: Interval


def _svg(fig: object) -> str:
    """The figure as an ``<svg>`` element for inline use: no XML prolog, doctype or metadata block."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None,  # type: ignore[attr-defined]
                                                "Type": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)


def _error_bars(points: Sequence[RatePoint]) -> tuple[list[float], list[list[float]]]:
    rates = [p.interval.rate or 0.0 for p in points]
    low = [max(0.0, (p.interval.rate or 0.0) - (p.interval.low or 0.0)) for p in points]
    high = [max(0.0, (p.interval.high or 0.0) - (p.interval.rate or 0.0)) for p in points]
    return [r * 100 for r in rates], [[v * 100 for v in low], [v * 100 for v in high]]


def behaviour_svg(checks: Sequence[str], assistants: Sequence[str],
                  rates: Mapping[tuple[str, str], Interval]) -> str:
    """One panel per check: each assistant's share of applicable runs passing it, with its interval.

    An assistant where the check never applied (n = 0) is left blank in that panel rather than
    drawn at zero: no runs is not a failing rate.
    """
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(_RC):
        height = 0.3 * len(assistants) + 1.0
        fig = Figure(figsize=(1.9 * len(checks) + 1.6, height))
        # A fixed layout, not "constrained": the solver costs a second per figure on a busy machine.
        fig.subplots_adjust(left=1.5 / (1.9 * len(checks) + 1.6), right=0.99, bottom=0.55 / height,
                            top=1 - 0.3 / height, wspace=0.12)
        axes = fig.subplots(1, len(checks), sharey=True, squeeze=False)[0]
        ys = list(range(len(assistants)))
        for ax, check in zip(axes, checks):
            shown = [(y, RatePoint(check, a, rates[(check, a)])) for y, a in zip(ys, assistants)
                     if rates[(check, a)].n]
            if shown:
                xs, err = _error_bars([p for _, p in shown])
                ax.errorbar(xs, [y for y, _ in shown], xerr=err, fmt="o", color="#4c72b0", ecolor="#8aa6d6",
                            capsize=2, markersize=4)
            ax.set_title(check.replace("_", " "))
            ax.set_xlim(-5, 105)
            ax.set_xlabel("% of applicable runs")
            ax.grid(axis="x", color="#e5e5e5")
        axes[0].set_yticks(ys, list(assistants))
        axes[0].set_ylim(len(assistants) - 0.5, -0.5)
        return _svg(fig)


def answered_svg(models: Sequence[str], levels: Sequence[str], classes: Sequence[str],
                 rates: Mapping[tuple[str, str, str], Interval],
                 escalate: frozenset[tuple[str, str, str]] = frozenset()) -> str:
    """One panel per model: the answered rate of each class at each level, with its interval.

    Levels are side by side within a class, in the levels' order, so a level that answers a
    class its lower neighbour escalates shows as a step. A (model, level, class) in
    ``escalate`` is one the level is meant to hand up: its rate is the escalated share, drawn
    as a hollow triangle, so an expected escalation never reads as a 0% answered point.
    """
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    columns = min(4, max(1, len(models)))
    rows = (len(models) + columns - 1) // columns
    width = 0.7 / max(1, len(levels))
    with rc_context(_RC):
        height = 1.9 * rows + 0.6
        fig = Figure(figsize=(2.4 * columns + 0.6, height))
        fig.subplots_adjust(left=0.6 / (2.4 * columns + 0.6), right=0.99, bottom=0.55 / height, top=1 - 0.3 / height,
                            wspace=0.08, hspace=0.45)
        axes = fig.subplots(rows, columns, sharey=True, squeeze=False).ravel()
        for ax, model in zip(axes, models):
            for i, level in enumerate(levels):
                colour = LEVEL_COLOURS[i % len(LEVEL_COLOURS)]
                for hand_up in (False, True):
                    points = [(x, rates[(model, level, c)]) for x, c in enumerate(classes)
                              if (model, level, c) in rates and rates[(model, level, c)].n
                              and ((model, level, c) in escalate) == hand_up]
                    if not points:
                        continue
                    xs, err = _error_bars([RatePoint(model, level, iv) for _, iv in points])
                    ax.errorbar([x - 0.35 + width * (i + 0.5) for x, _ in points], xs, yerr=err,
                                fmt="^" if hand_up else "o", capsize=2, markersize=4 if hand_up else 3.5, color=colour,
                                markerfacecolor="none" if hand_up else colour,
                                label="escalated (expected at this level)" if hand_up else level)
            ax.set_title(model)
            ax.set_xticks(range(len(classes)), list(classes))
            ax.set_ylim(-5, 105)
            ax.grid(axis="y", color="#e5e5e5")
        for ax in axes[len(models):]:
            ax.set_visible(False)
        axes[0].set_ylabel("answered, % of cells")
        legend: dict[str, object] = {}
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                legend.setdefault(label, handle)
        ordered = [level for level in levels if level in legend]
        ordered += [name for name in legend if name not in levels]
        if ordered:
            fig.legend([legend[lv] for lv in ordered], ordered, loc="lower center", ncols=len(ordered),
                       frameon=False)
        return _svg(fig)


# -- drawing in a second process ---------------------------------------------------------------------------------
#
# matplotlib's import and first drawing (fonts, metrics) cost about a second; started first, in a
# fresh interpreter of its own, they overlap reading the grading folder instead of adding to it.
# The spec and the SVG cross as JSON, intervals as [rate, low, high, n].


def _interval(values: Sequence[Any]) -> Interval:
    return Interval(values[0], values[1], values[2], int(values[3]))


def draw(spec: Mapping[str, Any]) -> dict[str, str]:
    """Every plot of ``spec``: ``behaviour`` (checks, assistants, rates) and ``answered`` (models, levels, classes, rates)."""
    out: dict[str, str] = {}
    if "behaviour" in spec:
        b = spec["behaviour"]
        out["behaviour"] = behaviour_svg(b["checks"], b["assistants"],
                                         {(c, a): _interval(v) for c, a, v in b["rates"]})
    if "answered" in spec:
        a = spec["answered"]
        out["answered"] = answered_svg(a["models"], a["levels"], a["classes"],
                                       {(m, lv, c): _interval(v) for m, lv, c, v, *_ in a["rates"]},
                                       frozenset((m, lv, c) for m, lv, c, _, *e in a["rates"] if e == ["escalate"]))
    return out


def _warm_up() -> None:
    """Import matplotlib and draw one small text, so fonts and metrics are loaded before the spec comes."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(_RC):
        fig = Figure(figsize=(1, 1))
        fig.text(0.5, 0.5, "warm")
        _svg(fig)


def serve() -> None:
    """The second process: warm up, read one spec from stdin, write its SVGs to stdout as JSON."""
    _warm_up()
    spec = json.loads(sys.stdin.buffer.read())
    sys.stdout.write(json.dumps(draw(spec)))


def _child_env() -> dict[str, str]:
    """This process's environment, with the folder this package is imported from first on the path."""
    import os
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    return env


class PlotProcess:
    """The plots drawn by a second Python process started at once; drawn here when it cannot help."""

    def __init__(self) -> None:
        try:
            self._child: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-c", "from pytest_assistant_eval.tables.report_plots import serve; serve()"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_child_env())
        except OSError:
            self._child = None

    def draw(self, spec: Mapping[str, Any]) -> dict[str, str]:
        if not spec:
            self.close()
            return {}
        child, self._child = self._child, None
        if child is not None:
            try:
                out, _ = child.communicate(json.dumps(spec).encode("utf-8"), timeout=120)
                if child.returncode == 0:
                    return dict(json.loads(out))
            except (OSError, ValueError, subprocess.TimeoutExpired):
                child.kill()
                child.wait()
        return draw(json.loads(json.dumps(spec)))  # the same path as the child's, here

    def close(self) -> None:
        """Stop an unused child (the page had nothing to plot, or failed before plotting)."""
        child, self._child = self._child, None
        if child is not None:
            child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout, child.stderr):
                if stream is not None:
                    stream.close()
