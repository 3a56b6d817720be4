"""The world's shortcuts (issue 32) give what the long ways give: digests kept for equal states, tables
of equal rows skipped by the diff, a service's answer copied through marshal."""

from __future__ import annotations

import copy
import hashlib

from hypothesis import given, strategies as st

from pytest_assistant_eval.suites.calibration.world import services
from pytest_assistant_eval.suites.calibration.world.state import canonical_json, diff_states, state_digest, table_changes

# Values a field can hold, with the ones equal under == but written differently (1, 1.0, True, -0.0).
_VALUE = st.one_of(st.sampled_from([1, 1.0, True, 0, 0.0, -0.0, False, None, "1", "é"]),
                   st.integers(-3, 3), st.text(max_size=3))
_ROW = st.fixed_dictionaries({"id": st.integers(0, 4)}, optional={"a": _VALUE, "b": _VALUE})
_STATE = st.dictionaries(st.sampled_from(["contacts", "cards", "other"]), st.lists(_ROW, max_size=4), max_size=3)


def _walk(a, b):
    """The diff as it was before the shortcut: every table walked field by field."""
    return [change for table in sorted(set(a) | set(b)) for change in table_changes(table, a.get(table, []), b.get(table, []))]


@given(st.lists(_STATE, min_size=1, max_size=8))
def test_a_kept_digest_is_only_ever_the_digest_of_the_same_data(states):
    for state in [*states, *states]:
        assert state_digest(state) == hashlib.sha256(canonical_json(state).encode("utf-8")).hexdigest()


def test_states_equal_under_eq_but_written_differently_get_their_own_digests():
    one, real, true = {"t": [{"id": 1, "a": 1}]}, {"t": [{"id": 1, "a": 1.0}]}, {"t": [{"id": 1, "a": True}]}
    digests = [state_digest(s) for s in (one, real, true, one)]
    assert len(set(digests[:3])) == 3 and digests[3] == digests[0]


@given(_STATE, _STATE)
def test_the_diff_is_the_field_by_field_walk(a, b):
    assert diff_states(a, b) == _walk(a, b)
    assert diff_states(a, copy.deepcopy(a)) == _walk(a, copy.deepcopy(a)) == []


@given(st.recursive(_VALUE, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                          max_size=3), max_leaves=10))
def test_a_service_answer_is_copied_as_deepcopy_copies_it_sharing_nothing(value):
    copied = services._plain_copy(value)
    assert copied == value and repr(copied) == repr(copy.deepcopy(value))
    if isinstance(value, (list, dict)):
        assert copied is not value


def test_an_answer_that_is_not_plain_data_is_deep_copied():
    class Row(dict):
        pass

    row = Row(id=1, tags=["a"])
    copied = services._plain_copy(row)
    assert type(copied) is Row and copied == row and copied["tags"] is not row["tags"]
