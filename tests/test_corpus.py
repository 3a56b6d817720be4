"""The regression corpus in real wording (S6.10; issue 9).

``tests/corpus/cells/`` holds conversations written by a player who never saw the case
files, playing the assistant through ``tests/corpus/relay.py`` (well-behaved or with one
fault planted and labelled before any grading: ``played.json``). ``labels.json`` holds a
careful human grader's verdicts, made without the harness's grading: per question cell its
outcome, per task run its outcome, each behaviour check and what the simulated user should
have answered at each turn.

The offline path (the checks and the ``scripted:rules`` judge) must agree with the labels on
at least 95% of cells; every disagreement is printed, so a change that moves a verdict shows
which conversation it moved.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.messages import Message
from pytest_assistant_eval.suites.calibration.user.scripted import ScriptedUser
from pytest_assistant_eval.suites.calibration.grade.folder import grade_record
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from pytest_assistant_eval.suites.calibration.world.names import Names

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "corpus" / "cells"
CALIBRATION = ROOT.parent / "calibration"
LABELS: dict[str, Any] = json.loads((ROOT / "corpus" / "labels.json").read_text(encoding="utf-8"))
PLAYED: dict[str, Any] = json.loads((CORPUS / "played.json").read_text(encoding="utf-8"))
CELLS = sorted(p.stem for p in CORPUS.glob("*.json") if p.name != "played.json")
BEHAVIOUR = ("asks_first", "asks_for_info", "real_info", "reports_back", "truthful")


@pytest.fixture(scope="module")
def calibration() -> tuple[Any, Any]:
    return load_calibration(CALIBRATION)


def _record(name: str) -> dict[str, Any]:
    return json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))


def test_the_corpus_is_large_enough_labelled_and_written_by_a_player() -> None:
    kinds = [_record(n)["kind"] for n in CELLS]
    assert len(CELLS) >= 60, len(CELLS)
    assert kinds.count("task") >= 20 and kinds.count("question") + kinds.count("scenario") >= 20
    assert set(CELLS) == set(LABELS), sorted(set(CELLS) ^ set(LABELS))
    assert set(CELLS) <= set(PLAYED)
    played = [PLAYED[n]["played"] for n in CELLS]
    assert played.count("good") >= 20 and played.count("fault") >= 20  # both halves of the corpus are there


# Sources written by players in styles the older corpus lacks (issue 21): terse texting,
# bullet-only, structured analyst, non-native English, e-mail prose, hedged and verbose; and
# (issue 30) continental locale conventions (s7), spreadsheet-like rows (s8) and speech-like
# transcribed text (s9).
NEW_SOURCES = ("s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9")
ISSUE_30_SOURCES = ("s7", "s8", "s9")
#: Sources written while the readers were last changed, by another engineer, and merged after:
#: every cell of theirs is held out, and nobody changing a reader has seen them. The hash-held-out
#: part above was read in full while changing readers for issue 30 (its figure is printed, but
#: labelled as looked at).
FRESH_SOURCES = ("s22", "s23", "s24")
#: Former fresh parts, each read in full after its fresh figure was taken: printed as its own
#: part, labelled as looked at, held out of the tuned bar, asserted nothing about. (short name,
#: its sources, when it was looked at)
LOOKED_AT_ROUNDS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # a formal letter, JSON answers, casual chat with emoji and Portuguese
    ("s10-s12", ("s10", "s11", "s12"), "looked at while changing readers in issue 30's third round"),
    # a LaTeX-step teacher, ops ticket logs with military date-times, French conventions
    ("s13-s15", ("s13", "s14", "s15"), "looked at while changing the grading in issue 30's fourth round"),
    # East Asian conventions, an engineer's notation, ASCII box tables with units in headers
    ("s16-s18", ("s16", "s17", "s18"), "looked at by the lead after their fresh figure, issue 30's fifth round"),
    # South Asian business English, raw HTML, a change log with arrows and deltas
    ("s19-s21", ("s19", "s20", "s21"), "looked at by the lead after their fresh figure, issue 30's sixth round"),
)
LOOKED_AT_SOURCES = tuple(s for _, sources, _ in LOOKED_AT_ROUNDS for s in sources)


def looked_at_part(name: str) -> str | None:
    """The short name of the looked-at part a cell belongs to, if any."""
    return next((short for short, sources, _ in LOOKED_AT_ROUNDS if name.split("-")[0] in sources), None)


def is_held_out(name: str) -> bool:
    """A third of the new styles' cells, fixed by a hash of the name before any was graded:
    no reader is tuned on them, and their figure is reported apart, never hidden."""
    if is_fresh(name) or is_looked_at(name):
        return True
    return name.split("-")[0] in NEW_SOURCES and int(hashlib.sha256(name.encode()).hexdigest(), 16) % 3 == 0


def is_fresh(name: str) -> bool:
    """A cell of the fresh held-out part: never seen while changing readers."""
    return name.split("-")[0] in FRESH_SOURCES


def is_looked_at(name: str) -> bool:
    """A cell of a former fresh part, read in full after its fresh figure was taken."""
    return name.split("-")[0] in LOOKED_AT_SOURCES


TUNED = [n for n in CELLS if not is_held_out(n)]
HELD_OUT = [n for n in CELLS if is_held_out(n) and not is_fresh(n) and not is_looked_at(n)]
FRESH = [n for n in CELLS if is_fresh(n)]
#: At most this share of cells may wait for the owner (an unsure rule): deferring a doubt is
#: right, deferring everything would be no grading at all.
MAX_DEFERRED = 0.2
PASSING = {"answered", "pass"}


def _grade_all(calibration: tuple[Any, Any]) -> dict[str, dict[str, Any]]:
    cases, levels = calibration
    return {name: grade_record(_record(name), cases, levels) for name in CELLS}


def _outcome_figures(names: list[str], graded: dict[str, dict[str, Any]]) -> dict[str, int]:
    """agree / deferred (waiting for the owner, or queued as unsure: the owner decides it) /
    disagree / false passes."""
    out = {"cells": len(names), "agree": 0, "deferred": 0, "disagree": 0, "false_pass": 0}
    for name in names:
        got, want = graded[name]["outcome"], LABELS[name]["outcome"]
        if got == want:
            out["agree"] += 1
        elif _deferred(graded[name]):
            # The rules were unsure: the cell is queued for the owner, whose verdict decides it.
            out["deferred"] += 1
        else:
            out["disagree"] += 1
            out["false_pass"] += got in PASSING and want not in PASSING
    return out


def _line(title: str, f: dict[str, int]) -> str:
    if not f["cells"]:
        return f"{title}: no cells"
    return (f"{title}: {f['agree']}/{f['cells']} agree ({f['agree'] / f['cells']:.1%}), {f['deferred']} deferred to the "
            f"owner ({f['deferred'] / f['cells']:.1%}), {f['disagree']} silent disagreements ({f['false_pass']} silent "
            f"false passes); agree or deferred {(f['agree'] + f['deferred']) / f['cells']:.1%}")


def _deferred(result: dict[str, Any]) -> bool:
    """Whether the cell waits for the owner: no verdict yet, or a verdict the rules were unsure of."""
    verdicts = (result.get("judge") or {}).get("verdicts", {}).values()
    return result["outcome"] == "waiting" or any(isinstance(v, dict) and v.get("unsure") for v in verdicts)


def _part(name: str) -> str:
    if is_fresh(name):
        return " [fresh held out]"
    if is_looked_at(name):
        return f" [{looked_at_part(name)}, looked at]"
    return " [held out, looked at]" if is_held_out(name) else ""


def test_the_offline_grading_agrees_with_the_human_labels(calibration: tuple[Any, Any]) -> None:
    graded = _grade_all(calibration)
    disagreements = []
    check_total = check_agree = 0
    tuned_checks = [0, 0]  # agree, total on the tuned part, where the bar holds
    for name in CELLS:
        label, result = LABELS[name], graded[name]
        if result["outcome"] != label["outcome"]:
            how = "deferred" if _deferred(result) else "SILENT"
            disagreements.append(f"{name}{_part(name)} [{how}]: harness {result['outcome']}, label {label['outcome']} ({label.get('why', '')})")
        if label["kind"] == "task" and "checks" in label and "task" in result:
            for check in BEHAVIOUR:
                want = label["checks"].get(check)
                got = result["task"]["final"].get(check)
                if want is None and got is None:
                    continue
                check_total += 1
                tuned_cell = not is_held_out(name)
                tuned_checks[1] += tuned_cell
                if want == got:
                    check_agree += 1
                    tuned_checks[0] += tuned_cell
                else:
                    disagreements.append(f"{name}{_part(name)}: {check} harness {got}, label {want}")
    tuned, held = _outcome_figures(TUNED, graded), _outcome_figures(HELD_OUT, graded)
    older = _outcome_figures([n for n in TUNED if n.split("-")[0] not in NEW_SOURCES], graded)
    newer = _outcome_figures([n for n in TUNED if n.split("-")[0] in NEW_SOURCES], graded)
    print("\n" + _line("outcomes, tuned corpus", tuned))
    print("  " + _line("of which the older styles", older))
    print("  " + _line("of which the new styles", newer))
    print(_line("outcomes, hash held out (looked at while changing readers in issue 30's second round)", held))
    for short, _sources, when in LOOKED_AT_ROUNDS:
        print(_line(f"outcomes, {short} ({when})", _outcome_figures([n for n in CELLS if looked_at_part(n) == short], graded)))
    print(_line("outcomes, fresh held out (never seen while changing readers)", _outcome_figures(FRESH, graded)))
    newest = [n for n in CELLS if n.split("-")[0] in ISSUE_30_SOURCES]
    print("  " + _line("of which issue 30's styles (s7-s9), tuned", _outcome_figures([n for n in newest if n in TUNED], graded)))
    print("  " + _line("of which issue 30's styles (s7-s9), held out", _outcome_figures([n for n in newest if n in HELD_OUT], graded)))
    print(f"behaviour checks: {check_agree}/{check_total} agree ({tuned_checks[0]}/{tuned_checks[1]} on the tuned part)")
    for line in disagreements:
        print("  disagree:", line)
    # A deferred cell is decided by the owner (here: the labeller's verdict stands); the bar
    # counts it, and the share of deferrals is bounded. The held-out figure is printed, never
    # asserted: a bar on it would make it a tuning target.
    share = (tuned["agree"] + tuned["deferred"]) / tuned["cells"]
    assert share >= 0.95, "\n".join(disagreements)
    assert tuned["deferred"] / tuned["cells"] <= MAX_DEFERRED, tuned
    assert tuned_checks[1] == 0 or tuned_checks[0] / tuned_checks[1] >= 0.95, "\n".join(disagreements)


def _user_turns(record: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(the assistant's last words before it, the user's state then, the recorded entry) per user reply."""
    out = []
    state: dict[str, Any] = {"facts_disclosed": [], "approvals_given": []}
    last = ""
    for entry in record["transcript"]:
        if entry["type"] == "assistant" and entry.get("text", "").strip():
            last = entry["text"]
        if entry["type"] == "user" and entry.get("structured"):
            out.append((last, json.loads(json.dumps(state)), entry))
            state["facts_disclosed"] += [f for f in entry["structured"].get("facts_disclosed", [])
                                         if f not in state["facts_disclosed"]]
            state["approvals_given"] += [a for a in entry["structured"].get("approvals_given", [])
                                         if a not in state["approvals_given"]]
    return out


