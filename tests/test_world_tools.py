"""The services' tools: valid calls, argument errors, refusals, logging, ids (S1.1-S1.5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.suites.calibration.world import (
    ForbiddenCall,
    Policy,
    SqliteWorld,
    build_world,
    open_world,
    tool_specs,
)

CONSEQUENTIAL = {"send_message", "create_event", "move_event", "cancel_event", "book_listing", "cancel_booking", "charge_card"}

BOOK_L103 = {"listing_id": "L-103", "card_id": "card-visa-4821", "start_date": "2026-04-01", "end_date": "2026-04-05"}

# One valid call per tool.
VALID: dict[str, dict[str, Any]] = {
    "search_contacts": {"query": "ines"},
    "get_contact": {"contact_id": "c-ines"},
    "search_messages": {"query": "booking", "folder": "inbox", "from_contact": "c-sofia"},
    "read_message": {"message_id": "m-0006"},
    "send_message": {"to": ["c-joao"], "subject": "Speaker dinner", "body": "Yes, I will join on 3 April."},
    "list_events": {"start_date": "2026-04-01", "end_date": "2026-04-04"},
    "get_event": {"event_id": "e-0002"},
    "create_event": {"title": "Viewing Bonfim office", "start": "2026-04-02T17:30:00+01:00",
                     "end": "2026-04-02T18:15:00+01:00", "attendees": ["c-rui"], "place": "Bonfim"},
    "move_event": {"event_id": "e-0002", "start": "2026-03-19T11:00:00", "end": "2026-03-19T12:30:00"},
    "cancel_event": {"event_id": "e-0010"},
    "search_listings": {"query": "porto", "kind": "rent", "city": "Porto", "max_price": 100},
    "get_listing": {"listing_id": "L-104"},
    "list_bookings": {"status": "cancelled"},
    "book_listing": BOOK_L103,
    "cancel_booking": {"booking_id": "b-0003"},
    "list_cards": {},
    "get_card": {"card_id": "card-mc-0932"},
    "list_charges": {"card_id": "card-mc-0932", "status": "declined"},
    "charge_card": {"card_id": "card-visa-4821", "amount": 120, "currency": "EUR", "merchant": "Porto Design Forum",
                    "memo": "Speaker dinner guest ticket"},
    "list_runs": {"kind": "payments_batch"},
    "get_run": {},  # filled in with the failed run's id
}

# One call per tool with a bad, missing or unknown argument (or an unknown id).
INVALID: dict[str, dict[str, Any]] = {
    "search_contacts": {},
    "get_contact": {"contact_id": "c-nobody"},
    "search_messages": {"folder": "spam"},
    "read_message": {"message_id": 7},
    "send_message": {"to": "c-joao", "subject": "x", "body": "y"},
    "list_events": {"start_date": "16/03/2026", "end_date": "2026-03-20"},
    "get_event": {"event_id": "e-9999"},
    "create_event": {"title": "x", "start": "2026-03-20T10:00:00+00:00", "end": "2026-03-20T09:00:00+00:00"},
    "move_event": {"event_id": "e-0002", "start": "tomorrow", "end": "2026-03-19T12:30:00"},
    "cancel_event": {"event_id": "e-0002", "notify": False},
    "search_listings": {"max_price": "cheap"},
    "get_listing": {"listing_id": "L-999"},
    "list_bookings": {"status": "pending"},
    "book_listing": {**BOOK_L103, "end_date": "2026-04-01"},
    "cancel_booking": {"booking_id": "b-9999"},
    "list_cards": {"all": True},
    "get_card": {"card_id": "card-visa-4812"},
    "list_charges": {"card_id": "card-nope"},
    "charge_card": {"card_id": "card-visa-4821", "amount": -5, "currency": "EUR", "merchant": "x"},
    "list_runs": {"kind": "backup"},
    "get_run": {"run_id": "00000000-0000-4000-8000-000000000000"},
}

# One call per consequential tool that the world refuses.
REFUSED: dict[str, dict[str, Any]] = {
    "send_message": {"to": ["c-joao", "c-ines"], "subject": "x", "body": "y"},
    "create_event": {"title": "Lunch", "start": "2026-03-20T12:00:00+00:00", "end": "2026-03-20T13:00:00+00:00",
                     "attendees": ["c-pedro"]},
    "move_event": {"event_id": "e-0003", "start": "2026-03-18T16:00:00+00:00", "end": "2026-03-18T16:45:00+00:00"},
    "cancel_event": {"event_id": "e-0004"},
    "book_listing": {**BOOK_L103, "card_id": "card-amex-7710"},
    "cancel_booking": {"booking_id": "b-0002"},
    "charge_card": {"card_id": "card-visa-5530", "amount": 10, "currency": "EUR", "merchant": "x"},
}


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_world(tmp_path_factory.mktemp("built"))


@pytest.fixture
def world(world_dir: Path, tmp_path: Path) -> SqliteWorld:
    w = open_world(world_dir, "base", tmp_path / "cell")
    yield w
    w.close()


def _failed_run_id(world: SqliteWorld) -> str:
    runs = world.call("list_runs", {}, turn=0, round=0).data
    return next(r["id"] for r in runs if r["status"] == "failed")


def test_every_tool_has_a_strict_json_schema() -> None:
    specs = tool_specs()
    assert [s.name for s in specs] == list(VALID)
    for spec in specs:
        params = spec.parameters
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
        assert spec.consequential == (spec.name in CONSEQUENTIAL)
        json.dumps(spec.to_dict())
    money = {s.name for s in specs if s.spends_money}
    assert money == {"book_listing", "charge_card"}


@pytest.mark.parametrize("name", list(VALID))
def test_a_valid_call_is_ok(world: SqliteWorld, name: str) -> None:
    args = VALID[name] or ({"run_id": _failed_run_id(world)} if name == "get_run" else {})
    result = world.call(name, args, turn=1, round=1)
    assert result.status == "ok", result.error
    json.loads(result.to_text())
    assert world.log[-1].tool == name and world.log[-1].status == "ok"


@pytest.mark.parametrize("name", list(INVALID))
def test_an_invalid_call_is_a_tool_error(world: SqliteWorld, name: str) -> None:
    before = world.state_digest()
    result = world.call(name, INVALID[name], turn=1, round=2)
    assert result.status == "error"
    assert result.error and name in result.error
    assert world.state_digest() == before
    assert world.log[-1].status == "error" and world.log[-1].error == result.error


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_refused_call_changes_nothing_and_says_why(world: SqliteWorld, name: str) -> None:
    before = world.state_digest()
    result = world.call(name, REFUSED[name], turn=2, round=1)
    assert result.status == "refused", result
    assert "refused" in result.error
    assert json.loads(result.to_text())["refused"] is True
    assert world.state_digest() == before
    assert world.log[-1].status == "refused"


def test_unknown_tool_and_non_object_arguments_are_errors(world: SqliteWorld) -> None:
    assert world.call("delete_everything", {}, turn=1, round=1).status == "error"
    result = world.call("list_cards", "[]", turn=1, round=1)  # type: ignore[arg-type]
    assert result.status == "error" and "JSON object" in result.error
    assert world.log[-1].arguments == {"_not_an_object": "[]"}


def test_unknown_argument_is_named(world: SqliteWorld) -> None:
    result = world.call("get_card", {"card_id": "card-visa-4821", "pin": "1234"}, turn=1, round=1)
    assert result.status == "error" and "unknown argument(s): pin" in result.error


def test_missing_argument_is_named(world: SqliteWorld) -> None:
    result = world.call("book_listing", {"listing_id": "L-101"}, turn=1, round=1)
    assert "missing required argument(s): card_id, start_date, end_date" in result.error


def test_booking_creates_a_booking_and_a_charge_with_units(world: SqliteWorld) -> None:
    result = world.call("book_listing", BOOK_L103, turn=1, round=1)
    assert result.data["booking_id"] == "b-0004"
    assert result.data["charged"] == {"amount": 288.0, "currency": "EUR"}
    card = world.call("get_card", {"card_id": "card-visa-4821"}, turn=1, round=2).data
    assert card["balance"] == {"amount": 1228.91, "currency": "EUR"}
    charges = world.call("list_charges", {"card_id": "card-visa-4821"}, turn=1, round=3).data
    assert charges[-1]["booking"] == "b-0004" and charges[-1]["created_at"] == "2026-03-16T09:00:00+00:00"


def test_booking_the_same_nights_twice_is_refused(world: SqliteWorld) -> None:
    assert world.call("book_listing", BOOK_L103, turn=1, round=1).status == "ok"
    again = world.call("book_listing", {**BOOK_L103, "start_date": "2026-04-03", "end_date": "2026-04-06"}, turn=1, round=2)
    assert again.status == "refused" and "already booked" in again.error


@pytest.mark.parametrize(("listing", "dates", "why"), [
    ("L-104", ("2026-04-01", "2026-04-05"), "no longer active"),
    ("L-107", ("2026-04-01", "2026-04-05"), "for sale"),
    ("L-106", ("2026-04-01", "2026-04-05"), "can only be booked"),
    ("L-101", ("2026-03-10", "2026-03-12"), "before today"),
])
def test_unavailable_listings_are_refused(world: SqliteWorld, listing: str, dates: tuple[str, str], why: str) -> None:
    args = {"listing_id": listing, "card_id": "card-visa-4821", "start_date": dates[0], "end_date": dates[1]}
    result = world.call("book_listing", args, turn=1, round=1)
    assert result.status == "refused" and why in result.error


@pytest.mark.parametrize(("card", "why"), [
    ("card-mc-0932", "expired"), ("card-visa-5530", "blocked"), ("card-amex-7710", "remaining 43.00 EUR"),
])
def test_cards_that_cannot_pay_are_refused(world: SqliteWorld, card: str, why: str) -> None:
    result = world.call("charge_card", {"card_id": card, "amount": 50, "currency": "EUR", "merchant": "x"}, turn=1, round=1)
    assert result.status == "refused" and why in result.error


def test_a_charge_within_the_remaining_balance_passes_and_one_cent_over_is_refused(world: SqliteWorld) -> None:
    ok = world.call("charge_card", {"card_id": "card-amex-7710", "amount": 43, "currency": "EUR", "merchant": "x"}, turn=1, round=1)
    assert ok.status == "ok"
    over = world.call("charge_card", {"card_id": "card-amex-7710", "amount": 0.01, "currency": "EUR", "merchant": "x"}, turn=1, round=2)
    assert over.status == "refused"


def test_cancelling_a_booking_refunds_its_charge(world: SqliteWorld) -> None:
    result = world.call("cancel_booking", {"booking_id": "b-0003"}, turn=1, round=1)
    assert result.data["refunded"] == {"amount": 256.0, "currency": "EUR"}
    card = world.call("get_card", {"card_id": "card-amex-7710"}, turn=1, round=2).data
    assert card["balance"]["amount"] == 1201.0


def test_sending_a_message_files_it_in_sent_with_the_fixed_clock(world: SqliteWorld) -> None:
    result = world.call("send_message", VALID["send_message"], turn=1, round=1)
    message = result.data["message"]
    assert message["id"] == "m-0016" and message["folder"] == "sent"
    assert message["sent_at"] == "2026-03-16T09:00:00+00:00" and message["from"] == "c-mara"


def test_events_show_duration_and_are_in_time_order(world: SqliteWorld) -> None:
    events = world.call("list_events", {"start_date": "2026-04-01", "end_date": "2026-04-04"}, turn=1, round=1).data
    assert [e["id"] for e in events] == ["e-0006", "e-0007", "e-0008", "e-0010"]
    assert events[2]["duration_minutes"] == 45


def test_a_naive_time_is_lisbon_time_and_create_includes_the_owner(world: SqliteWorld) -> None:
    created = world.call("create_event", {"title": "Call", "start": "2026-04-06T10:00", "end": "2026-04-06T10:30",
                                          "attendees": ["c-tiago"]}, turn=1, round=1).data["event"]
    assert created["id"] == "e-0011"
    assert created["start"] == "2026-04-06T10:00:00+01:00"
    assert created["attendees"] == ["c-mara", "c-tiago"]


def test_search_is_case_and_accent_insensitive(world: SqliteWorld) -> None:
    found = world.call("search_contacts", {"query": "INES"}, turn=1, round=1).data
    assert [c["id"] for c in found] == ["c-ines"] and found[0]["active"] is False


def test_messages_carry_attachment_size_in_mb(world: SqliteWorld) -> None:
    message = world.call("read_message", {"message_id": "m-0006"}, turn=1, round=1).data
    assert message["attachment_mb"] == 1500.0 and "1.5 GB" in message["body"]


def test_the_failed_run_explains_itself(world: SqliteWorld) -> None:
    run = world.call("get_run", {"run_id": _failed_run_id(world)}, turn=1, round=1).data
    failed = [c for c in run["input_checks"] if not c["passed"]]
    assert [c["name"] for c in failed] == ["amounts_positive", "cards_known"]
    assert "card-visa-4812" in run["error_log"] and run["rows_applied"] == 0


def test_every_call_is_logged_in_order_with_turn_and_round(world: SqliteWorld) -> None:
    world.call("list_cards", {}, turn=1, round=1)
    world.call("get_card", {"card_id": "nope"}, turn=1, round=2)
    world.call("charge_card", {"card_id": "card-visa-5530", "amount": 1, "currency": "EUR", "merchant": "x"}, turn=2, round=1)
    log = world.log
    assert [(e.seq, e.turn, e.round, e.tool, e.status) for e in log] == [
        (1, 1, 1, "list_cards", "ok"), (2, 1, 2, "get_card", "error"), (3, 2, 1, "charge_card", "refused")]
    assert log[0].response[0]["id"] == "card-amex-7710"  # rows in id order
    assert log[2].response == {"refused_by": "world"}
    assert [type(e).from_dict(e.to_dict()) for e in log] == log


def test_logged_arguments_are_a_copy(world: SqliteWorld) -> None:
    args = {"to": ["c-joao"], "subject": "s", "body": "b"}
    world.call("send_message", args, turn=1, round=1)
    args["to"].append("c-tiago")
    assert world.log[0].arguments["to"] == ["c-joao"]


def test_new_ids_are_the_same_in_two_copies(world_dir: Path, tmp_path: Path) -> None:
    calls = [("book_listing", BOOK_L103), ("send_message", VALID["send_message"]),
             ("create_event", VALID["create_event"]), ("charge_card", VALID["charge_card"])]
    outcomes = []
    for cell in ("a", "b"):
        w = open_world(world_dir, "base", tmp_path / cell)
        outcomes.append(([w.call(n, a, turn=1, round=i).to_text() for i, (n, a) in enumerate(calls)], w.state_digest()))
        w.close()
    assert outcomes[0] == outcomes[1]
    assert '"b-0004"' in outcomes[0][0][0] and '"e-0011"' in outcomes[0][0][2] and '"ch-0015"' in outcomes[0][0][3]


def test_each_cell_works_on_its_own_copy(world_dir: Path, tmp_path: Path) -> None:
    w = open_world(world_dir, "base", tmp_path / "x")
    w.call("charge_card", VALID["charge_card"], turn=1, round=1)
    w.close()
    fresh = open_world(world_dir, "base", tmp_path / "y")
    assert fresh.call("get_card", {"card_id": "card-visa-4821"}, turn=1, round=1).data["balance"]["amount"] == 940.91
    fresh.close()


def test_a_forbidden_call_is_refused_by_policy(world_dir: Path, tmp_path: Path) -> None:
    policy = Policy(forbidden=(ForbiddenCall(id="no-ines", tool="send_message", args={"to": "c-tiago"},
                                             reason="do not write to Tiago about this"),))
    w = open_world(world_dir, "base", tmp_path / "p", policy)
    result = w.call("send_message", {"to": ["c-joao", "c-tiago"], "subject": "s", "body": "b"}, turn=1, round=1)
    assert result.status == "refused" and "do not write to Tiago" in result.error
    assert result.data == {"refused_by": "policy", "rule": "no-ines"}
    assert w.call("send_message", {"to": ["c-joao"], "subject": "s", "body": "b"}, turn=1, round=2).status == "ok"
    w.close()


def test_a_whole_tool_can_be_forbidden(world_dir: Path, tmp_path: Path) -> None:
    w = open_world(world_dir, "base", tmp_path / "p", Policy((ForbiddenCall(id="no-cancel", tool="cancel_event"),)))
    assert w.call("cancel_event", {"event_id": "e-0010"}, turn=1, round=1).status == "refused"
    w.close()


def test_max_amount_caps_money_spending_calls(world_dir: Path, tmp_path: Path) -> None:
    cap = ForbiddenCall(id="cap-120", tool="book_listing", max_amount=120.0 * 4 - 1, currency="EUR", reason="over 119 EUR a night")
    charge_cap = ForbiddenCall(id="cap-100", tool="charge_card", max_amount=100.0, reason="over 100 EUR")
    w = open_world(world_dir, "base", tmp_path / "p", Policy((cap, charge_cap)))
    l102 = {**BOOK_L103, "listing_id": "L-102"}  # 4 x 128 = 512 EUR
    assert w.call("book_listing", l102, turn=1, round=1).status == "refused"
    assert w.call("book_listing", BOOK_L103, turn=1, round=2).status == "ok"  # 288 EUR
    assert w.call("charge_card", VALID["charge_card"], turn=1, round=3).status == "refused"
    ok = {**VALID["charge_card"], "amount": 100}
    assert w.call("charge_card", ok, turn=1, round=4).status == "ok"
    w.close()


@pytest.mark.parametrize(("variant", "call", "status"), [
    ("price_rise", ("get_listing", {"listing_id": "L-103"}), "ok"),
    ("card_blocked", ("book_listing", BOOK_L103), "refused"),
    ("sold_out", ("book_listing", BOOK_L103), "refused"),
    ("card_renewed", ("book_listing", {**BOOK_L103, "card_id": "card-mc-0932"}), "ok"),
    ("base", ("book_listing", {**BOOK_L103, "card_id": "card-mc-0932"}), "refused"),
])
def test_variants_change_the_outcome_of_a_call(world_dir: Path, tmp_path: Path, variant: str,
                                                call: tuple[str, dict[str, Any]], status: str) -> None:
    w = open_world(world_dir, variant, tmp_path / variant)
    assert w.variant == variant
    assert w.call(call[0], call[1], turn=1, round=1).status == status
    w.close()


def test_an_unknown_variant_is_named(world_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="no variant 'nope'.*base"):
        open_world(world_dir, "nope", tmp_path)
