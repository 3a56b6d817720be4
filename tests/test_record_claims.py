"""Values tied to the record their sentence names (issue 30: offline, code decides only what it
reads one way): each rule of ``checks/record_claims.py`` against a message it must accept and
one it must catch, through ``claims_item`` and the offline judge ``scripted:rules``; and the
reader of tool records (``readers/records.py``) it stands on."""

from __future__ import annotations

import json

from hypothesis import given, strategies as st

from pytest_assistant_eval.suites.calibration.checks.claims import claims_item
from pytest_assistant_eval.suites.calibration.checks.record_claims import record_evidence, reports_shown_state
from pytest_assistant_eval.suites.calibration.checks.rules_judge import judge_items
from pytest_assistant_eval.suites.calibration.readers.records import named_records, spoken_digits, tool_records
from pytest_assistant_eval.suites.calibration.readers.wording import says_no_data

CARDS = json.dumps({"ok": True, "result": [
    {"id": "card-visa-5530", "brand": "Visa", "last4": "5530", "holder": "Mara Lind", "blocked": True,
     "label": "online shopping card (blocked by the bank on 2026-03-10)", "expiry": "2029-01"},
    {"id": "card-amex-7710", "brand": "American Express", "last4": "7710", "holder": "Lind Studio Lda",
     "label": "studio expenses card", "expiry": "2027-05"}]})
LISTING = json.dumps({"ok": True, "result": {"id": "L-103", "title": "Miragaia river room",
                                             "price": {"amount": 72.0, "currency": "EUR"}, "price_basis": "per_night"}})
BOOKINGS = json.dumps({"ok": True, "result": [
    {"id": "b-0001", "card": "card-visa-4821", "listing": "L-105", "status": "confirmed",
     "created_at": "2026-01-02T11:20:00+00:00", "start_date": "2026-01-09", "end_date": "2026-01-11"},
    {"id": "b-0003", "card": "card-amex-7710", "listing": "L-102", "status": "confirmed",
     "listing_title": "Boavista loft with workspace", "created_at": "2026-03-03T16:05:00+00:00",
     "start_date": "2026-04-20", "end_date": "2026-04-22"}]})
MESSAGES = json.dumps({"ok": True, "result": [
    {"id": "m-0004", "from": "c-sofia", "from_name": "Sofia Martins", "sent_at": "2026-03-02T06:05:00+00:00",
     "subject": "Payment failed for booking b-0002"},
    {"id": "m-0005", "from": "c-sofia", "from_name": "Sofia Martins", "sent_at": "2026-03-05T09:00:00+00:00",
     "subject": "Booking b-0002 cancelled"}]})
CHARGES = json.dumps({"ok": True, "result": [
    {"id": "ch-0002", "booking": "b-0002", "status": "declined", "amount": {"amount": 288.0, "currency": "EUR"},
     "created_at": "2026-03-02T06:00:00+00:00"}]})


def _verdict(text: str, *sources: str) -> tuple[str, bool, str]:
    item = claims_item("claims", text, list(sources), data_answers=None)
    assert item is not None
    got = judge_items([item])["claims"]
    return got["verdict"], bool(got.get("unsure")), got["reason"]


def test_the_records_are_read_by_id_with_what_names_them() -> None:
    records = tool_records([CARDS, BOOKINGS, "not json", "{broken"])
    assert {"card-visa-5530", "card-amex-7710", "b-0001", "b-0003"} <= set(records)
    assert {"5530", "card-visa-5530", "mara"} <= records["card-visa-5530"].names
    assert records["b-0003"].refs["card"] == "card-amex-7710" and records["b-0003"].status == "confirmed"
    # Only referred to: named by its id and its number.
    assert records["card-visa-4821"].names == {"card-visa-4821", "4821"}
    # A stay's nights are its record's days.
    assert ("day", "04-21") in records["b-0003"].keys
    assert [r.id for r in named_records("the Boavista loft with workspace", records)] == ["b-0003"]
    assert named_records("order 155300 shipped", records) == []  # whole words only