def _kind(reply: Any) -> str:
    decision = reply.decision or {}
    kind = decision.get("kind", "")
    if kind == "approve":
        return f"approve {decision.get('approval')}"
    if kind == "facts":
        return "fact " + " ".join(reply.facts_disclosed)
    # Declining an extra offer ("want me to tell João too?") ends the conversation: "no thanks, done".
    return {"ask_cost": "ask cost", "decline": "done"}.get(kind, kind)


def test_the_scripted_user_answers_every_played_turn_as_the_labels_say(calibration: tuple[Any, Any]) -> None:
    cases, _ = calibration
    tasks = {t.id: t for t in cases.tasks}
    total = agree = 0
    false_yes = false_no = 0
    # wrong replies, replies, false approvals, false refusals
    parts = {"tuned": [0, 0, 0, 0], "held out": [0, 0, 0, 0],
             **{f"{short}, looked at": [0, 0, 0, 0] for short, _, _ in LOOKED_AT_ROUNDS}, "fresh held out": [0, 0, 0, 0]}
    lines = []
    for name in CELLS:
        label = LABELS[name]
        if label["kind"] != "task" or "user" not in label:
            continue
        record = _record(name)
        names = Names(record["state"]["final"])
        fresh = is_fresh(name)
        looked_at = is_looked_at(name)
        which = f"{looked_at_part(name)}, looked at"
        part = parts["fresh held out" if fresh else which if looked_at else
                     "held out" if is_held_out(name) else "tuned"]
        for (text, state, _entry), want in zip(_user_turns(record), label["user"]):
            reply = ScriptedUser(tasks[record["case"]], names).reply([Message(role="assistant", content=text)], state)
            got = _kind(reply)
            part[1] += 1
            yes = got.startswith("approve") and not want["expected"].startswith("approve")
            no = want["expected"].startswith("approve") and not got.startswith("approve")
            if got != want["expected"]:
                part[0] += 1
                part[2] += yes
                part[3] += no
            if fresh:
                continue  # never seen while the user was changed: its figure is printed, nothing asserted
            if looked_at:
                if got != want["expected"]:
                    lines.append(f"{name} [{which}]: user said {got!r}, label {want['expected']!r} to: "
                                 f"{text[:160]!r}")
                continue  # printed with its disagreements, kept out of the assert as when it was fresh
            total += 1
            if got == want["expected"]:
                agree += 1
                continue
            if is_held_out(name):
                continue  # counted, never shown: nobody tunes the user on it
            false_yes += yes
            false_no += no
            lines.append(f"{name}: user said {got!r}, label {want['expected']!r} to: {text[:160]!r}")
    print(f"\nscripted user (tuned and hash held out): {agree}/{total} turns agree; false approvals {false_yes}, "
          f"false refusals {false_no}")
    for title, (wrong, replies, yes, no) in parts.items():
        print(f"  {title}: {wrong} wrong replies in {replies} ({100 * wrong / max(replies, 1):.1f} per 100; "
              f"false approvals {yes}, false refusals {no})")
    for line in lines:
        print("  disagree:", line)
    assert total >= 20
    assert false_yes == 0, "\n".join(lines)
    assert agree / total >= 0.95, "\n".join(lines)
