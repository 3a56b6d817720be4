"""Bad world fixtures are refused naming file, line and what was expected (issue 23, items 9, 10).

A fixture the build reads wrongly changes the world under the answer key without a word, so
every fixture file is read like a case file: a repeated key, a value of the wrong type or a
malformed override is an error with its ``file:line``, never a traceback or a silent last value.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_assistant_eval.suites.calibration.world import FixtureError, WORLD_DIR_NAME, build_world
from pytest_assistant_eval.suites.calibration.world.fixtures import default_source_dir


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    """A copy of the shipped fixtures this test may break."""
    copy = tmp_path / "fixtures ä"
    shutil.copytree(default_source_dir(), copy)
    return copy


def _line(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _refusal(sources: Path, out: Path) -> str:
    with pytest.raises(FixtureError) as info:
        build_world(out, sources)
    assert not (out / WORLD_DIR_NAME).exists()
    return str(info.value)


def test_a_duplicate_key_in_a_fixture_record_is_refused_with_file_and_line(sources: Path, tmp_path: Path) -> None:
    listings = sources / "listings.yaml"
    _edit(listings, "distance_km: 0.6,", "distance_km: 0.35, distance_km: 0.6,")
    message = _refusal(sources, tmp_path / "out")
    assert f"{listings}:{_line(listings, 'distance_km: 0.35')}:" in message
    assert "duplicate key 'distance_km'" in message


@pytest.mark.parametrize(("file", "old", "new", "needle"), [
    ("world.yaml", "owner: c-mara\n", "owner: c-mara\nowner: c-joao\n", "owner: c-joao"),
    ("runs.yaml", "  source_file: scheduled_payments.csv\n",
     "  source_file: scheduled_payments.csv\n  source_file: other.csv\n", "other.csv"),
    ("variants/price_rise.yaml", "set: {price_amount: 118.0}", "set: {price_amount: 118.0, price_amount: 90.0}", "90.0"),
    ("variants/meeting_moved.yaml", "      folder: inbox\n", "      folder: inbox\n      folder: sent\n", "folder: sent"),
])
def test_a_duplicate_key_in_the_frame_runs_and_overrides_is_refused(
        sources: Path, tmp_path: Path, file: str, old: str, new: str, needle: str) -> None:
    _edit(sources / file, old, new)
    message = _refusal(sources, tmp_path / "out")
    assert f"{sources / file}:{_line(sources / file, needle)}:" in message and "duplicate key" in message


def test_a_fixture_value_of_the_wrong_type_names_file_line_and_what_was_expected(sources: Path, tmp_path: Path) -> None:
    cards = sources / "cards.yaml"
    _edit(cards, "limit_eur: 2500.0", "limit_eur: 'a lot'")
    message = _refusal(sources, tmp_path / "out")
    assert message == f"{cards}:{_line(cards, 'a lot')}: cards record 1: 'limit_eur' must be a number, not the string 'a lot'"


@pytest.mark.parametrize(("file", "old", "new", "expected"), [
    ("cards.yaml", "blocked: false,", "blocked: maybe,", "'blocked' must be true or false"),
    ("cards.yaml", 'last4: "4821"', "last4: [4, 8]", "'last4' must be a string, not a list"),
    ("messages.yaml", "recipients: [c-mara]", "recipients: c-mara", "'recipients' must be a list"),
    ("bookings.yaml", "nights: 4", "nights: four", "'nights' must be an integer"),
])
def test_every_column_type_is_checked(sources: Path, tmp_path: Path, file: str, old: str, new: str, expected: str) -> None:
    _edit(sources / file, old, new)
    message = _refusal(sources, tmp_path / "out")
    assert f"{sources / file}:{_line(sources / file, new)}:" in message and expected in message


def test_an_override_with_a_wrong_value_names_its_line(sources: Path, tmp_path: Path) -> None:
    variant = sources / "variants" / "price_rise.yaml"
    _edit(variant, "set: {price_amount: 118.0}", "set: {price_amount: cheap}")
    message = _refusal(sources, tmp_path / "out")
    assert message == (f"{variant}:{_line(variant, 'price_amount: cheap')}: change 1: set: 'price_amount' must be a number,"
                       " not the string 'cheap'")


def test_every_bad_value_of_a_file_is_named_at_once(sources: Path, tmp_path: Path) -> None:
    cards = sources / "cards.yaml"
    _edit(cards, "limit_eur: 2500.0", "limit_eur: 'a lot'")
    _edit(cards, "limit_eur: 2000.0", "limit_eur: none")
    _edit(cards, "balance_eur: 1412.0", "balance_eur: 1412.0, colour: red")
    lines = _refusal(sources, tmp_path / "out").splitlines()
    assert len(lines) == 3
    assert any("unknown key 'colour'" in line for line in lines)


def test_a_missing_record_to_change_names_the_override_line(sources: Path, tmp_path: Path) -> None:
    variant = sources / "variants" / "price_rise.yaml"
    _edit(variant, "key: L-103", "key: L-999")
    message = _refusal(sources, tmp_path / "out")
    assert f"{variant}:{_line(variant, '- table: listings')}: no listings record L-999 to change" in message
