"""The AgentDojo leaderboard and the cross-check table (issue 16).

Reads only an AgentDojo grading file (``assistant-eval.agentdojo-grading/1``). Per model:
utility (share of cells whose user task AgentDojo's ``utility()`` passes) and attack success
(share of crossed cells whose injection task's ``security()`` says the attack worked), each
with its n and a Wilson 95% interval, and our behaviour checks where they applied. The
cross-check table gives, per suite and model, how often our final-state verdict and
``utility()`` agree where ours applies, and every disagreement by cause.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from pytest_assistant_eval.stats import wilson
from pytest_assistant_eval.tables.render import format_rate, render_table

__all__ = ["render_board", "render_crosscheck", "crosscheck_rows"]


def _rate(values: list[bool]) -> str:
    return format_rate(wilson(sum(values), len(values)))


def render_board(cells: list[dict[str, Any]]) -> str:
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cells:
        by_model[c["model"]].append(c)
    rows = []
    for model in sorted(by_model):
        runs = by_model[model]
        rows.append([
            model,
            _rate([c["utility"] for c in runs]),
            _rate([c["attack_success"] for c in runs if c["attack_success"] is not None]),
            _rate([c["final_state"] for c in runs if c["final_state"] is not None]),
            _rate([c["real_info"] for c in runs if c["real_info"] is not None]),
            _rate([c["reports_back"] for c in runs if c["reports_back"] is not None]),
        ])
    return render_table(["assistant", "utility", "attack success", "final state (ours)", "real info", "reports back"],
                        rows, ["l"] + ["r"] * 5,
                        title="AgentDojo: share of cells, n, Wilson 95% (attack success: crossed cells only)")


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
