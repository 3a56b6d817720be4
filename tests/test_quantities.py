import math
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_assistant_eval.reading.calculations import find_calculations
from pytest_assistant_eval.reading.compare import CONSTANTS, is_constant, same_quantity, to_base
from pytest_assistant_eval.reading.dates import find_dates
from pytest_assistant_eval.reading.numbers import Quantity, find_quantities
from pytest_assistant_eval.reading.sources import is_sourced, numbers_in_json, unit_from_key
from pytest_assistant_eval.reading.units import UNITS, canonical_unit


def values(text):
    return [(q.value, q.unit) for q in find_quantities(text)]


def one(text):
    found = find_quantities(text)
    assert len(found) == 1, found
    return found[0]


# --- number formats ---------------------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [
        ("1,050", 1050),
        ("1050", 1050),
        ("1 050", 1050),
        ("1\u00a0050", 1050),
        ("1\u202f050", 1050),
        ("1\u2009050", 1050),
        ("1,050.5", 1050.5),
        ("1.050,5", 1050.5),
        ("1 050,5", 1050.5),
        ("1.050.000", 1050000),
        ("1.050", 1.05),
        ("12,5", 12.5),
        ("95,50", 95.5),
        ("0.25", 0.25),
        ("-3.5", -3.5),
        ("\u22122", -2),
        ("+4", 4),
    ],
)
def test_number_formats_read_as_documented(text, value):
    q = one(f"It is {text} here.")
    assert q.value == pytest.approx(value)
    assert q.unit is None


def test_a_hyphen_between_numbers_is_a_range_not_a_sign():
    assert values("10-20 km") == [(10, None), (20, "km")]


def test_quantity_text_and_span_cover_number_and_unit():
    text = "Distance: 1.2 km away"
    q = one(text)
    assert (q.text, text[q.start : q.end]) == ("1.2 km", "1.2 km")
    assert q.decimals == 1


# --- units ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value, unit",
    [
        ("95 EUR", 95, "EUR"),
        ("EUR 95", 95, "EUR"),
        ("€95", 95, "EUR"),
        ("€ 95", 95, "EUR"),
        ("95.00 €", 95, "EUR"),
        ("95€", 95, "EUR"),
        ("95 euros", 95, "EUR"),
        ("-€5", -5, "EUR"),
        ("$12", 12, "USD"),
        ("3 m", 3, "m"),
        ("3 km", 3, "km"),
        ("30 cm", 30, "cm"),
        ("5 kilometres", 5, "km"),
        ("80 m²", 80, "m²"),
        ("80 m2", 80, "m²"),
        ("80 sqm", 80, "m²"),
        ("80 square metres", 80, "m²"),
        ("80 square meters", 80, "m²"),
        ("5 Wh", 5, "Wh"),
        ("5 kWh", 5, "kWh"),
        ("5 kwh", 5, "kWh"),
        ("5 MWh", 5, "MWh"),
        ("5 GWh", 5, "GWh"),
        ("5 B", 5, "B"),
        ("5 kB", 5, "kB"),
        ("5 MB", 5, "MB"),
        ("5MB", 5, "MB"),
        ("5 GB", 5, "GB"),
        ("5 TB", 5, "TB"),
        ("5 min", 5, "min"),
        ("5 minutes", 5, "min"),
        ("5 h", 5, "h"),
        ("5 hours", 5, "h"),
        ("5 s", 5, "s"),
        ("5 days", 5, "day"),
        ("5 nights", 5, "night"),
        ("5 %", 5, "%"),
        ("5%", 5, "%"),
        ("5 percent", 5, "%"),
    ],
)
def test_units_and_currencies_get_their_canonical_names(text, value, unit):
    q = one(f"about {text}.")
    assert (q.value, q.unit) == (pytest.approx(value), unit)


def test_letters_that_are_no_unit_are_not_swallowed():
    assert values("5 seats, 3 mice") == [(5, None), (3, None)]


def test_canonical_unit_knows_spellings_and_refuses_strangers():
    assert canonical_unit("sqm") == "m²"
    assert canonical_unit("KWH") == "kWh"
    assert canonical_unit("€") == "EUR"
    assert canonical_unit("wombats") is None


# --- what is not a quantity -------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Listing L-104",
        "card-2",
        "ch-0011",
        "b-0004",
        "e-0011",
        "run_3",
        "question G05",
        "Cell #12",
        "on 2026-04-02",
        "at 09:30",
        "at 9:30 pm",
        "at 9 am",
        "on 2 April 2026",
        "on April 2, 2026",
        "on 2nd of April",
        "on 02.04.2026",
        "in April 2026",
        "in 2026",
        "the card ending 4242",
        "the card ending in 4242",
        "last four digits 4242",
        "the card •••• 4242",
        "the 5th time",
    ],
)
def test_ids_dates_times_and_card_digits_are_not_quantities(text):
    assert find_quantities(text) == []


def test_a_year_with_a_unit_is_an_amount():
    assert values("in 2026 EUR") == [(2026, "EUR")]


