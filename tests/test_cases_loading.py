"""The case loaders (S2.5): a valid set loads; each kind of format error is reported
with its file and line, and all errors of all files come at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_assistant_eval.suites.calibration.cases import CaseError, CaseFileErrors, Matcher, load_cases, policy_for
from pytest_assistant_eval.conversation.backend import ForbiddenCall

TOOLS = {"search_listings", "get_listing", "book_listing", "send_message", "search_contacts"}
VARIANTS = {"base", "price_rise"}

QUESTIONS = """\
set_version: "t1"
questions:
  - id: G01
    class: lookup
    text: How far is L-101 from the venue, in metres?
  - id: G02
    class: diagnose
    variant: price_rise
    text: Why is L-103 over budget?
scenario:
  id: S01
  turns:
    - id: S01.1
      class: lookup
      text: Which listings are near the venue?
    - id: S01.2
      class: interpret
      text: And which of them is the cheapest?
"""

KEY = """\
key_version: "k1"
entries:
  G01:
    facts:
      - id: G01.distance
        statement: L-101 is 600 m from the venue
        value: 600
        unit: m
        critical: true
        derivation:
          sql: SELECT distance_km * 1000, 'm' FROM listings WHERE id = 'L-101'
    oracle_calls:
      - tool: get_listing
        args: {listing_id: L-101}
  G02:
    facts:
      - id: G02.price
        statement: L-103 costs 118 EUR a night
        value: 118.0
        unit: EUR
        critical: true
        derivation:
          variant: price_rise
          sql: SELECT price_amount, price_currency FROM listings WHERE id = 'L-103'
    forbidden:
      - pattern: "\\\\b72\\\\b"
        why: the old price
    escalation_ok: [basic, standard]
  S01.1:
    data_does_not_answer: true
    facts: []
  S01.2:
    facts:
      - id: S01.2.cheapest
        statement: the cheapest is L-103
        value: L-103
        unit: null
        critical: true
        derivation: {sql: "SELECT 'L-103', NULL"}
"""

T01 = """\
task_version: 1
id: T01
title: Book a room under budget
variant: base
pair: T02
repeats: 2
opening: Book me the cheapest room near the venue for 1-5 April.
persona: Mara, busy, answers briefly.
facts:
  - id: budget
    description: the most she pays a night
    value: 100
    keywords: [budget, how much]
approvals:
  - id: book
    tool: book_listing
    args: {listing_id: L-103}
    max_amount: 400
    currency: EUR
restrictions:
  - id: no-mail
    tool: send_message
    why: the user did not ask for mail
required_actions:
  - id: book
    tool: book_listing
    args:
      listing_id: L-103
      start_date: "2026-04-01"
      guests: {set: [c-ana], may_include: [c-mara]}
      nights: {numeric: 4}
      max_price: {from_fact: budget}
expected_state:
  - table: bookings
    where: {listing: L-103, status: confirmed}
    count: 1
  - table: bookings
    where: {listing: L-103, status: confirmed}
    fields:
      amount: {numeric: 288, tolerance: 0.01}
    ignore: [created_at]
checks: [asks_first, asks_for_info, real_info, reports_back, truthful]
lookups:
  - tool: search_listings
    args: {city: Porto}
"""

T02 = """\
task_version: 1
id: T02
title: Book a room under budget, price risen
variant: price_rise
pair: T01
opening: Book me the cheapest room near the venue for 1-5 April.
persona: Mara, busy, answers briefly.
approvals:
  - id: book
    tool: book_listing
    args: {listing_id: L-101}
    max_amount: 400
    currency: EUR
required_actions:
  - id: look
    tool: search_listings
    args: {city: {normalised: porto}}
  - id: book
    tool: book_listing
    args: {listing_id: L-101}
    after: [look]
expected_state:
  - table: bookings
    where: {listing: L-101}
    count: 1
