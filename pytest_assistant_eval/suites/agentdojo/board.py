"""The AgentDojo board, as AgentDojo reports it, and the cross-check table (issue 16, 25).

Reads only an AgentDojo grading file (``assistant-eval.agentdojo-grading/2``; /1 is still read,
with what it lacks said as unknown). The main ``leaderboard`` prints the same board
(``board_for_grading_folder``) when a grading folder holds one as ``agentdojo.json``, so the
figures are computed here once (``board_rows``), and the data tables are laid out from them.

AgentDojo's three figures, apart, each with its n and a Wilson 95% interval, per suite and
over all suites, per model: **benign utility** (cells without an injection task), **utility
under attack** (crossed cells) and **attack success** (crossed cells whose injection task's
``security()`` holds: the attacker's goal was reached). Pooling benign and attacked cells into
one utility, as the board did before, gives a figure AgentDojo never prints.

Cells are grouped by setting (benchmark version, conversation, defense) and never pooled
across settings: cells of our own conversation are headed "not comparable with AgentDojo's
leaderboard", a defense is named. Our own checks (final state, real info, reports back) get a
table of their own, marked ours. Under the tables: what each run covered (``selection.py``) and
the tasks whose ``utility()`` already holds on the start state (evaluated by grading).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence, TextIO

from pytest_assistant_eval.stats import Interval, wilson
from pytest_assistant_eval.tabular.render import format_rate, render_table

__all__ = ["render_board", "render_crosscheck", "crosscheck_rows", "board_rows", "ours_rows", "board_for_grading_folder",
           "read_grading", "board_command", "setting_label", "start_state_tasks", "BoardRow", "GRADING_FOLDER_NAME",
           "FIGURES", "OURS", "ALL_SUITES"]

#: The AgentDojo grading file's name inside a grading folder (``agentdojo grade ... --out GRADING/agentdojo.json``).
GRADING_FOLDER_NAME = "agentdojo.json"
#: AgentDojo's figures, as its benchmark prints them (utility, utility under attack, attack success).
FIGURES = ("benign_utility", "utility_under_attack", "attack_success")
#: Our checks on the same cells, shown apart.
OURS = ("final_state", "real_info", "reports_back")
#: The suite column's value of the row over every suite.
ALL_SUITES = "all"
#: What a grading file /1 did not say (its cells were all of our conversation and v1.2.1).
_V1_DEFAULTS = {"benchmark_version": "v1.2.1", "conversation": "ours", "defense": None, "attack": None,
                "agentdojo_version": None, "holds_at_start": None, "run": None}

Setting = tuple[str, str, str | None]  # (benchmark version, conversation, defense)


def setting_of(cell: Mapping[str, Any]) -> Setting:
    """A cell's setting; what a /1 grading file did not say is read as it was then."""
    return (str(cell.get("benchmark_version") or _V1_DEFAULTS["benchmark_version"]),
            str(cell.get("conversation") or _V1_DEFAULTS["conversation"]), cell.get("defense"))


def setting_label(setting: Setting) -> str:
    """The heading a setting's figures stand under: what they may be compared with."""
    version, conversation, defense = setting
    parts = [f"AgentDojo {version}"]
    if conversation == "agentdojo":
        parts.append("AgentDojo's conversation")
    else:
        parts.append(f"{'our' if conversation == 'ours' else conversation} conversation: "
                     "not comparable with AgentDojo's leaderboard")
    parts.append(f"defense {defense}" if defense else "no defense")
    return ", ".join(parts)


@dataclass(frozen=True)
class BoardRow:
    """One model (and attack) in one suite, or over all suites, in one setting."""

    setting: Setting
    model: str
    attack: str | None  # the crossed cells' attack (None: no crossed cell)
    suite: str  # a suite's name, or ALL_SUITES
    figures: dict[str, Interval]  # FIGURES -> interval
    start_state_cells: int  # cells of the row whose utility() holds on the start state


def _rate(values: Sequence[bool]) -> Interval:
    return wilson(sum(values), len(values))


def _figures(benign: Sequence[Mapping[str, Any]], crossed: Sequence[Mapping[str, Any]]) -> dict[str, Interval]:
    return {"benign_utility": _rate([bool(c["utility"]) for c in benign]),
            "utility_under_attack": _rate([bool(c["utility"]) for c in crossed]),
            "attack_success": _rate([bool(c["attack_success"]) for c in crossed if c["attack_success"] is not None])}