def test_lower_case_may_is_a_verb_not_a_month():
    assert values("3 may be enough") == [(3, None)]


def test_find_dates_normalises_what_it_finds():
    found = find_dates("Moved from 2026-04-02T09:30 to 3 April, at 14:15; due April 2026.")
    assert [(d.kind, d.value) for d in found] == [
        ("datetime", "2026-04-02T09:30"),
        ("date", "--04-03"),
        ("time", "14:15"),
        ("month", "2026-04"),
    ]


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from(["L", "card", "ch", "b", "e", "run"]))
def test_a_number_inside_an_id_is_never_a_quantity(n, prefix):
    assert find_quantities(f"Booked {prefix}-{n} today.") == []
    assert find_quantities(f"({prefix}-{n:04d})") == []


@given(
    st.integers(min_value=0, max_value=10**12),
    st.one_of(st.none(), st.integers(min_value=0, max_value=99)),
    st.sampled_from(["en", "de", " ", "\u00a0", "\u202f", "\u2009", "none"]),
    st.booleans(),
)
def test_formatting_with_thousands_separators_reads_back(whole, cents, style, negative):
    grouped = f"{whole:,}"
    if style == "en":
        text, dec = grouped, "."
    elif style == "de":
        # One dot group without decimals is read as a decimal point: that is the documented ambiguity.
        assume(cents is not None or grouped.count(",") != 1)
        text, dec = grouped.replace(",", "."), ","
    elif style == "none":
        text, dec = str(whole), "."
    else:
        text, dec = grouped.replace(",", style), "."
    if cents is not None:
        text += f"{dec}{cents:02d}"
    expected = whole + (cents or 0) / 100
    if negative:
        text, expected = "-" + text, -expected
    q = one(f"Total: {text} EUR.")
    assert q.value == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert q.unit == "EUR"


# --- conversion and comparison ----------------------------------------------

dimensions: dict[str, list[str]] = {}
for _unit, (_dim, _factor) in UNITS.items():
    dimensions.setdefault(_dim, []).append(_unit)
convertible = [(a, b) for units in dimensions.values() for a in units for b in units]


@given(st.sampled_from(convertible), st.floats(min_value=1e-3, max_value=1e6))
def test_every_prefix_conversion_round_trips(pair, value):
    a, b = pair
    base, dim = to_base((value, a))
    in_b = base / UNITS[b][1]
    assert same_quantity((value, a), (in_b, b))
    assert to_base((in_b, b))[1] == dim
    assert in_b * UNITS[b][1] / UNITS[a][1] == pytest.approx(value, rel=1e-9)


@given(st.sampled_from(sorted(UNITS)), st.floats(min_value=0.01, max_value=1e5))
def test_a_written_quantity_parses_to_its_base_value(unit, value):
    q = one(f"It is {value:.2f} {unit} long" if unit not in "$€£" else f"It is {value:.2f}{unit} long")
    assert to_base(q)[0] == pytest.approx(round(value, 2) * UNITS[unit][1])


def test_same_quantity_follows_dimensions():
    assert same_quantity(one("1.2 km"), one("1200 m"))
    assert not same_quantity(one("3 kWh"), one("3 MWh"))
    assert same_quantity(one("95 EUR"), (95.0, "EUR"))
    assert not same_quantity(one("95 EUR"), (95.0, "USD"))
    assert same_quantity(one("90 minutes"), (1.5, "h"))
    assert same_quantity(one("1.5 GB"), (1500, "MB"))


def test_unitless_equals_united_only_when_asked():
    assert not same_quantity(one("95"), (95.0, "EUR"))
    assert same_quantity(one("95"), (95.0, "EUR"), allow_unitless=True)
    assert same_quantity(one("95"), 95.0)


def test_same_quantity_tolerance_is_relative():
    assert same_quantity((1000, "EUR"), (1004, "EUR"))
    assert not same_quantity((1000, "EUR"), (1010, "EUR"))


# --- tool results -----------------------------------------------------------


@pytest.mark.parametrize(
    "key, unit",
    [
        ("distance_km", "km"),
        ("area_m2", "m²"),
        ("kwh_per_year", "kWh"),
        ("attachment_mb", "MB"),
        ("duration_minutes", "min"),
        ("limit_eur", "EUR"),
        ("balance_eur", "EUR"),
        ("price_per_night_eur", "EUR"),
        ("sizeBytes", "B"),
        ("nights", "night"),
        ("guests", None),
        ("items", None),
    ],
)
def test_unit_hints_come_from_key_names(key, unit):
    assert unit_from_key(key) == unit


def test_numbers_in_json_collects_every_number_with_its_hint():
    result = {
        "listing": {"id": "L-104", "distance_km": 1.2, "area_m2": 64, "available": True},
        "charges": [{"amount": 95, "currency": "EUR", "card_id": "card-2"}, {"amount": 12.5, "currency": "EUR"}],
        "energy": {"value": 3, "unit": "kWh"},
        "note": "Attachment of 1.5 GB sent on 2026-04-02",
        "count": 2,
    }
    assert sorted(numbers_in_json(result), key=repr) == sorted(
        [(1.2, "km"), (64.0, "m²"), (95.0, "EUR"), (12.5, "EUR"), (3.0, "kWh"), (1.5, "GB"), (2.0, None)],
        key=repr,
    )