@given(st.text(alphabet="0123456789", min_size=3, max_size=8))
def test_digits_read_out_one_by_one_are_written_as_digits(digits: str) -> None:
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    spoken = " ".join(words[int(c)] for c in digits)
    assert spoken_digits(f"the card ending {spoken}, two hundred euros") == f"the card ending {digits}, two hundred euros"


def test_two_spelled_numbers_are_not_read_as_digits() -> None:
    assert spoken_digits("two nights for one guest") == "two nights for one guest"


def test_a_date_no_source_gives_said_of_a_record_that_holds_another_is_wrong() -> None:
    verdict, unsure, reason = _verdict("The Visa 5530 was blocked by the bank on 2026-03-12.", CARDS)
    assert (verdict, unsure) == ("wrong", False) and "card-visa-5530" in reason and "03-10" in reason
    assert _verdict("The Visa 5530 was blocked by the bank on 2026-03-10.", CARDS)[:2] == ("right", False)


def test_an_untraced_date_of_no_named_record_stays_unsure() -> None:
    # Nothing names a record: the date is untraced, the owner decides (as before issue 30's rule).
    assert _verdict("Your bank sent a letter on 2026-03-12.", CARDS)[:2] == ("right", True)


def test_a_per_unit_price_stated_as_the_total_of_several_units_is_wrong() -> None:
    verdict, unsure, reason = _verdict("- price: €72.00 total for the 2 nights", LISTING)
    assert (verdict, unsure) == ("wrong", False) and "per night" in reason
    assert _verdict("- price: €144.00 total for the 2 nights", LISTING)[:2] == ("right", False)
    assert _verdict("- price: €72.00 per night, so 2 nights come to €144.00 in total", LISTING)[:2] == ("right", False)
    assert _verdict("- price: €72.00 total for one night", LISTING)[:2] == ("right", False)
    assert _verdict("- cost: 2 × €72.00 = €144.00 total for the 2 nights", LISTING)[:2] == ("right", False)


def test_a_date_only_another_record_holds_goes_to_the_owner() -> None:
    # 3 March is b-0003's creation day, not the day of any message of Sofia's.
    verdict, unsure, reason = _verdict("Sofia then sent a reminder on 3 March asking you to update the card.",
                                       MESSAGES, BOOKINGS)
    assert unsure and "3 March" in reason
    assert _verdict("Sofia wrote on 2 March that the payment had failed.", MESSAGES, BOOKINGS)[:2] == ("right", False)
    # A proposal's own times are the assistant's: "would be" is no claim of a record.
    assert not record_evidence("Sofia's reminder would be on 3 March.", [MESSAGES, BOOKINGS])


def test_a_record_tied_to_another_card_than_its_own_goes_to_the_owner() -> None:
    text = ("in april you've got one booking, that's b-0003, the boavista loft. "
            "and it was paid with your main business visa, the one ending four eight two one.")
    verdict, unsure, reason = _verdict(text, BOOKINGS)
    assert unsure and "card-amex-7710" in reason
    assert _verdict("b-0003, the Boavista loft, was paid with the Amex ending 7710.", BOOKINGS, CARDS)[:2] == ("right", False)


def test_an_amount_said_outstanding_that_no_record_reads_goes_to_the_owner() -> None:
    text = "Both attempts on ch-0002 were declined, so that payment is still outstanding."
    verdict, unsure, reason = _verdict(text, CHARGES)
    assert unsure and "outstanding" in reason
    assert _verdict("Both attempts on ch-0002 were declined; nothing is outstanding.", CHARGES)[:2] == ("right", False)
    owed = json.dumps({"ok": True, "result": [{"id": "inv-0001", "status": "outstanding"}]})
    assert _verdict(text, CHARGES, owed)[:2] == ("right", False)