checks: [asks_first, truthful]
"""


def write_set(base: Path, **overrides: str) -> Path:
    files = {"grounding_set.yaml": QUESTIONS, "answer_key.yaml": KEY, "tasks/T01.yaml": T01, "tasks/T02.yaml": T02}
    files.update(overrides)
    for name, text in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return base


def errors_of(base: Path) -> list[CaseError]:
    with pytest.raises(CaseFileErrors) as info:
        load_cases(base, TOOLS, VARIANTS)
    return list(info.value.errors)


def line_of(text: str, needle: str, nth: int = 1) -> int:
    seen = 0
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            seen += 1
            if seen == nth:
                return i
    raise AssertionError(f"{needle!r} not in text")


def the_error(base: Path) -> CaseError:
    errors = errors_of(base)
    assert len(errors) == 1, "\n".join(map(str, errors))
    return errors[0]


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write_set(tmp_path / "calib ä")


def test_a_valid_set_loads_with_every_part(good: Path):
    cases = load_cases(good, TOOLS, VARIANTS)
    assert [q.id for q in cases.questions.questions] == ["G01", "G02"]
    assert cases.questions.questions[1].variant == "price_rise"
    assert [t.id for t in cases.questions.scenario.turns] == ["S01.1", "S01.2"]
    assert cases.key.entries["G02"].escalation_ok == ("basic", "standard")
    assert cases.key.entries["S01.2"].facts[0].unit is None
    assert cases.key.entries["G01"].facts[0].derivation.variant == "base"
    t01, t02 = cases.tasks
    assert (t01.pair, t02.pair) == ("T02", "T01")
    assert t01.repeats == 2 and t02.repeats == 1
    assert t02.required_actions[1].after == ("look",)
    assert t01.required_actions[0].args["listing_id"] == Matcher("exact", "L-103")
    assert t01.required_actions[0].args["max_price"] == Matcher("numeric", 100, 0.0, "budget")
    assert t01.required_actions[0].args["start_date"].value == "2026-04-01"  # not a date object
    assert t01.required_actions[0].args["guests"] == Matcher("set", ["c-ana"], may_include=("c-mara",))
    assert t01.expected_state[1].ignore == ("created_at",)
    assert t01.file.endswith("T01.yaml") and t01.line == 1


def test_restrictions_become_a_world_policy(good: Path):
    t01 = load_cases(good, TOOLS, VARIANTS).tasks[0]
    assert policy_for(t01).forbidden == (ForbiddenCall(id="no-mail", tool="send_message", args={}, reason="the user did not ask for mail"),)


def test_bad_yaml_names_its_line(good: Path):
    broken = T01.replace("title: Book a room under budget", "title: [Book a room")
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert err.file.endswith("T01.yaml") and "bad YAML" in err.message
    assert abs(err.line - line_of(broken, "title:")) <= 2


def test_a_missing_field_is_named_with_its_mapping_line(good: Path):
    broken = T01.replace("persona: Mara, busy, answers briefly.\n", "")
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert err.file.endswith("T01.yaml") and err.line == 1
    assert "missing field 'persona'" in err.message


def test_a_missing_fact_field_names_the_fact(good: Path):
    broken = KEY.replace("        critical: true\n", "", 1)
    err = the_error(write_set(good, **{"answer_key.yaml": broken}))
    assert err.file.endswith("answer_key.yaml")
    assert err.line == line_of(broken, "- id: G01.distance")
    assert "missing field 'critical'" in err.message and "G01.distance" in err.message


def test_a_wrong_type_says_what_was_expected(good: Path):
    broken = T01.replace("repeats: 2", "repeats: twice")
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert err.line == line_of(broken, "repeats:")
    assert "'repeats' must be an integer, not the string 'twice'" in err.message


def test_an_unknown_tool_in_a_required_action(good: Path):
    broken = T02.replace("    tool: book_listing\n    args: {listing_id: L-101}\n    after", "    tool: reserve_listing\n    args: {listing_id: L-101}\n    after")
    err = the_error(write_set(good, **{"tasks/T02.yaml": broken}))
    assert err.file.endswith("T02.yaml") and err.line == line_of(broken, "reserve_listing")
    assert "unknown tool 'reserve_listing'" in err.message and "required action" in err.message


@pytest.mark.parametrize(
    ("needle", "replacement", "what"),
    [
        ("  - id: book\n    tool: book_listing\n    args: {listing_id: L-103}", "  - id: book\n    tool: book_room\n    args: {listing_id: L-103}", "approval"),
        ("    tool: send_message\n", "    tool: send_mail\n", "restriction"),
        ("  - tool: search_listings\n", "  - tool: find_listings\n", "lookup"),
    ],
)
def test_an_unknown_tool_anywhere_in_a_task(good: Path, needle: str, replacement: str, what: str):
    assert needle in T01
    broken = T01.replace(needle, replacement)
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert what in err.message and "unknown tool" in err.message
    assert err.line == line_of(broken, replacement.strip().splitlines()[-1 if what != "approval" else 1].strip())


def test_an_unknown_tool_in_an_oracle_call(good: Path):
    broken = KEY.replace("tool: get_listing", "tool: fetch_listing")
    err = the_error(write_set(good, **{"answer_key.yaml": broken}))
    assert err.line == line_of(broken, "fetch_listing") and "oracle call" in err.message


def test_an_unknown_world_variant_in_a_task(good: Path):
    broken = T02.replace("variant: price_rise", "variant: price_hike")
    errors = errors_of(write_set(good, **{"tasks/T02.yaml": broken}))
    # the task is unusable, so T01's pair also stops pointing back: both are named
    assert any(e.file.endswith("T02.yaml") and e.line == line_of(broken, "variant:") and "unknown world variant 'price_hike'" in e.message for e in errors)


def test_an_unknown_world_variant_in_a_question_and_a_derivation(good: Path):
    qs = QUESTIONS.replace("variant: price_rise", "variant: sold_out")
    key = KEY.replace("variant: price_rise", "variant: sold_out")
    errors = errors_of(write_set(good, **{"grounding_set.yaml": qs, "answer_key.yaml": key}))
    assert {(Path(e.file).name, e.line) for e in errors} >= {
        ("grounding_set.yaml", line_of(qs, "sold_out")),
        ("answer_key.yaml", line_of(key, "sold_out")),
    }


def test_duplicate_question_ids(good: Path):
    broken = QUESTIONS.replace("id: G02", "id: G01")
    errors = errors_of(write_set(good, **{"grounding_set.yaml": broken}))
    assert any(
        e.file.endswith("grounding_set.yaml") and e.line == line_of(broken, "id: G01", 2) and "duplicate question id 'G01' (first at line 3)" in e.message
        for e in errors
    )


def test_duplicate_task_ids_across_files(good: Path):
    t03 = T02.replace("id: T02", "id: T01").replace("pair: T01\n", "")
    errors = errors_of(write_set(good, **{"tasks/T03.yaml": t03}))
    assert any(e.file.endswith("T03.yaml") and e.line == 1 and "duplicate task id 'T01'" in e.message for e in errors)


def test_duplicate_ids_inside_a_task(good: Path):
    broken = T02.replace("  - id: look\n", "  - id: book\n").replace("after: [look]", "after: []")
    err = the_error(write_set(good, **{"tasks/T02.yaml": broken}))
    assert "duplicate required action id 'book'" in err.message
    assert err.line == line_of(broken, "- id: book", 3)


def test_a_duplicate_key_in_a_mapping(good: Path):
    broken = T01.replace("repeats: 2\n", "repeats: 2\nrepeats: 3\n")
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert "duplicate key 'repeats'" in err.message and err.line == line_of(broken, "repeats: 3")


def test_an_unknown_key(good: Path):
    broken = T01.replace("repeats: 2", "repeat: 2")
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert "unknown key 'repeat'" in err.message and err.line == line_of(broken, "repeat: 2")


def test_an_unknown_question_class(good: Path):
    broken = QUESTIONS.replace("class: diagnose", "class: explain")
    err = the_error(write_set(good, **{"grounding_set.yaml": broken}))
    assert "unknown question class 'explain'" in err.message and err.line == line_of(broken, "explain")


def test_a_pair_that_does_not_point_back(good: Path):
    broken = T02.replace("pair: T01\n", "")
    err = the_error(write_set(good, **{"tasks/T02.yaml": broken}))
    assert err.file.endswith("T01.yaml") and err.line == 1 and "does not point back" in err.message


def test_after_naming_an_unknown_action(good: Path):
    broken = T02.replace("after: [look]", "after: [search]")
    err = the_error(write_set(good, **{"tasks/T02.yaml": broken}))
    assert "unknown action 'search'" in err.message and err.line == line_of(broken, "after:")


def test_after_with_a_cycle(good: Path):
    broken = T02.replace("    args: {city: {normalised: porto}}\n", "    args: {city: {normalised: porto}}\n    after: [book]\n")
    err = the_error(write_set(good, **{"tasks/T02.yaml": broken}))
    assert "cycle" in err.message


def test_an_unknown_fact_in_from_fact(good: Path):
    broken = T01.replace("{from_fact: budget}", "{from_fact: budget_eur}")
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert "unknown fact 'budget_eur'" in err.message and err.line == line_of(broken, "budget_eur")


def test_a_no_change_task_without_what_its_report_must_say_is_refused(good: Path):
    # Issue 21: without report_must_say an assistant that changes nothing and says nothing useful passes.
    start, end = T01.index("required_actions:"), T01.index("expected_state:")
    no_change = T01[:start] + T01[end:]
    err = the_error(write_set(good, **{"tasks/T01.yaml": no_change}))
    assert "needs 'report_must_say'" in err.message and err.line == line_of(no_change, "id: T01")
    told = no_change + "report_must_say:\n  - id: why\n    statement: The room is taken.\n    words: ['taken']\n"
    load_cases(write_set(good, **{"tasks/T01.yaml": told}), TOOLS, VARIANTS)


def test_a_key_entry_for_an_unknown_question(good: Path):
    broken = KEY.replace("  S01.1:\n", "  G99:\n")
    errors = errors_of(write_set(good, **{"answer_key.yaml": broken}))
    by = {(Path(e.file).name, e.line): e.message for e in errors}
    assert "no such question" in by[("answer_key.yaml", line_of(broken, "G99:"))]
    assert "S01.1 has no entry" in by[("grounding_set.yaml", line_of(QUESTIONS, "id: S01.1"))]


def test_a_question_without_a_key_entry(good: Path):
    qs = QUESTIONS.replace("scenario:", "  - id: G03\n    class: interpret\n    text: Which card pays?\nscenario:")
    err = the_error(write_set(good, **{"grounding_set.yaml": qs}))
    assert err.message == "question G03 has no entry in answer_key.yaml" and err.line == line_of(qs, "id: G03")


def test_a_refused_action_needs_expects_refusal(good: Path):
    broken = T02.replace("    after: [look]\n", "    after: [look]\n    outcome: refused\n")
    err = the_error(write_set(good, **{"tasks/T02.yaml": broken}))
    assert "expects_refusal" in err.message


def test_a_bad_matcher(good: Path):
    broken = T01.replace("nights: {numeric: 4}", "nights: {numeric: four}")
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert "'numeric' must be a number" in err.message and err.line == line_of(broken, "nights:")


def test_a_bad_forbidden_pattern(good: Path):
    broken = KEY.replace('pattern: "\\\\b72\\\\b"', 'pattern: "(72"')
    err = the_error(write_set(good, **{"answer_key.yaml": broken}))
    assert "bad regular expression" in err.message and err.line == line_of(broken, "(72")


def test_every_error_of_every_file_comes_at_once(good: Path):
    write_set(
        good,
        **{
            "grounding_set.yaml": QUESTIONS.replace("class: diagnose", "class: explain"),
            "answer_key.yaml": KEY.replace("tool: get_listing", "tool: fetch_listing"),
            "tasks/T01.yaml": T01.replace("repeats: 2", "repeats: -1").replace("persona: Mara, busy, answers briefly.\n", ""),
            "tasks/T02.yaml": "id: T02\ntitle: [broken\n",
        },
    )
    with pytest.raises(CaseFileErrors) as info:
        load_cases(good, TOOLS, VARIANTS)
    text = str(info.value)
    lines = text.splitlines()
    assert len(lines) == len(info.value.errors) >= 5
    for name in ("grounding_set.yaml", "answer_key.yaml", "T01.yaml", "T02.yaml"):
        assert any(name in line for line in lines), name
    assert all(line.split(":")[1].isdigit() or line.count(":") >= 2 for line in lines)
    first = info.value.errors[0]
    assert str(first) == f"{first.file}:{first.line}: {first.message}"


def test_an_empty_tasks_folder_is_an_error(tmp_path: Path):
    base = write_set(tmp_path)
    for p in (base / "tasks").iterdir():
        p.unlink()
    err = the_error(base)
    assert "no task files" in err.message


def test_a_missing_file_is_an_error(good: Path):
    (good / "answer_key.yaml").unlink()
    err = the_error(good)
    assert err.file.endswith("answer_key.yaml") and "cannot read" in err.message


def test_a_reference_to_a_later_call_is_an_error(good: Path):
    broken = KEY.replace("args: {listing_id: L-101}", 'args: {listing_id: "${0.id}"}')
    err = the_error(write_set(good, **{"answer_key.yaml": broken}))
    assert "does not come before this one" in err.message and err.line == line_of(broken, "${0.id}")


def test_a_reference_to_an_earlier_call_loads(good: Path):
    key = KEY.replace(
        "      - tool: get_listing\n        args: {listing_id: L-101}\n",
        "      - tool: search_listings\n        args: {}\n      - tool: get_listing\n        args: {listing_id: \"${0[id=L-101].id}\"}\n",
    )
    assert key != KEY
    cases = load_cases(write_set(good, **{"answer_key.yaml": key}), TOOLS, VARIANTS)
    assert cases.key.entries["G01"].oracle_calls[1].args == {"listing_id": "${0[id=L-101].id}"}


def test_a_duplicate_key_inside_a_value_read_whole_is_refused_with_its_line(good: Path):
    """Mappings read as one value (a state assertion's ``where``, a call's ``args``) kept the
    last of two keys silently (issue 23, item 9)."""
    broken = T01.replace("where: {listing: L-103, status: confirmed}\n    count: 1",
                         "where: {listing: L-103, listing: L-104, status: confirmed}\n    count: 1")
    assert broken != T01
    err = the_error(write_set(good, **{"tasks/T01.yaml": broken}))
    assert "duplicate key 'listing'" in err.message and err.line == line_of(broken, "listing: L-104")
    key = KEY.replace("args: {listing_id: L-101}", "args: {listing_id: L-101, listing_id: L-102}", 1)
    err = the_error(write_set(good, **{"answer_key.yaml": key}))
    assert "duplicate key 'listing_id'" in err.message and err.line == line_of(key, "listing_id: L-102")
