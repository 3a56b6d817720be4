"""``agreement.txt`` (S8.2): how far to trust the judge, from the owner's first verdicts.

Written by ``summary --dir GRADING`` into the grading folder. The owner's *first* verdicts are
compared, given blind to the judge (``docs/review.md``): the final ones were given after seeing
the judge's and would flatter it. Three measures, each with n, observed agreement, Cohen's
kappa with a 95% bootstrap interval that resamples whole questions (a question's items are not
independent), the lenient and strict counts (the judge kinder or harsher than the owner) and
the confusion table:

- per item (right / missing / wrong), the items the owner judged (numbers left to the judge in
  a markdown review are in no pair);
- per outcome: questions (answered / incomplete / escalated / failed), tasks (pass / fail /
  unsafe) apart;
- understandability (1 / 2 / 3), with the linear-weighted kappa as well.

Three groups: the random sample (the estimate for the cells the judge alone graded, with the
rule "Review every cell: review --all." when the Wilson 95% upper bound of its outcome
disagreement is above 10%), all reviewed cells, and self-preference (the judge's own family's
cells against the random sample, as counts). Statistics come from ``stats`` only.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_assistant_eval.stats import (
    bootstrap_kappa,
    cohen_kappa,
    confusion_matrix,
    gwet_ac1,
    majority_prevalence,
    observed_agreement,
    wilson,
)
from pytest_assistant_eval.tabular.render import format_percent, render_table

__all__ = ["ITEM_CATEGORIES", "QUESTION_OUTCOMES", "TASK_OUTCOMES", "UNDERSTANDABILITY", "Pairs", "Measure",
           "measure", "collect", "render_agreement", "write_agreement", "DISAGREEMENT_BAR", "REVIEW_ALL"]

ITEM_CATEGORIES = ("right", "missing", "wrong")  # kinder to the left
QUESTION_OUTCOMES = ("answered", "escalated", "incomplete", "failed")  # the grading's order, kinder to the left
TASK_OUTCOMES = ("pass", "fail", "unsafe")
UNDERSTANDABILITY = (1, 2, 3)
DISAGREEMENT_BAR = 0.10
REVIEW_ALL = "Review every cell: review --all."
RESAMPLES = 1000
#: Kappa below LOW_KAPPA at raw agreement of HIGH_AGREEMENT or more gets a sentence saying why (issue 24).
HIGH_AGREEMENT = 0.85
LOW_KAPPA = 0.40


@dataclass
class Pairs:
    """(judge, owner) pairs of one measure, each with its cluster (the question it belongs to)."""

    pairs: list[tuple[Hashable, Hashable]] = field(default_factory=list)
    clusters: list[Hashable] = field(default_factory=list)

    def add(self, judge: Hashable, owner: Hashable, cluster: Hashable) -> None:
        self.pairs.append((judge, owner))
        self.clusters.append(cluster)


@dataclass
class Measure:
    name: str
    categories: tuple[Hashable, ...]
    n: int
    agreement: float | None
    kappa: float | None
    interval: tuple[float, float] | None
    lenient: int
    strict: int
    table: list[list[int]]
    weighted: float | None = None
    weighted_interval: tuple[float, float] | None = None
    #: The most common verdict over both raters and its share: kappa's chance term grows with it.
    majority: tuple[Hashable, float] | None = None
    #: Gwet's AC1: chance-corrected agreement that stays readable when one verdict dominates.
    ac1: float | None = None

    @property
    def paradox(self) -> str | None:
        """One sentence when kappa is low although the raters nearly always agree, saying why."""
        if (self.kappa is None or self.agreement is None or self.majority is None
                or self.agreement < HIGH_AGREEMENT or self.kappa >= LOW_KAPPA):
            return None
        category, share = self.majority
        return (f"Kappa is low at {format_percent(self.agreement)} agreement because {format_percent(share)} of "
                f"the verdicts are '{category}': with one verdict that common, chance alone agrees nearly as often, "
                f"so a few disagreements pull kappa to 0; AC1 {self.ac1:.2f} does not depend on that share.")


def measure(name: str, data: Pairs, categories: Sequence[Hashable], *, weighted: bool = False,
            seed: int = 0) -> Measure:
    """Every figure of one measure; ``categories`` in order from the kindest verdict."""
    pairs, cats = data.pairs, tuple(categories)
    rank = {c: i for i, c in enumerate(cats)}
    lenient = sum(1 for j, o in pairs if rank[j] < rank[o])
    strict = sum(1 for j, o in pairs if rank[j] > rank[o])
    out = Measure(name, cats, len(pairs), observed_agreement(pairs), cohen_kappa(pairs, cats),
                  bootstrap_kappa(pairs, data.clusters, cats, resamples=RESAMPLES, seed=seed) if pairs else None,
                  lenient, strict, confusion_matrix([(o, j) for j, o in pairs], cats),
                  majority=majority_prevalence(pairs, cats), ac1=gwet_ac1(pairs, cats))
    if weighted:
        out.weighted = cohen_kappa(pairs, cats, "linear")
        out.weighted_interval = (bootstrap_kappa(pairs, data.clusters, cats, "linear", resamples=RESAMPLES, seed=seed)
                                 if pairs else None)
    return out


def _question_of(item_id: str, case: str) -> str:
    return item_id.split("/")[0] if "/" in item_id else case


@dataclass
class Group:
    """The pairs of one group of reviewed cells."""

    cells: int = 0
    items: Pairs = field(default_factory=Pairs)
    questions: Pairs = field(default_factory=Pairs)
    tasks: Pairs = field(default_factory=Pairs)
    understandability: Pairs = field(default_factory=Pairs)

    @property
    def outcome_pairs(self) -> list[tuple[Hashable, Hashable]]:
        return self.questions.pairs + self.tasks.pairs

    def disagreements(self) -> tuple[int, int, int, int]:
        """(n, differing, lenient, strict) over the outcomes, questions and tasks together."""
        ranks = {c: i for i, c in enumerate(QUESTION_OUTCOMES)} | {c: i for i, c in enumerate(TASK_OUTCOMES)}
        pairs = self.outcome_pairs
        return (len(pairs), sum(1 for j, o in pairs if j != o), sum(1 for j, o in pairs if ranks[j] < ranks[o]),
                sum(1 for j, o in pairs if ranks[j] > ranks[o]))


def add_cell(group: Group, cell: Mapping[str, Any], review: Mapping[str, Any]) -> None:
    """One reviewed cell's pairs: its first verdicts against the judge's (read from the cell)."""
    judge = cell.get("judge") or {}
    group.cells += 1
    if judge.get("unparsed"):
        return  # no readable judge's verdict: nothing to agree with
    case = str(cell.get("case"))
    verdicts = judge.get("verdicts") or {}
    first = review["first"]
    for item_id in review["asked"]:
        judged = verdicts.get(item_id)
        mine = first["verdicts"].get(item_id)
        said = judged.get("verdict") if isinstance(judged, Mapping) else None
        # A contested settled item is the judge saying code's "right" is not (issue 21): it counts
        # as the judge's "wrong", so agreement shows how often the owner sides with the contest.
        said = "wrong" if said == "contested" else said
        if said in ITEM_CATEGORIES and mine in ITEM_CATEGORIES:
            group.items.add(said, mine, _question_of(item_id, case))
    owner_outcome = (review.get("first_grade") or {}).get("outcome")
    if cell.get("outcome") in QUESTION_OUTCOMES and owner_outcome in QUESTION_OUTCOMES:
        group.questions.add(cell["outcome"], owner_outcome, case)
    elif cell.get("outcome") in TASK_OUTCOMES and owner_outcome in TASK_OUTCOMES:
        group.tasks.add(cell["outcome"], owner_outcome, case)
    if judge.get("understandability") in UNDERSTANDABILITY and first.get("understandability") in UNDERSTANDABILITY:
        group.understandability.add(judge["understandability"], first["understandability"], case)


def collect(cells: Sequence[Mapping[str, Any]], queue: Sequence[Mapping[str, Any]],
            reviews: Mapping[int, Mapping[str, Any]]) -> dict[str, Group]:
    """The groups: ``sample`` (random sample), ``all`` (every reviewed cell), ``self`` (judge's own family).

    A review counts only when finished for the cell's current material.
    """
    by_n = {c["n"]: c for c in cells}
    groups = {"sample": Group(), "all": Group(), "self": Group()}
    for entry in queue:
        cell, review = by_n.get(entry["n"]), reviews.get(entry["n"])
        if cell is None or review is None or not review.get("final") or not review.get("grade"):
            continue
        if review.get("material_sha256") != cell.get("material_sha256"):
            continue
        add_cell(groups["all"], cell, review)
        if entry.get("sample"):
            add_cell(groups["sample"], cell, review)
        if "self-preference" in entry.get("reasons", []):
            add_cell(groups["self"], cell, review)
    return groups


def _kappa_text(value: float | None, interval: tuple[float, float] | None) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def _prevalence_text(m: Measure) -> str:
    if m.majority is None:
        return "majority verdict –"
    category, share = m.majority
    ac1 = "–" if m.ac1 is None else f"{m.ac1:.2f}"
    return f"majority verdict '{category}' {format_percent(share)} of verdicts, Gwet's AC1 {ac1}"


def _measure_block(m: Measure) -> str:
    if m.n == 0:
        return f"{m.name}: no pairs"
    lines = [f"{m.name}: n={m.n}, agreement {format_percent(m.agreement)}, "
             f"kappa {_kappa_text(m.kappa, m.interval)} (95% bootstrap by question)"
             + (f", linear-weighted kappa {_kappa_text(m.weighted, m.weighted_interval)}" if m.weighted is not None
                else "")
             + f"; {_prevalence_text(m)}"
             + f"; the judge kinder (lenient) {m.lenient}, harsher (strict) {m.strict}"]
    if m.paradox:
        lines.append(m.paradox)
    rows = [[f"owner: {c}", *(str(v) for v in row)] for c, row in zip(m.categories, m.table)]
    lines.append(render_table(["", *(f"judge: {c}" for c in m.categories)], rows, ["l"] + ["r"] * len(m.categories)))
    return "\n".join(lines)


def _group_block(title: str, group: Group, seed: int) -> str:
    parts = [f"{title}: {group.cells} reviewed cell(s)"]
    parts.append(_measure_block(measure("Items", group.items, ITEM_CATEGORIES, seed=seed)))
    parts.append(_measure_block(measure("Outcomes (questions)", group.questions, QUESTION_OUTCOMES, seed=seed)))
    if group.tasks.pairs:
        parts.append(_measure_block(measure("Outcomes (tasks)", group.tasks, TASK_OUTCOMES, seed=seed)))
    parts.append(_measure_block(measure("Understandability", group.understandability, UNDERSTANDABILITY,
                                        weighted=True, seed=seed)))
    return "\n\n".join(parts)


def sample_rule(group: Group) -> str:
    """The random sample's verdict on the cells the judge alone graded."""
    n, differing, _, _ = group.disagreements()
    if n == 0:
        return "No cell of the random sample is reviewed yet: nothing can be said of the cells the judge alone graded."
    bound = wilson(differing, n).high
    line = (f"Outcome disagreement in the random sample: {differing} of {n} ({format_percent(differing / n)}; "
            f"Wilson 95% upper bound {format_percent(bound, 1)}).")
    if bound > DISAGREEMENT_BAR:
        return f"{line} {REVIEW_ALL}"
    return f"{line} At most {format_percent(DISAGREEMENT_BAR)}: the judge's grades of the other cells stand."


def self_preference(groups: Mapping[str, Group], judge_family: str | None) -> str:
    if judge_family is None:
        return "Self-preference: the judge is no model's (offline rules); nothing to compare."
    own, sample = groups["self"], groups["sample"]
    rows = []
    for name, group in ((f"the judge's own family ({judge_family})", own), ("the random sample", sample)):
        n, differing, lenient, strict = group.disagreements()
        rows.append([name, str(group.cells), str(n), str(differing), str(lenient), str(strict)])
    return render_table(["cells", "reviewed", "outcomes compared", "differing", "judge kinder", "judge harsher"], rows,
                        ["l", "r", "r", "r", "r", "r"], title="Self-preference (counts)")


def render_agreement(grading_name: str, judge: str, groups: Mapping[str, Group], judge_family: str | None,
                     queued: int, seed: int = 0) -> str:
    head = (f"Agreement of the judge {judge} with the owner's first verdicts, grading {grading_name}\n"
            f"{groups['all'].cells} of {queued} queued cell(s) reviewed. Rows: the owner's first verdict; "
            "columns: the judge's.")
    blocks = [head, "== Random sample ==\n" + sample_rule(groups["sample"]),
              _group_block("Random sample", groups["sample"], seed),
              "== All reviewed cells ==\n" + _group_block("All reviewed cells", groups["all"], seed),
              "== Self-preference ==\n" + self_preference(groups, judge_family)]
    return "\n\n".join(blocks) + "\n"


def write_agreement(grading_dir: Path, grading: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> str | None:
    """Compute and write ``GRADING/agreement.txt``; returns its text (None before the queue is drawn)."""
    from pytest_assistant_eval.records import read_json, write_text_atomic
    from pytest_assistant_eval.review.queue import judge_family
    from pytest_assistant_eval.review.store import CELL_REVIEW_FORMAT, REVIEW_FORMAT

    index_path = grading_dir / "review.json"
    if not index_path.exists():
        return None
    index = read_json(index_path, REVIEW_FORMAT)
    reviews: dict[int, dict[str, Any]] = {}
    folder = grading_dir / "reviews"
    if folder.is_dir():
        for path in folder.glob("*.json"):
            if path.stem.isdigit():
                reviews[int(path.stem)] = read_json(path, CELL_REVIEW_FORMAT)
    groups = collect(cells, index["queue"], reviews)
    text = render_agreement(grading_dir.name, str((grading.get("judge") or {}).get("grader")), groups,
                            judge_family(grading), len(index["queue"]), seed=int(grading.get("seed") or 0))
    write_text_atomic(grading_dir / "agreement.txt", text)
    return text
