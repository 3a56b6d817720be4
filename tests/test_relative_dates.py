"""Relative dates on the world's clock (dateparser, only where a relative phrase is; issue 21)."""

from __future__ import annotations

import pytest

from pytest_assistant_eval.grading.claims import untraced_statements
from pytest_assistant_eval.reading.dates import find_dates
from pytest_assistant_eval.reading.relative_dates import relative_dates


@pytest.mark.parametrize("text, iso", [
    ("It was blocked yesterday evening.", "2026-03-15"),
    ("I can book it for tomorrow.", "2026-03-17"),
    ("Shall we say this Thursday at 2pm?", "2026-03-19"),
    ("the day after tomorrow", "2026-03-18"),
    ("Today's batch failed.", "2026-03-16"),
])
def test_a_relative_date_is_read_on_the_worlds_clock(text: str, iso: str) -> None:
    assert [d.value for d in find_dates(text) if d.kind == "date"] == [iso]


def test_an_ambiguous_next_weekday_is_not_guessed() -> None:
    assert relative_dates("Let's do next Friday.") == []


def test_a_text_without_a_relative_phrase_is_never_given_to_the_library() -> None:
    assert relative_dates("The talk is on 3 April at 14:30.") == []


def test_a_relative_word_is_no_date_a_message_claims() -> None:
    assert untraced_statements("You can pay today with the Visa.", ["{}"]) == []
