"""The strict reply parser (S6.6): exactly the asked JSON, two tolerated slips, problems named field by field."""

from __future__ import annotations

import json

import pytest

from pytest_assistant_eval.judging.reply import parse_reply
from pytest_assistant_eval.judging.request import JudgeRequest

REQUEST = JudgeRequest(n=1, system="s", user="u", open_items={"a": ("right", "missing", "wrong"), "b": ("right", "wrong")},
                       settled=("c",), key_sha256="k", request_sha256="r")


def reply(**changes) -> str:
    data = {"items": {"a": {"verdict": "missing", "confidence": 0.5, "reason": "not stated"},
                      "b": {"verdict": "wrong", "confidence": 1, "reason": "invented"}}, "understandability": 2}
    data.update(changes)
    return json.dumps(data)


def test_a_valid_reply_gives_every_verdict():
    parsed = parse_reply(reply(), REQUEST)
    assert parsed.ok and parsed.verdicts["a"]["verdict"] == "missing" and parsed.understandability == 2
    assert parsed.relaxed == []


def test_a_long_reason_is_cut_and_recorded():
    data = json.loads(reply())
    data["items"]["a"]["reason"] = "y" * 201
    parsed = parse_reply(json.dumps(data), REQUEST)
    assert parsed.ok and len(parsed.verdicts["a"]["reason"]) == 200 and "cut to 200" in parsed.relaxed[0]


def test_a_verdict_for_a_settled_item_is_dropped_and_recorded():
    data = json.loads(reply())
    data["items"]["c"] = {"verdict": "right", "confidence": 1, "reason": "x"}
    parsed = parse_reply(json.dumps(data), REQUEST)
    assert parsed.ok and "c" not in parsed.verdicts and "settled" in parsed.relaxed[0]


@pytest.mark.parametrize("text, problem", [
    ("```json\n" + reply() + "\n```", "not one JSON object"),
    ("Here it is: " + reply(), "not one JSON object"),
    ('{"items": {"a": {"verdict": "right", "confidence": 1, "reason": "x"}, "a": {}}, "understandability": 1}',
     "'a' is given twice"),
    (reply(understandability=0), "understandability: 0 is not 1, 2 or 3"),
    (reply(understandability=True), "understandability: True"),
    (reply(extra=1), "unknown field 'extra'"),
    (reply(items=[]), "items: must be an object"),
])
def test_an_invalid_reply_names_its_problem(text, problem):
    parsed = parse_reply(text, REQUEST)
    assert not parsed.ok and any(problem in p for p in parsed.problems) and parsed.verdicts == {}


@pytest.mark.parametrize("field, value, problem", [
    ("verdict", "missing", "items.b.verdict: 'missing' is not one of right, wrong"),
    ("confidence", -0.1, "items.b.confidence: -0.1"),
    ("confidence", "high", "items.b.confidence: 'high'"),
    ("reason", "", "items.b.reason: must be a non-empty text"),
    ("note", "x", "items.b.note: unknown field"),
])
def test_each_field_of_an_item_is_checked(field, value, problem):
    data = json.loads(reply())
    data["items"]["b"][field] = value
    parsed = parse_reply(json.dumps(data), REQUEST)
    assert any(problem in p for p in parsed.problems)


def test_every_problem_is_named_not_only_the_first():
    data = json.loads(reply())
    del data["items"]["a"]
    data["items"]["b"]["verdict"] = "maybe"
    data["items"]["z"] = {}
    problems = parse_reply(json.dumps(data), REQUEST).problems
    assert any("items.a: missing" in p for p in problems) and any("items.b.verdict" in p for p in problems)
    assert any("items.z: not an item to grade" in p for p in problems)
