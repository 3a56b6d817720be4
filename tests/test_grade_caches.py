"""The caches and the compact blind order grade-ai was made faster and flatter with (issue 32)
give exactly what they replaced, and stay bounded.

Each piece is checked against the code it stands for: ``sorted_json`` against ``json.dumps(...,
sort_keys=True, ensure_ascii=False)``; a case's key material, a tool result's numbers and a
text's mentions against their uncached reading; ``BlindOrder`` against the dicts grade-ai used
to sort and shuffle, and ``write_index`` against ``write_json_atomic``'s bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.paths import default_calibration_dir
from pytest_assistant_eval.records import write_json_atomic
from pytest_assistant_eval.suites.calibration.checks import checked, tasks
from pytest_assistant_eval.suites.calibration.grade.order import BlindOrder, cell_numbers, write_index
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from pytest_assistant_eval.suites.calibration.readers.numbers import find_quantities
from pytest_assistant_eval.suites.calibration.readers.sources import numbers_in_json
from pytest_assistant_eval.suites.calibration.world.names import Names

_SCALARS = (st.none() | st.booleans() | st.floats(allow_nan=True, allow_infinity=True)
            | st.integers(min_value=-(2**70), max_value=2**70) | st.text(max_size=30))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=6)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=6), max_leaves=60)


def _reference(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, depth=st.integers(0, 3))
def test_sorted_json_is_json_dumps_sorted_for_any_value_at_any_depth(value, depth):
    assert checked.sorted_json(value, depth) == _reference(value)
    assert checked.sorted_json(value, depth) == _reference(value)  # again: from the memo where it was kept


def test_sorted_json_tells_apart_values_json_writes_alike_and_types_it_writes_apart():
    big = "x" * 2000  # large enough to be kept
    for a, b in [({"v": [float("nan"), big]}, {"v": [None, big]}), ({"v": [1, big]}, {"v": [True, big]}),
                 ({"v": [1, big]}, {"v": [1.0, big]}), ({"v": [0.0, big]}, {"v": [-0.0, big]}),
                 ({"a": 1, "b": big}, {"b": big, "a": 1})]:
        for value in (a, b, a, b):
            assert checked.sorted_json({"record": {"state": value}}) == _reference({"record": {"state": value}})


def test_sorted_json_keeps_at_most_its_bound_of_encoded_values():
    for i in range(checked._ENCODED_MAX * 3):
        value = {"record": {"state": [i, "y" * 2000]}}
        assert checked.sorted_json(value) == _reference(value)
    assert len(checked._ENCODED) <= checked._ENCODED_MAX



@settings(max_examples=200, deadline=None)
@given(small=_VALUES, big=_VALUES, i=st.integers(0, 3), quoted=st.booleans())
def test_a_string_that_reads_as_a_stand_in_changes_no_text_and_no_hash(small, big, i, quoted):
    """Kept values stand in as strings while the rest is encoded; a record's own string of that
    form (or holding it, quotes and all) must leave the text json's and the hash json's."""
    import hashlib

    stand_in = checked._STAND_IN.format(i)
    lure = json.dumps(stand_in, ensure_ascii=False) if quoted else stand_in
    value = {"record": {"a": small, "b": [big, "x" * 2000], "c": lure, "d": [lure, "y" * 2000], "e": {"f": lure}}}
    for _ in range(2):
        assert checked.sorted_json(value) == _reference(value)
        assert checked._sha(value) == hashlib.sha256(_reference(value).encode()).hexdigest()


def test_a_cases_key_material_is_read_once_and_is_what_it_reads():
    cases, _ = load_calibration(default_calibration_dir())
    checked._CASE_MATERIAL.clear()
    records = ([{"kind": "task", "case": t.id} for t in cases.tasks[:3]]
               + [{"kind": "question", "case": q} for q in list(cases.key.entries)[:3]]
               + [{"kind": "scenario", "case": "S01"}, {"kind": "task", "case": "no-such-task"}])
    for record in records:
        first = checked._case_material(cases, record)
        assert first == checked._case_material_of(cases, record["kind"], record["case"])
        assert checked._case_material(cases, record) is first  # kept
    assert len(checked._CASE_MATERIAL) == len(records)
    for i in range(5000):  # bounded whatever asks for it
        checked._case_material(cases, {"kind": "task", "case": f"t{i}"})
    assert len(checked._CASE_MATERIAL) <= 4096


@settings(max_examples=200, deadline=None)
@given(value=st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False)
                          | st.sampled_from(["95.00 EUR", "1.2 km", "card-amex-7710", "2026-03-05", "abc"]),
                          lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.sampled_from(["amount", "currency", "distance_km", "id", "x"]),
                                            inner, max_size=4), max_leaves=15),
       raw=st.booleans())
def test_a_tool_results_numbers_are_read_once_and_are_what_they_read(value, raw):
    text = json.dumps(value)[:-1] if raw and json.dumps(value)[-1:] in "]}" else json.dumps(value)  # some no JSON
    try:
        expected = [v for v, _ in numbers_in_json(json.loads(text))]
    except (json.JSONDecodeError, ValueError):
        expected = [q.value for q in find_quantities(text)]
    assert list(tasks._tool_numbers(text)) == expected
    assert list(tasks._tool_numbers(text)) == expected
    assert tasks._tool_numbers.cache_info().maxsize == 4096


_STATE = {"contacts": [{"id": "c-helena", "name": "Helena Sousa", "email": "helena@example.pt"},
                       {"id": "c-joao", "name": "João Pereira"}],
          "cards": [{"id": "card-visa-4821", "last4": "4821", "label": "Main Visa (business)", "brand": "visa"}],
          "listings": [{"id": "L-103", "title": "Miragaia river room"}], "events": []}


@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.sampled_from(["Helena", "joao pereira", "the Visa ending 4821", "Miragaia", "L-103", " and ",
                                      ", ", "card-visa-4821", "x", "Sousa."]), max_size=8).map("".join))
def test_a_texts_mentions_are_read_once_and_are_what_they_read(text):
    names = Names(_STATE)
    expected = names._read_mentions(text)
    got = names.mentions(text)
    assert got == expected
    got.append("changed by a caller")  # a fresh list each time: the kept reading is not the caller's
    assert names.mentions(text) == expected


def test_mentions_keep_a_bounded_number_of_texts():
    names = Names(_STATE)
    for i in range(3000):
        names.mentions(f"Helena {i}")
    assert Names._mentions.cache_info().currsize <= Names._mentions.cache_info().maxsize == 2048


def _old_order(folders: list[str], names: list[list[str]], seed: int) -> list[dict[str, object]]:
    """The blind order as grade-ai built it before (dicts sorted by folder and cell, shuffled)."""
    cells = [{"folder": f, "cell": n} for f, held in zip(folders, names) for n in held]
    cells.sort(key=lambda c: (c["folder"], c["cell"]))
    random.Random(seed).shuffle(cells)
    return [{"n": n, **c} for n, c in enumerate(cells, start=1)]


_NAME = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(folders=st.lists(st.sampled_from(["b-model", "a-model", "ünï", "z", "a-model"]), min_size=1, max_size=4),
       data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_the_compact_blind_order_is_the_order_of_dicts_it_replaced(folders, data, seed):
    names = [sorted(set(data.draw(st.lists(_NAME, max_size=12)))) for _ in folders]
    order = BlindOrder(folders, names, seed)
    old = _old_order(folders, names, seed)
    assert list(order) == old and len(order) == len(old)
    assert [order[k] for k in range(-len(old), 0)] == old and order[1:3] == old[1:3]
    if len(set(folders)) == len(folders):  # what the pass reads: each folder's names' numbers
        by_ref = {(o["folder"], o["cell"]): o["n"] for o in old}
        want = [[by_ref[(f, n)] for n in held] for f, held in zip(folders, names)]
        assert [list(a) for a in cell_numbers(order, folders, names)] == want
        assert [list(a) for a in cell_numbers(old, folders, names)] == want  # grading.json's list, read again


def test_a_name_not_in_the_order_gives_no_numbers():
    order = _old_order(["m"], [["a", "b"]], 1)
    assert cell_numbers(order, ["m"], [["a", "b", "c"]]) is None


@settings(max_examples=60, deadline=None)
@given(folders=st.lists(st.sampled_from(["m-ä", "n\"q", "o"]), min_size=1, max_size=3, unique=True), data=st.data(),
       seed=st.integers(0, 99), canary=st.booleans())
def test_grading_json_written_in_pieces_is_the_bytes_write_json_atomic_writes(tmp_path_factory, folders, data, seed,
                                                                            canary):
    names = [sorted(set(data.draw(st.lists(_NAME, max_size=10)))) for _ in folders]
    tmp = tmp_path_factory.mktemp("index")
    base = {"format": "assistant-eval.grading/1", "folders": [{"name": f, "identity": {"order": []}} for f in folders],
            "judge": {"grader": "scripted:rules"}, "seed": seed}
    tail = {"key_version": "k1", "set_version": "s1", **({"canary": {"n": 3}} if canary else {})}
    write_json_atomic(tmp / "old.json", {**base, "order": _old_order(folders, names, seed), **tail})
    write_index(tmp / "new.json", {**base, "order": BlindOrder(folders, names, seed), **tail})
    assert (tmp / "new.json").read_bytes() == (tmp / "old.json").read_bytes()
    assert not [p for p in Path(tmp).iterdir() if p.name.endswith(".tmp")]