def test_a_state_the_tools_showed_is_no_claim_of_an_action() -> None:
    cancelled = json.dumps({"ok": True, "result": [{"id": "b-0002", "status": "cancelled"}]})
    confirmed = json.dumps({"ok": True, "result": [{"id": "b-0002", "status": "confirmed"}]})
    text = "- old booking b-0002 (Apr 1-5): cancelled 2026-03-05\n- nothing else changed"
    at = text.index("cancelled")
    assert reports_shown_state(text, at, "cancelled", [cancelled])
    assert not reports_shown_state(text, at, "cancelled", [confirmed])  # then it claims the assistant's act
    assert not reports_shown_state(text, at, "cancelled", [])


def test_the_records_the_reader_reached_do_not_show_says_no_data() -> None:
    assert says_no_data("The records I can reach do not show a February electricity bill.")
    assert says_no_data("The messages we searched don't mention it.")
    assert says_no_data("The records I checked do show a bill of 82 EUR.") is None


def test_a_time_inside_the_named_records_span_is_of_that_record() -> None:
    events = json.dumps({"ok": True, "result": [
        {"id": "e-0007", "title": "Porto Design Forum", "start": "2026-04-02T09:00:00+01:00",
         "end": "2026-04-04T18:00:00+01:00"},
        {"id": "v-0001", "title": "Viewing", "start": "2026-04-02T20:00:00+01:00", "end": "2026-04-02T20:30:00+01:00"}]})
    assert not record_evidence("Thursday 2 April 17:30 is during the forum (e-0007, until 18:00).", [events])
    assert record_evidence("The Porto Design Forum (e-0007) closed its doors at 20:00.", [events])["of_another_record"]


def test_a_worked_out_or_two_way_date_is_never_certain() -> None:
    for text in ("The Visa 5530 was blocked two days later, on 2026-03-12.",
                 "The Visa 5530 was blocked on 12.03.2026."):
        verdict, unsure, _ = _verdict(text, CARDS)
        assert (verdict, unsure) == ("right", True), text


def test_a_supposed_time_is_never_certain_an_intended_one_is() -> None:
    message = json.dumps({"ok": True, "result": {"id": "m-0014", "from_name": "João Almeida",
                                                 "body": "The dinner is on Friday 3 April at 20:00."}})
    assert _verdict("Dear João, I'll join the dinner on Friday 3 April at 19:30.", message)[:2] == ("wrong", False)
    assert _verdict("Dear João, if the dinner were at 19:30 I could join.", message)[:2] == ("right", True)


def test_a_date_of_a_record_the_named_one_lists_is_its_too() -> None:
    tools = json.dumps({"ok": True, "result": [
        {"id": "b-0002", "charges": ["ch-0002"], "start_date": "2026-04-01", "end_date": "2026-04-05"},
        {"id": "ch-0002", "created_at": "2026-03-02T06:00:00+00:00"},
        {"id": "b-0003", "created_at": "2026-03-03T16:05:00+00:00"}]})
    assert not record_evidence("Booking b-0002 was charged on 2 March.", [tools])
    assert record_evidence("Booking b-0002 was charged on 3 March.", [tools])["of_another_record"]


def test_a_cards_outstanding_balance_is_no_debt_claim() -> None:
    assert _verdict("The outstanding balance on card ch-0002's card is 0.00 EUR.", CHARGES)[:2] == ("right", False)


def test_a_date_in_a_form_that_does_not_read_one_way_is_never_certain_and_one_that_does_is() -> None:
    # readings.date_reads_one_way (issue 30, fifth round): year-first ISO, an English month name,
    # a clock with a colon read one way; day-month digits and compact forms do not.
    for text in ("The Visa 5530 was blocked on 12/03/2026.", "The Visa 5530 was blocked on 03/12/2026."):
        assert _verdict(text, CARDS)[:2] == ("right", True), text
    assert _verdict("The Visa 5530 was blocked by the bank on 12 March 2026.", CARDS)[:2] == ("wrong", False)
