import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_assistant_eval.stats import Interval, wilson
from pytest_assistant_eval.tabular.render import (
    display_width,
    format_count,
    format_percent,
    format_rate,
    pad,
    render_table,
)


def test_display_width_counts_wide_characters_twice_and_combining_marks_not_at_all():
    assert display_width("abc") == 3
    assert display_width("Grounding world ä") == 17
    assert display_width("a\u0308") == 1  # a + combining diaeresis
    assert display_width("模型") == 4
    assert display_width("ｆｕｌｌ") == 8


def test_pad_aligns_by_display_width():
    assert pad("模型", 6) == "模型  "
    assert pad("7", 3, "r") == "  7"
    assert pad("ab", 6, "c") == "  ab  "
    assert pad("toolong", 3) == "toolong"


def test_simple_table_is_exact():
    out = render_table(["model", "level", "n"], [["oracle", "basic", "12"], ["x", "advanced", "3"]], ["l", "l", "r"])
    assert out == (
        "model   level      n\n"
        "──────  ────────  ──\n"
        "oracle  basic     12\n"
        "x       advanced   3"
    )


def test_title_comes_first():
    assert render_table(["a"], [["1"]], title="Leaderboard").splitlines()[0] == "Leaderboard"


def test_wide_characters_keep_columns_aligned():
    out = render_table(
        ["model", "rate"],
        [["模型", "83%"], ["Grounding world ä", "5%"], ["a\u0308b", "100%"]],
        ["l", "r"],
    )
    lines = out.splitlines()
    assert len({display_width(line) for line in lines}) == 1
    # the right edge of the rate column is the same column in every row
    for line in lines[2:]:
        assert line.endswith("%")


def test_box_table_lines_all_have_one_width():
    out = render_table(["名前", "n"], [["ä", "1"], ["longer name", "12"]], ["l", "r"], box=True)
    lines = out.splitlines()
    assert lines[0].startswith("┌") and lines[-1].startswith("└")
    assert len({display_width(line) for line in lines}) == 1
    assert "│ 名前        │  n │" in lines


def test_cells_are_one_line_and_none_is_empty():
    out = render_table(["a", "b"], [["two\nlines", None]])
    assert out.splitlines()[-1] == "two lines"


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="row 0"):
        render_table(["a", "b"], [["1"]])
    with pytest.raises(ValueError, match="align"):
        render_table(["a"], [["1"]], ["x"])  # type: ignore[list-item]


@given(
    st.lists(
        st.lists(st.text(alphabet=st.sampled_from("aä模ｆ1 ß€"), max_size=8), min_size=3, max_size=3),
        max_size=6,
    ),
    st.lists(st.sampled_from(["l", "r", "c"]), min_size=3, max_size=3),
)
def test_every_row_of_a_table_has_the_same_width_before_trimming(rows, align):
    out = render_table(["one", "二", "three"], rows, align, box=True)
    assert len({display_width(line) for line in out.splitlines()}) == 1


def test_format_rate_shows_rate_n_and_interval():
    assert format_rate(wilson(10, 12)) == "83% (n=12, 55–95%)"
    assert format_rate(wilson(0, 0)) == "– (n=0)"
    assert format_rate(Interval(0.5, 0.25, 0.75, 4), digits=1) == "50.0% (n=4, 25.0–75.0%)"


def test_format_count_and_percent():
    assert format_count(1234) == "1,234"
    assert format_count(10, 12) == "10/12"
    assert format_count(None) == "–"
    assert format_percent(0.8333) == "83%"
    assert format_percent(None) == "–"


def test_a_bound_near_0_or_100_percent_is_not_rounded_onto_it():
    from pytest_assistant_eval.stats import wilson

    assert format_rate(wilson(949, 949)) == "100% (n=949, 99.6–100%)"
    assert format_rate(wilson(0, 949)) == "0% (n=949, 0–0.4%)"
    assert format_rate(wilson(105, 105)) == "100% (n=105, 96–100%)", "a bound that rounds apart keeps its digits"


@given(st.integers(min_value=1, max_value=100_000), st.data())
def test_a_printed_interval_says_0_or_100_percent_only_when_its_bound_is_exactly_that(n: int, data: st.DataObject):
    from pytest_assistant_eval.stats import wilson

    k = data.draw(st.integers(min_value=0, max_value=n))
    interval = wilson(k, n)
    low, high = format_rate(interval).split(", ")[1].rstrip("%)").split("–")
    assert (float(low) == 0.0) == (interval.low <= 0.0)
    assert (float(high) == 100.0) == (interval.high >= 1.0)
