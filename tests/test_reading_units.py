"""Issue 21's readers: units beyond the domain's table (pint), numbers in words (text2num),
rates per night however they are written, and the constants people divide by."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.reading.calculations import find_calculations
from pytest_assistant_eval.reading.compare import is_constant, same_quantity, to_base
from pytest_assistant_eval.reading.numbers import find_quantities, split_unit
from pytest_assistant_eval.reading.spelled import spelled_numbers
from pytest_assistant_eval.reading.units import UNITS, canonical_unit, looks_like_unit


def one(text: str):
    found = find_quantities(text)
    assert len(found) == 1, found
    return found[0]


# --- units the table does not know ---------------------------------------------------


@pytest.mark.parametrize("written", ["68 square feet", "68 ft²", "68 sq ft", "68 sq. ft", "68 ft^2", "68sqft"])
def test_square_feet_in_every_spelling_are_an_area_of_another_magnitude_never_no_unit(written):
    q = one(f"Floor area: {written}.")
    assert q.unit == "ft²" and q.dimension == "area"
    assert to_base(q)[0] == pytest.approx(68 * 0.09290304)
    assert not same_quantity(q, (68, "m²"))
    assert same_quantity(q, (6.317, "m²"), rel_tol=0.001)


@pytest.mark.parametrize(
    "written, unit, dimension",
    [
        ("12 kilowatt-hours", "kWh", "energy"),
        ("340 megabytes", "MB", "data"),
        ("5 kilometres", "km", "length"),
        ("72 square metres", "m²", "area"),
        ("3 acres", "acre", "area"),
        ("4 miles", "mi", "length"),
        ("12 litres", "liter", "volume"),
        ("10 kg", "kg", "mass"),
        ("2 cubic metres", "m³", "volume"),
        ("3 feet", "ft", "length"),
    ],
)
def test_a_unit_word_reads_as_a_unit_of_its_dimension(written, unit, dimension):
    q = one(f"It is {written} in all.")
    assert (q.unit, q.dimension) == (unit, dimension)
    assert not q.unit_unknown


def test_a_registry_unit_that_is_a_table_unit_gets_the_tables_name():
    assert canonical_unit("kilometres") == "km"
    assert canonical_unit("furlongs") not in (None, "km")
    assert UNITS[canonical_unit("furlongs")][0] == "length"


@pytest.mark.parametrize("written, word", [("5 kWp", "kWp"), ("120 CHF", "CHF"), ("68 sq yd2", None)])
def test_a_number_next_to_a_unit_the_reader_does_not_know_is_reported_as_such(written, word):
    q = find_quantities(f"The system is {written} in size.")[0]
    if word is None:  # "sq yd2" is no unit anyone writes; the registry does not know it either
        return
    assert q.unit is None and q.unit_unknown and q.unit_word == word
    assert not same_quantity(q, (5, None))


@pytest.mark.parametrize("text", ["3 rooms", "3 are free", "at 5 in the morning", "2 points", "4 turns"])
def test_english_words_that_name_units_in_the_registry_are_not_units_after_a_number(text):
    q = find_quantities(text)[0]
    assert q.unit is None and not q.unit_unknown


def test_a_count_of_things_is_unit_less_not_an_unknown_unit():
    assert not looks_like_unit("bookings") and looks_like_unit("CHF") and looks_like_unit("kWp")


# --- per-unit values -------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["288.00 EUR a night", "288.00 EUR per night", "288.00 EUR/night", "288.00 EUR nightly",
     "288.00 EUR each night", "a nightly rate of 288.00 EUR", "per-night price: 288.00 EUR", "€288 a night", "€288/nt"],
)
def test_a_price_per_night_carries_its_denominator_however_it_is_written(text):
    q = one(text)
    assert (q.value, q.unit, q.per) == (288.0, "EUR", "night")


def test_a_total_has_no_denominator():
    assert one("The stay costs 288.00 EUR in total.").per is None


def test_a_denominator_in_a_registry_unit_is_read():
    assert split_unit("EUR per square foot") == ("EUR", "ft²")


# --- numbers in words ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value, unit",
    [
        ("three nights", 3, "night"),
        ("twelve hundred euros", 1200, "EUR"),
        ("two and a half kilometres", 2.5, "km"),
        ("a quarter of an hour", 0.25, "h"),
        ("half an hour", 0.5, "h"),
        ("three quarters of an hour", 0.75, "h"),
        ("a five-night stay", 5, "night"),
        ("ninety-nine point five kWh", 99.5, "kWh"),
        ("2 and a half hours", 2.5, "h"),
        ("1½ hours", 1.5, "h"),
        ("a 30-minute call", 30, "min"),
    ],
)
def test_numbers_in_words_read_as_quantities(text, value, unit):
    q = one(f"It is {text}, as agreed.")
    assert (q.value, q.unit) == (pytest.approx(value), unit)


@pytest.mark.parametrize(
    "text",
    ["No one answered.", "one of the rooms", "the last four digits", "the twenty-first of May",
     "I found three bookings.", "half the time"],
)
def test_number_words_without_a_unit_or_ordinals_are_not_quantities(text):
    assert find_quantities(text) == []


def test_spelled_numbers_keep_their_spans():
    text = "We stay three nights at twelve hundred euros."
    assert [(text[s.start:s.end], s.value) for s in spelled_numbers(text)] == [("three", 3), ("twelve hundred", 1200)]


# --- constants -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "written", ["1 073 741 824", "1,073,741,824", "2^30", "1024³", "1 048 576", "1024", "1000", "3600", "86400", "365"]
)
def test_binary_and_si_factors_and_the_clock_are_constants(written):
    assert is_constant(one(f"divided by {written} here"))


def test_an_ordinary_number_is_no_constant():
    assert not is_constant(one("It is 1 073 741 825 here."))
    assert not is_constant(one("It is 10 here."))


def test_a_division_by_2_to_the_30_is_a_calculation_that_holds():
    calc = find_calculations("5 368 709 120 bytes / 1 073 741 824 = 5 GiB")[0]
    assert calc.holds and calc.operands[1].value == 2**30


# --- properties ----------------------------------------------------------------------

_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _in_words(n: int) -> str:
    """A number below a million in words, as people write it (the oracle of the property)."""
    if n < 20:
        return _WORDS[n - 1]
    if n < 100:
        return _TENS[n // 10 - 2] + ("-" + _WORDS[n % 10 - 1] if n % 10 else "")
    if n < 1000:
        return _WORDS[n // 100 - 1] + " hundred" + (" and " + _in_words(n % 100) if n % 100 else "")
    return _in_words(n // 1000) + " thousand" + (" " + _in_words(n % 1000) if n % 1000 else "")


@settings(deadline=None, max_examples=200)
@given(st.integers(min_value=3, max_value=999_999), st.sampled_from(["euros", "nights", "kilometres", "kWh"]))
def test_any_number_in_words_before_a_unit_reads_as_its_value(n, unit):
    q = one(f"That is {_in_words(n)} {unit} in all.")
    assert q.value == n and q.spelled


@settings(deadline=None, max_examples=200)
@given(st.floats(min_value=0.01, max_value=1e6, allow_nan=False).map(lambda v: round(v, 2)),
       st.sampled_from(["square feet", "sq ft", "ft²", "acres", "miles", "litres"]))
def test_a_registry_unit_keeps_the_value_and_converts_to_the_base(value, unit):
    q = one(f"Measured: {value:.2f} {unit}.")
    assert q.value == pytest.approx(value)
    base, dimension = to_base(q)
    assert dimension in ("area", "length", "volume") and base == pytest.approx(value * UNITS[q.unit][1])


@settings(deadline=None, max_examples=200)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_the_reader_never_crashes_and_spans_hold(text):
    for q in find_quantities(text):
        assert text[q.start:q.end] == q.text
        assert q.unit is None or q.unit in UNITS
