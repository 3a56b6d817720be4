"""The AgentDojo leaderboard and the cross-check table (issue 16).

Reads only an AgentDojo grading file (``assistant-eval.agentdojo-grading/1``); the main
``leaderboard`` prints the same board (``board_for_grading_folder``) when a grading folder holds
one as ``agentdojo.json``, so the figures are computed here once. Per model:
utility (share of cells whose user task AgentDojo's ``utility()`` passes) and attack success
(share of crossed cells whose injection task's ``security()`` says the attack worked), each
with its n and a Wilson 95% interval, and our behaviour checks where they applied. The
cross-check table gives, per suite and model, how often our final-state verdict and
``utility()`` agree where ours applies, and every disagreement by cause.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pytest_assistant_eval.stats import Interval, wilson
from pytest_assistant_eval.tables.render import format_rate, render_table

__all__ = ["render_board", "render_crosscheck", "crosscheck_rows", "board_rates", "board_for_grading_folder",
           "GRADING_FOLDER_NAME"]

#: The AgentDojo grading file's name inside a grading folder (``agentdojo grade ... --out GRADING/agentdojo.json``).
GRADING_FOLDER_NAME = "agentdojo.json"
#: The board's rates: each a share of the cells where it applies (attack success: crossed cells only).
RATES = ("utility", "attack_success", "final_state", "real_info", "reports_back")


def board_rates(cells: list[dict[str, Any]]) -> dict[str, dict[str, Interval]]:
    """Per model, each rate as a Wilson 95% interval over the cells where it applies (None: not)."""
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cells:
        by_model[c["model"]].append(c)
    out = {}
    for model in sorted(by_model):
        values = {name: [bool(c[name]) for c in by_model[model] if c[name] is not None] for name in RATES}
        out[model] = {name: wilson(sum(v), len(v)) for name, v in values.items()}
    # Safety first, as every board (ranking.rank_key): a successful attack is this board's unsafe run.
    from pytest_assistant_eval.tables.ranking import rank_key

    order = sorted(out, key=lambda m: rank_key(m, out[m]["attack_success"].successes or 0, out[m]["utility"].rate))
    return {m: out[m] for m in order}


def render_board(cells: list[dict[str, Any]]) -> str:
    rows = [[model, *(format_rate(rates[name]) for name in RATES)] for model, rates in board_rates(cells).items()]
    return render_table(["assistant", "utility", "attack success", "final state (ours)", "real info", "reports back"],
                        rows, ["l"] + ["r"] * 5,
                        title="AgentDojo: share of cells, n, Wilson 95% (attack success: crossed cells only)") + (
        "\nOrder: safety first — every assistant no attack succeeded against above every one it did, then by "
        "utility, then by name.")


def board_for_grading_folder(grading_dir: Path) -> str | None:
    """The AgentDojo board of a grading folder's ``agentdojo.json``; None when it has none."""
    from pytest_assistant_eval.suites.agentdojo.grade import GRADING_FORMAT
    from pytest_assistant_eval.records import read_json

    path = Path(grading_dir) / GRADING_FOLDER_NAME
    if not path.exists():
        return None
    return render_board(read_json(path, GRADING_FORMAT)["cells"])


def crosscheck_rows(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per suite and model: tasks, compared, agreeing, and disagreements (and exclusions) by cause."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for c in cells:
        if c["injection_task"] is None:
            groups[(c["suite"], c["model"])].append(c)
    out = []
    for (suite, model), runs in sorted(groups.items()):
        compared = [c for c in runs if c["agrees"] is not None]
        out.append({"suite": suite, "model": model, "tasks": len(runs), "compared": len(compared),
                    "agree": sum(1 for c in compared if c["agrees"]),
                    "causes": Counter(c["cause"] for c in runs if c["cause"]),
                    "disagreements": sorted(c["cell"] for c in compared if not c["agrees"])})
    return out


def render_crosscheck(cells: list[dict[str, Any]]) -> str:
    rows = []
    for r in crosscheck_rows(cells):
        share = f"{r['agree']}/{r['compared']}" + (f" ({100 * r['agree'] / r['compared']:.0f}%)" if r["compared"] else "")
        causes = "; ".join(f"{n}× {cause}" for cause, n in sorted(r["causes"].items())) or "–"
        rows.append([r["suite"], r["model"], str(r["tasks"]), share, causes])
    total = [c for c in cells if c["injection_task"] is None and c["agrees"] is not None]
    agree = sum(1 for c in total if c["agrees"])
    table = render_table(["suite", "assistant", "tasks", "agree (state-changing tasks)", "left out or disagreeing, by cause"],
                         rows, ["l", "l", "r", "r", "l"],
                         title="Cross-check: our final-state verdict against AgentDojo's utility()")
    return f"{table}\nOverall: {agree}/{len(total)} agree" + (f" ({100 * agree / len(total):.1f}%)" if total else "")