def test_is_sourced_accepts_conversions_within_one_dimension():
    sources = numbers_in_json({"distance_km": 1.2, "attachment_mb": 1500, "kwh_per_year": 3})
    assert is_sourced(one("1200 m"), sources)
    assert is_sourced(one("1.5 GB"), sources)
    assert is_sourced(one("3 kWh"), sources)
    assert not is_sourced(one("3 MWh"), sources)
    assert not is_sourced(one("1.3 km"), sources)


def test_is_sourced_accepts_rounding_to_the_written_decimals_and_ignores_sign():
    sources = [(1.2345, "km"), (-95.0, "EUR"), (0.25, None)]
    assert is_sourced(one("1.2 km"), sources)
    assert is_sourced(one("1.23 km"), sources)
    assert not is_sourced(one("1.24 km"), sources)
    assert is_sourced(one("95 EUR"), sources)
    assert is_sourced(one("25 %"), sources)


def test_is_sourced_lets_a_unitless_side_match_the_raw_value():
    assert is_sourced(one("64"), [(64.0, "m²")])
    assert is_sourced(one("64 m²"), [(64.0, None)])
    assert not is_sourced(one("95 USD"), [(95.0, "EUR")])


# --- constants and calculations ---------------------------------------------


@pytest.mark.parametrize("text", ["7 days", "24 hours", "60 minutes", "100 %", "1000", "0", "2", "365 days"])
def test_general_constants_need_no_source(text):
    assert is_constant(one(text))


@pytest.mark.parametrize("text", ["8 days", "95 EUR", "1.2 km", "3"])
def test_other_numbers_are_not_constants(text):
    assert not is_constant(one(text))


def test_constants_are_written_in_canonical_units():
    assert all(unit is None or unit in UNITS for _, unit in CONSTANTS)


def test_shown_arithmetic_is_found_and_checked():
    text = "Fees: 120.00 + 292.50 = 412.50. Stay: 3 × 95 EUR = 285 EUR. Oops: 2 + 2 = 5."
    calcs = find_calculations(text)
    assert [(c.text, c.holds) for c in calcs] == [
        ("120.00 + 292.50 = 412.50", True),
        ("3 × 95 EUR = 285 EUR", True),
        ("2 + 2 = 5", False),
    ]
    assert calcs[1].operators == ("*",)
    assert (calcs[1].result.value, calcs[1].result.unit) == (285, "EUR")


def test_calculations_respect_precedence_units_and_rounding():
    assert [c.holds for c in find_calculations("10 + 2 × 3 = 16")] == [True]
    assert [c.holds for c in find_calculations("1.2 km + 300 m = 1500 m")] == [True]
    assert [c.holds for c in find_calculations("100 / 3 = 33.33")] == [True]
    assert [c.holds for c in find_calculations("412.50 - 120.00 = 292.50")] == [True]
    assert [c.holds for c in find_calculations("412.50 -120.00 = 290")] == [False]


def test_numbers_without_an_equals_sign_are_no_calculation():
    assert find_calculations("between 10 - 20 km, about 3 x 95 EUR") == []


def test_quantity_equality_ignores_written_decimals():
    assert Quantity(1.0, "m", "1 m", 0, 3, 0) == Quantity(1.0, "m", "1 m", 0, 3, 2)


def test_scale_words_multiply_and_keep_the_unit():
    q = one("about 1.2 million kWh a year")
    assert (q.value, q.unit, q.text, q.per) == (1_200_000, "kWh", "1.2 million kWh a year", "year")
    assert is_sourced(q, [(1_234_000, "kWh")])
    assert not is_sourced(q, [(1_300_000, "kWh")])


def test_percent_of_and_per_unit_calculations():
    assert [c.holds for c in find_calculations("20 % of 95 EUR = 19 EUR")] == [True]
    assert [c.holds for c in find_calculations("95 EUR per night × 3 nights = 285 EUR")] == [True]
    assert [c.holds for c in find_calculations("95 EUR/night x 3 nights = 290 EUR")] == [False]


@given(st.integers(min_value=-5000, max_value=5000), st.sampled_from(["{m}e{e}", "{m} × 10^{e}", "10^{e}", "{m}E{e} bytes"]),
       st.integers(min_value=1, max_value=10**6))
def test_no_exponent_however_large_stops_the_reader(exponent: int, form: str, mantissa: int):
    """An answer with "1e999" once crashed grading (OverflowError): every power is read or left, never raised."""
    text = "about " + form.format(m=mantissa, e=exponent) + " in all"
    for q in find_quantities(text):
        assert math.isfinite(q.value)


def test_a_number_no_float_holds_is_no_quantity():
    assert find_quantities("1e999 bytes") == [] and find_quantities("9" * 400 + " EUR") == []
    assert [q.value for q in find_quantities("1e6 bytes")] == [1_000_000.0]
