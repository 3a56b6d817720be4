"""Snapshots, restore, diffs and digests of a world's state (S1.2, S1.5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.suites.calibration.world import SqliteWorld, build_world, diff_states, open_world, state_digest
from pytest_assistant_eval.suites.calibration.world.schema import PRIMARY_KEYS, TABLES

@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> SqliteWorld:
    built = build_world(tmp_path_factory.mktemp("built"))
    w = open_world(built, "base", tmp_path_factory.mktemp("cell"))
    yield w
    w.close()


def test_a_snapshot_has_every_table_sorted_by_primary_key_and_is_json(world: SqliteWorld) -> None:
    state = world.snapshot()
    assert list(state) == list(TABLES)
    for table, rows in state.items():
        keys = [r[PRIMARY_KEYS[table]] for r in rows]
        assert keys == sorted(keys)
    assert json.loads(json.dumps(state)) == state
    assert world.describe_state() == state


def test_a_booking_shows_up_in_the_diff_as_rows_and_fields(world: SqliteWorld) -> None:
    before = world.snapshot()
    world.call("book_listing", {"listing_id": "L-101", "card_id": "card-visa-4821", "start_date": "2026-04-01",
                                "end_date": "2026-04-05"}, turn=1, round=1)
    after = world.snapshot()
    changes = {(c.table, c.key, c.field) for c in diff_states(before, after)}
    assert changes == {("bookings", "b-0004", None), ("charges", "ch-0014", None),
                       ("cards", "card-visa-4821", "balance_eur"),
                       ("counters", "bookings", "next"), ("counters", "charges", "next")}
    added = next(c for c in diff_states(before, after) if c.table == "bookings")
    assert added.before is None and added.after["amount"] == 380.0
    world.restore(before)
    assert state_digest(world.snapshot()) == state_digest(before)


def test_removed_rows_have_the_row_before_and_none_after() -> None:
    a = {"contacts": [{"id": "c-x", "name": "X"}]}
    (change,) = diff_states(a, {"contacts": []})
    assert (change.field, change.before, change.after) == (None, {"id": "c-x", "name": "X"}, None)
    assert diff_states(a, a) == []


def test_the_digest_is_canonical() -> None:
    assert state_digest({"a": [{"x": 1, "y": "ä"}]}) == state_digest({"a": [{"y": "ä", "x": 1}]})
    assert state_digest({"a": [{"x": 1}]}) != state_digest({"a": [{"x": 2}]})


# Random edits: table, row index, column (never the primary key), new value.
_EDITABLE = [(t, c, kind) for t, cols in TABLES.items() for c, kind in cols[1:]]
_VALUES = {"TEXT": st.text(max_size=12), "REAL": st.floats(allow_nan=False, allow_infinity=False, width=64),
           "INTEGER": st.integers(min_value=-(2**62), max_value=2**62)}


@st.composite
def _edits(draw: st.DrawFn) -> list[tuple[str, int, str, Any]]:
    out = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        table, col, kind = draw(st.sampled_from(_EDITABLE))
        value = draw(st.one_of(st.none(), _VALUES[kind]))
        out.append((table, draw(st.integers(min_value=0, max_value=50)), col, value))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=_edits())
def test_restore_undoes_random_edits_and_diff_lists_exactly_the_edited_fields(world: SqliteWorld, edits: list) -> None:
    original = world.snapshot()
    digest = state_digest(original)
    expected: dict[tuple[str, str, str], tuple[Any, Any]] = {}
    conn = world._conn  # noqa: SLF001 - the test plays an outside writer
    for table, index, col, value in edits:
        rows = world.snapshot()[table]
        if not rows:
            continue
        row = rows[index % len(rows)]
        pk = PRIMARY_KEYS[table]
        conn.execute(f'UPDATE "{table}" SET "{col}" = ? WHERE "{pk}" = ?', (value, row[pk]))
        first_before = expected.get((table, row[pk], col), (original_value(original, table, row[pk], col), None))[0]
        expected[(table, row[pk], col)] = (first_before, value)
    edited = world.snapshot()
    want = {k: v for k, v in expected.items() if v[0] != v[1]}
    got = {(c.table, c.key, c.field): (c.before, c.after) for c in diff_states(original, edited)}
    assert got == want
    world.restore(original)
    assert state_digest(world.snapshot()) == digest


def original_value(state: dict, table: str, key: str, col: str) -> Any:
    pk = PRIMARY_KEYS[table]
    return next(r[col] for r in state[table] if r[pk] == key)


def test_restore_rejects_an_unknown_table(world: SqliteWorld) -> None:
    with pytest.raises(ValueError, match="unknown table"):
        world.restore({"secrets": []})


def test_a_second_connection_sees_the_same_state(world: SqliteWorld) -> None:
    state = world.snapshot()
    other = SqliteWorld(world.path)
    try:
        assert state_digest(other.snapshot()) == state_digest(state)
    finally:
        other.close()


def test_a_fresh_copy_gives_its_start_state_from_the_one_kept_per_content_until_its_first_change(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    built = build_world(tmp_path_factory.mktemp("kept"))
    first = open_world(built, "base", tmp_path_factory.mktemp("cell-a"))
    second = open_world(built, "base", tmp_path_factory.mktemp("cell-b"))
    try:
        read = first._read_snapshot()
        state = first.snapshot()
        assert state == read and list(state) == list(read)
        kept = second.snapshot()
        assert kept == read and kept is not state
        kept["cards"][0]["balance_eur"] = -1  # a caller's change to its copy reaches no other cell
        assert second.snapshot() == read
        second.call("book_listing", {"listing_id": "L-101", "card_id": "card-visa-4821", "start_date": "2026-04-01",
                                     "end_date": "2026-04-05"}, turn=1, round=1)
        changed = second.snapshot()
        assert changed == second._read_snapshot() and changed != read
        assert first.snapshot() == read  # the other copy is untouched
    finally:
        first.close()
        second.close()