def board_rows(cells: Sequence[Mapping[str, Any]]) -> list[BoardRow]:
    """Every row of the board: per setting, model and attack, each suite then all suites.

    Benign cells carry no attack: a model's benign utility is the same in each of its attack
    rows. Within a setting, safety first (``tabular/ranking.py``): every (model, attack) no attack
    succeeded against above every one an attack did, then by benign utility, then by name.
    """
    from pytest_assistant_eval.tabular.ranking import rank_key

    groups: dict[tuple[Setting, str], list[Mapping[str, Any]]] = defaultdict(list)
    for c in cells:
        groups[(setting_of(c), c["model"])].append(c)
    rows: list[BoardRow] = []
    for setting in sorted({s for s, _ in groups}, key=lambda s: (s[0], s[1] != "agentdojo", s[1], s[2] or "")):
        blocks = []
        for (s, model), mine in groups.items():
            if s != setting:
                continue
            attacks = sorted({c.get("attack") for c in mine if c["injection_task"] is not None}, key=str) or [None]
            for attack in attacks:
                block = []
                for suite in [*sorted({c["suite"] for c in mine}), ALL_SUITES]:
                    here = [c for c in mine if suite in (ALL_SUITES, c["suite"])]
                    benign = [c for c in here if c["injection_task"] is None]
                    crossed = [c for c in here if c["injection_task"] is not None and c.get("attack") == attack]
                    block.append(BoardRow(setting, model, attack, suite, _figures(benign, crossed),
                                          sum(1 for c in [*benign, *crossed] if c.get("holds_at_start"))))
                total = block[-1].figures
                key = rank_key(f"{model} {attack or ''}", total["attack_success"].successes or 0,
                               total["benign_utility"].rate)
                blocks.append((key, block))
        for _, block in sorted(blocks, key=lambda b: b[0]):
            rows += block
    return rows


def ours_rows(cells: Sequence[Mapping[str, Any]]) -> list[tuple[Setting, str, dict[str, Interval]]]:
    """Our checks per setting and model, over all its cells where each applies (None: does not)."""
    groups: dict[tuple[Setting, str], list[Mapping[str, Any]]] = defaultdict(list)
    for c in cells:
        groups[(setting_of(c), c["model"])].append(c)
    return [(setting, model, {name: _rate([bool(c[name]) for c in mine if c.get(name) is not None]) for name in OURS})
            for (setting, model), mine in sorted(groups.items(), key=lambda kv: (kv[0][0][0], kv[0][0][1], str(kv[0][0][2]),
                                                                                   kv[0][1]))]


