"""The fixtures tell one consistent story: references resolve, sums add up (S1.1).

The answer key derives its values from the built world; these checks keep the
world itself from contradicting its own records.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from pytest_assistant_eval.suites.calibration.world import NOW_ISO, build_world, list_variants, query
from pytest_assistant_eval.suites.calibration.world.fixtures import default_source_dir, load_frame


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_world(tmp_path_factory.mktemp("built"))


def test_the_frame_and_the_clock_agree(built: Path) -> None:
    assert load_frame(default_source_dir())["now"] == NOW_ISO
    assert query(built, "base", "SELECT value FROM meta WHERE key = 'now'") == [(NOW_ISO,)]


def test_there_is_enough_to_ask_about(built: Path) -> None:
    counts = {t: query(built, "base", f"SELECT count(*) FROM {t}")[0][0]
              for t in ("contacts", "messages", "events", "listings", "bookings", "cards", "charges", "runs")}
    assert counts["contacts"] >= 12 and counts["messages"] >= 15 and counts["events"] >= 10
    assert counts["listings"] >= 10 and counts["bookings"] >= 3 and 3 <= counts["cards"] <= 4
    assert counts["charges"] >= 10 and counts["runs"] == 2
    assert query(built, "base", "SELECT count(*) FROM contacts WHERE active = 0")[0][0] in (1, 2)
    assert query(built, "base", "SELECT count(*) FROM listings WHERE active = 0")[0][0] == 1
    assert len(list_variants(built)) >= 6


@pytest.mark.parametrize("variant", ["base", "price_rise", "card_blocked", "meeting_moved", "contact_moved", "sold_out", "card_renewed"])
def test_every_reference_resolves(built: Path, variant: str) -> None:
    contacts = {r[0] for r in query(built, variant, "SELECT id FROM contacts")}
    cards = {r[0] for r in query(built, variant, "SELECT id FROM cards")}
    listings = {r[0] for r in query(built, variant, "SELECT id FROM listings")}
    bookings = {r[0] for r in query(built, variant, "SELECT id FROM bookings")}
    runs = {r[0] for r in query(built, variant, "SELECT id FROM runs")}
    for sender, recipients in query(built, variant, "SELECT sender, recipients FROM messages"):
        assert sender in contacts and set(json.loads(recipients)) <= contacts
    for attendees, organizer in query(built, variant, "SELECT attendees, organizer FROM events"):
        assert set(json.loads(attendees)) <= contacts and organizer in contacts
    assert {r[0] for r in query(built, variant, "SELECT seller FROM listings")} <= contacts
    for listing, card in query(built, variant, "SELECT listing, card FROM bookings"):
        assert listing in listings and card in cards
    for card, booking, run in query(built, variant, "SELECT card, booking, run FROM charges"):
        assert card in cards and (booking is None or booking in bookings) and (run is None or run in runs)


def test_bookings_count_their_nights_and_amounts(built: Path) -> None:
    rows = query(built, "base", "SELECT b.start_date, b.end_date, b.nights, b.amount, l.price_amount "
                                "FROM bookings b JOIN listings l ON l.id = b.listing")
    for start, end, nights, amount, price in rows:
        assert (date.fromisoformat(end) - date.fromisoformat(start)).days == nights
        assert amount == pytest.approx(nights * price)


def test_card_balances_are_the_ok_charges_of_the_cycle(built: Path) -> None:
    for card, balance in query(built, "base", "SELECT id, balance_eur FROM cards"):
        (spent,) = query(built, "base", "SELECT coalesce(sum(amount), 0) FROM charges WHERE card = ? "
                                         "AND status = 'ok' AND created_at >= '2026-03-01'", (card,))[0]
        assert balance == pytest.approx(spent), card


def test_the_cancelled_booking_has_its_causal_chain(built: Path) -> None:
    (reason, card) = query(built, "base", "SELECT cancel_reason, card FROM bookings WHERE id = 'b-0002'")[0]
    assert "payment failed" in reason
    declined = query(built, "base", "SELECT decline_reason FROM charges WHERE booking = 'b-0002' ORDER BY created_at")
    assert declined == [("card_expired",), ("card_expired",)]
    assert query(built, "base", "SELECT expiry FROM cards WHERE id = ?", (card,)) == [("2026-02",)]
