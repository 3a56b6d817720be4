"""The question set (``calibration/grounding_set.yaml``, S2.1–S2.2): loading and validation."""

from __future__ import annotations

from yaml.nodes import Node

from .model import CLASSES, Question, QuestionSet, Scenario
from pytest_assistant_eval.yaml_source import Fields, Source

__all__ = ["parse_question_set"]

_QUESTION_KEYS = {"id", "class", "text", "variant"}


def _question(src: Source, node: Node, what: str, variants: set[str], default_variant: str = "base") -> Question | None:
    f = Fields(src, node, what, _QUESTION_KEYS)
    qid = f.get("id", "str")
    label = f"question {qid}" if qid else what
    f.what = label
    text = f.get("text", "str")
    cls = f.get("class", "str")
    variant = f.get("variant", "str", required=False, default=default_variant)
    ok = f.ok and qid is not None and text is not None and cls is not None
    if cls is not None and cls not in CLASSES:
        src.error(f.node_of("class"), f"{label}: unknown question class {cls!r} (one of: {', '.join(CLASSES)})")
        ok = False
    if variant not in variants:
        src.error(f.node_of("variant") or node, f"{label}: unknown world variant {variant!r} (known: {', '.join(sorted(variants))})")
        ok = False
    if not ok:
        if isinstance(qid, str):
            src.broken_ids.add(qid)
        else:
            src.broken_without_id = True
        return None
    return Question(id=qid, text=text.strip(), cls=cls, variant=variant, line=f.line)


def parse_question_set(src: Source, variants: set[str]) -> QuestionSet | None:
    """The question set of ``src``; errors go to ``src.errors`` (None when unusable)."""
    if src.root is None:
        return None
    top = Fields(src, src.root, "the question set", {"set_version", "questions", "scenario"})
    if not top.ok:
        return None
    version = top.get("set_version", "scalar")
    questions: list[Question] = []
    seen: dict[str, int] = {}

    def note(q: Question, node: Node) -> None:
        if q.id in seen:
            src.error(node, f"duplicate question id {q.id!r} (first at line {seen[q.id]})")
        else:
            seen[q.id] = q.line

    seq = top.get("questions", "list")
    if seq is not None:
        if not seq.value:
            src.error(seq, "'questions' is empty")
        for i, item in enumerate(seq.value, 1):
            q = _question(src, item, f"question #{i}", variants)
            if q is not None:
                note(q, item)
                questions.append(q)

    scenario: Scenario | None = None
    snode = top.get("scenario", "map")
    if snode is not None:
        sf = Fields(src, snode, "the scenario", {"id", "variant", "turns"})
        sid = sf.get("id", "str")
        svariant = sf.get("variant", "str", required=False, default="base")
        if svariant not in variants:
            src.error(sf.node_of("variant"), f"the scenario: unknown world variant {svariant!r} (known: {', '.join(sorted(variants))})")
            svariant = "base"
        turns: list[Question] = []
        tseq = sf.get("turns", "list")
        if tseq is not None:
            if not tseq.value:
                src.error(tseq, "the scenario has no turns")
            for i, item in enumerate(tseq.value, 1):
                q = _question(src, item, f"scenario turn #{i}", variants, svariant)
                if q is None:
                    continue
                if sid and not q.id.startswith(f"{sid}."):
                    src.error(item, f"scenario turn {q.id}: its id must start with {sid + '.'!r}")
                note(q, item)
                turns.append(q)
        if sid is not None:
            scenario = Scenario(id=sid, turns=tuple(turns))
            if sid in seen:
                src.error(snode, f"duplicate id {sid!r}: the scenario has a question's id")
    if version is None or scenario is None:
        return None
    return QuestionSet(set_version=str(version), questions=tuple(questions), scenario=scenario)