def start_state_tasks(cells: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per suite, the user tasks (numbers) of cells whose utility() holds on the untouched start state."""
    found: dict[str, set[int]] = defaultdict(set)
    for c in cells:
        if c.get("holds_at_start"):
            found[c["suite"]].add(int(str(c["user_task"]).rsplit("_", 1)[1]))
    return {suite: [str(n) for n in sorted(numbers)] for suite, numbers in sorted(found.items())}


_HEADERS = ["assistant", "attack", "suite", "benign utility", "utility under attack", "attack success"]


def render_board(cells: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]] = ()) -> str:
    """The board's text: per setting a table of AgentDojo's figures, our checks apart, then what ran."""
    from pytest_assistant_eval.suites.agentdojo.selection import selection_lines

    rows = board_rows(cells)
    parts = []
    for setting in dict.fromkeys(r.setting for r in rows):
        mine = [r for r in rows if r.setting == setting]
        table = [[r.model, r.attack or "–", r.suite, *(format_rate(r.figures[f]) for f in FIGURES)] for r in mine]
        parts.append(render_table(_HEADERS, table, ["l", "l", "l", "r", "r", "r"], title=setting_label(setting)))
    parts.append("Benign utility: cells without an injection task; utility under attack and attack success "
                 "(the injection task's security() holds: the attacker's goal reached): crossed cells. Each a share "
                 "with n and a Wilson 95% interval, as AgentDojo reports them apart.\n"
                 "Order: safety first — every assistant no attack succeeded against above every one it did, then by "
                 "benign utility, then by name.")
    ours = [[model, setting_label(setting).split(", ", 1)[1], *(format_rate(r[name]) for name in OURS)]
            for setting, model, r in ours_rows(cells)]
    parts.append(render_table(["assistant", "setting", "final state", "real info", "reports back"], ours,
                              ["l", "l", "r", "r", "r"],
                              title="Ours, not AgentDojo's: our checks on the same cells (never in the figures above)"))
    flagged = start_state_tasks(cells)
    if flagged:
        parts.append("utility() already holds on the untouched start state (evaluated on each cell's start "
                     "environment: these pass utility whatever was done): "
                     + "; ".join(f"{suite} user tasks {', '.join(numbers)}" for suite, numbers in flagged.items()))
    if cells and all(c.get("holds_at_start") is None for c in cells):
        parts.append("utility() on the start state: not evaluated (grading file /1; grade the folders again)")
    lines = selection_lines(runs)
    parts.append("Selection (what each run covered of the benchmark):\n" + (
        "\n".join(f"  {line}" for line in lines) if lines else "  not recorded (grading file /1; grade the folders again)"))
    return "\n\n".join(parts)


def read_grading(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(cells, runs) of an AgentDojo grading file; a /1 file's cells get what it did not say as unknown."""
    from pytest_assistant_eval.records import RecordError, read_json
    from pytest_assistant_eval.suites.agentdojo.grade import READABLE_FORMATS

    data = read_json(path)
    found = data.get("format") if isinstance(data, dict) else None
    if found not in READABLE_FORMATS:
        raise RecordError(f"{path}: format {found!r}, expected one of {', '.join(map(repr, READABLE_FORMATS))}")
    if found == READABLE_FORMATS[0]:
        return [{**_V1_DEFAULTS, **c} for c in data["cells"]], []
    return list(data["cells"]), list(data.get("runs", []))


def board_for_grading_folder(grading_dir: Path) -> str | None:
    """The AgentDojo board of a grading folder's ``agentdojo.json``; None when it has none."""
    path = Path(grading_dir) / GRADING_FOLDER_NAME
    if not path.exists():
        return None
    return render_board(*read_grading(path))


def board_tables(path: Path) -> list[Any]:
    """The board of a grading file as data tables (``--format``; docs/results.md)."""
    from pytest_assistant_eval.tabular.table_data import agentdojo_tables

    cells, runs = read_grading(path)
    return agentdojo_tables(board_rows(cells), ours_rows(cells), runs)


def board_command(action: str, path: Path, fmt: str = "text", table: str | None = None,
                  out: TextIO = sys.stdout) -> int:
    """``agentdojo board|crosscheck FILE``: the text, or (board) the data tables in ``fmt``."""
    if action == "board" and fmt != "text":
        from pytest_assistant_eval.tabular.formats import emit

        emit(fmt, board_tables(path), None, out, table=table)
        return 0
    cells, runs = read_grading(path)
    print(render_board(cells, runs) if action == "board" else render_crosscheck(cells), file=out)
    return 0


def crosscheck_rows(cells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per suite and model: tasks, compared, agreeing, and disagreements (and exclusions) by cause."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for c in cells:
        if c["injection_task"] is None:
            groups[(c["suite"], c["model"])].append(c)
    out = []
    for (suite, model), runs in sorted(groups.items()):
        compared = [c for c in runs if c["agrees"] is not None]
        out.append({"suite": suite, "model": model, "tasks": len(runs), "compared": len(compared),
                    "agree": sum(1 for c in compared if c["agrees"]),
                    "causes": Counter(c["cause"] for c in runs if c["cause"]),
                    "disagreements": sorted(c["cell"] for c in compared if not c["agrees"]),
                    "holds_at_start": start_state_tasks(runs).get(suite, [])})
    return out


def render_crosscheck(cells: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for r in crosscheck_rows(cells):
        share = f"{r['agree']}/{r['compared']}" + (f" ({100 * r['agree'] / r['compared']:.0f}%)" if r["compared"] else "")
        causes = "; ".join(f"{n}× {cause}" for cause, n in sorted(r["causes"].items())) or "–"
        rows.append([r["suite"], r["model"], str(r["tasks"]), share, ", ".join(r["holds_at_start"]) or "–", causes])
    total = [c for c in cells if c["injection_task"] is None and c["agrees"] is not None]
    agree = sum(1 for c in total if c["agrees"])
    table = render_table(["suite", "assistant", "tasks", "agree (state-changing tasks)",
                          "utility() holds at start (tasks)", "left out or disagreeing, by cause"],
                         rows, ["l", "l", "r", "r", "l", "l"],
                         title="Cross-check: our final-state verdict against AgentDojo's utility()")
    return f"{table}\nOverall: {agree}/{len(total)} agree" + (f" ({100 * agree / len(total):.1f}%)" if total else "")
