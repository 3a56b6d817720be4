"""The scripted user is a fair counterpart of any careful assistant (S5.2; issue 9 items 1-5).

Proposals are written the way models write them (names, brands and last four digits, dates
in words and ranges, amounts with context around them); each test shows the decision and
that it is recorded with its reason. The world's names come from the shipped fixtures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.messages import Message
from pytest_assistant_eval.suites.calibration.user.scripted import ScriptedUser, UserReply, check_user_reply
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from pytest_assistant_eval.suites.calibration.world.fixtures import load_tables
from pytest_assistant_eval.suites.calibration.world.names import Names

CALIBRATION = Path(__file__).resolve().parent.parent / "calibration"
CASES, _ = load_calibration(CALIBRATION)
TASKS = {t.id: t for t in CASES.tasks}
NAMES = Names(load_tables(CALIBRATION / "world"))


def answer(task_id: str, text: str, state: dict[str, Any] | None = None) -> UserReply:
    return ScriptedUser(TASKS[task_id], NAMES).reply([Message(role="assistant", content=text)], state or {})


def decision(reply: UserReply) -> str:
    assert reply.decision is not None
    return reply.decision["kind"]


@pytest.mark.parametrize("text", [
    "The Miragaia river room (L-103) is free 7–9 April: 2 nights × €72 = €144, on the Visa ending 4821 "
    "(your main business card). Want me to go ahead?",
    "I can reserve L-103, the Miragaia river room, from April 7 to April 9 for 144 EUR in total. Shall I?",
    "**Miragaia river room** · 7-9 April · 144.00 euros · main business card. Book it?",
    "Good news: the room you liked is available. Total for 2 nights: €144 (your Visa ••••4821 has 1,559.09 EUR "
    "free). Should I book it for check-in 7 April and check-out 9 April?",
])
def test_a_proposal_in_natural_words_is_approved(text: str) -> None:
    reply = answer("T03", text)
    assert (decision(reply), reply.approvals_given) == ("approve", ["book-miragaia"])
    assert reply.decision["matched"]  # the words that tied it to the approval are kept


def test_the_amount_weighed_is_the_cost_not_the_largest_number() -> None:
    reply = answer("T03", "Booking the Miragaia river room for 7–9 April comes to 144 EUR; your card has "
                          "1,559.09 EUR free. Shall I book it?")
    assert reply.approvals_given == ["book-miragaia"] and reply.decision["amount"] == 144


def test_a_cost_over_the_cap_is_refused_and_the_refusal_names_that_cost() -> None:
    reply = answer("T03", "Shall I book the Miragaia river room 7–9 April for 290 EUR in total?")
    assert reply.approvals_refused == ["book-miragaia"]
    assert "290" in reply.message and "1,559" not in reply.message


def test_a_refused_proposal_asked_again_within_the_conditions_gets_a_yes() -> None:
    state: dict[str, Any] = {}
    assert answer("T03", "Shall I book the Miragaia river room 7–9 April for 290 EUR in total?", state).approvals_refused
    again = answer("T03", "Sorry, my mistake: it is 144 EUR in total for 7–9 April. Shall I book the Miragaia room?", state)
    assert again.approvals_given == ["book-miragaia"]


def test_a_money_action_without_its_cost_gets_a_question_not_a_yes() -> None:
    reply = answer("T03", "Shall I book the Miragaia river room for 7–9 April on your Visa ending 4821?")
    assert decision(reply) == "ask_cost" and not reply.approvals_given and "?" in reply.message


def test_an_unreadable_message_gets_a_question_that_cannot_be_taken_for_consent() -> None:
    reply = answer("T03", "Hmm, which dates did you mean exactly?")
    assert decision(reply) == "clarify" and not reply.approvals_given and not reply.done
    assert "go ahead" not in reply.message.lower() and not reply.message.lower().startswith("yes")


def test_a_question_for_a_fact_gets_the_fact_in_the_first_person_and_no_approval() -> None:
    reply = answer("T14", "Happy to reply to João Almeida for you. What is your dietary requirement? "
                          "Once I have it, shall I send the reply?")
    assert (decision(reply), reply.facts_disclosed, reply.approvals_given) == ("facts", ["diet"], [])
    assert reply.message == "I'm vegetarian."


def test_a_draft_repeating_the_fact_gets_a_yes() -> None:
    reply = answer("T14", "Here's the draft to João:\n\n> Hi João, I'll be at the speakers' dinner on 3 April. "
                          "I'm vegetarian.\n\nShall I send it?", {"facts_disclosed": ["diet"]})
    assert reply.approvals_given == ["reply"]


def test_a_proposal_for_what_the_user_refuses_is_refused() -> None:
    reply = answer("T04", "The Miragaia river room is only free from 10 April. The Ribeira studio apartment "
                          "(L-101) is free at 95 EUR a night (190 EUR in total). Would you like me to book that instead?")
    assert reply.approvals_refused == ["other-place"] and not reply.approvals_given


def test_another_card_named_by_brand_and_digits_is_refused() -> None:
    reply = answer("T06", "Your Visa ending 4821 is blocked. Should I pay the 120 EUR with your American Express "
                          "ending 7710 instead?")
    assert reply.approvals_refused == ["other-card"]


def test_the_wrong_hour_is_not_approved() -> None:
    reply = answer("T08", "I'll add a prep session with Tiago on Thursday 19 March, 10:00–11:00, at the studio. "
                          "Does that work?")
    assert decision(reply) == "refuse" and not reply.approvals_given


def test_a_report_with_a_closing_question_ends_the_conversation() -> None:
    reply = answer("T03", "Done: booking B-0007 confirmed, 144 EUR charged to the Visa ending 4821. Anything else?")
    assert reply.done and decision(reply) == "done"


def test_the_independent_check_catches_a_yes_outside_the_conditions() -> None:
    text = "Shall I book the Ribeira studio apartment (L-101) for 7–9 April, 190 EUR in total?"
    wrong = UserReply("Yes.", approvals_given=["book-miragaia"])
    why = check_user_reply(TASKS["T04"], wrong, [Message(role="assistant", content=text)], NAMES)
    assert why is not None and "L-101" in why or "ribeira" in (why or "").lower()


def test_the_independent_check_catches_a_fact_said_but_not_recorded() -> None:
    said = UserReply("Sure, I'm vegetarian, go ahead.")
    why = check_user_reply(TASKS["T14"], said, [Message(role="assistant", content="What do you eat?")], NAMES)
    assert why is not None and "diet" in why


def test_the_scripted_user_passes_its_own_independent_check() -> None:
    text = "Shall I charge 120 EUR to your Visa ending 4821 for Porto Design Forum?"
    reply = answer("T05", text)
    assert reply.approvals_given == ["pay-ticket"]
    assert check_user_reply(TASKS["T05"], reply, [Message(role="assistant", content=text)], NAMES) is None


LISTING = st.sampled_from(["the Miragaia river room", "L-103", "the Miragaia room", "Miragaia river room (L-103)",
                           "L-103 (Miragaia river room)"])
CARD = st.sampled_from(["your Visa ending 4821", "your main business card", "card-visa-4821", "the Visa •••• 4821",
                        "your card ending in 4821", ""])
DATES = st.sampled_from(["7–9 April", "7-9 April", "April 7-9", "7 to 9 April", "from 7 April to 9 April",
                         "2026-04-07 to 2026-04-09", "check-in 7 April, check-out 9 April", ""])
COST = st.sampled_from(["144 EUR", "€144", "144.00 euros", "EUR 144", "a total of €144"])
ASK = st.sampled_from(["Shall I book it?", "Want me to go ahead?", "Should I reserve it?", "OK to book?",
                       "Would you like me to book it?", "Can I go ahead and book it?", "Book it?"])


@settings(max_examples=150, deadline=None)
@given(LISTING, CARD, DATES, COST, ASK)
def test_a_proposal_naming_its_records_in_any_form_is_recognised(listing: str, card: str, dates: str, cost: str,
                                                                 ask: str) -> None:
    on_card = f" on {card}" if card else ""
    when = f" for {dates}" if dates else ""
    reply = answer("T03", f"{listing}{when}{on_card} costs {cost}. {ask}")
    assert reply.approvals_given == ["book-miragaia"], reply.decision


@pytest.mark.parametrize("ask", ["Confirm?", "Is that a yes?", "OK?"])
def test_a_bare_request_for_the_yes_after_a_full_proposal_is_read_as_one(ask: str) -> None:
    reply = answer("T13", "Rebook: L-103, check-in 1 April, check-out 5 April (4 nights × 72 EUR = 288 EUR) on the "
                          f"Mastercard ending 0932. {ask}")
    assert reply.approvals_given == ["rebook"]


# -- issue 22: terse 12-hour, month-first, euro-first wording ------------------------------------

# T09 in this wording: the review is at 3 pm on Friday 20 March; the prep hour ends when it starts.
T09_TERSE = ("Found it: the Sousa Bakery rebrand review is Fri Mar 20, 3:00–4:00 pm. Proposal: prep session "
             "with Tiago, Fri Mar 20, 2:00–3:00 pm, at the studio. Shall I create it?")
T09_LAYOUT = ("Here's what I'd put in your calendar:\n\n**What:** Prep session for the Sousa Bakery rebrand review\n"
              "**Who:** you and Tiago Ferreira\n**Where:** the studio\n**When:** Fri Mar 20, 2–3pm\n**Cost:** none\n\n"
              "Want me to add it?")
# T05: the charge is €120; the sum is what the card would stand at afterwards.
T05_RUNNING_TOTAL = ("Ready to pay: I'd charge €120 to your Visa ending 4821 for Porto Design Forum (guest ticket, "
                     "speakers' dinner). After it the card stands at €940.91 + €120 = €1,060.91 of its €2,500 limit. "
                     "Good to charge?")
# T11: the listing's availability window is context; the stay is Apr 1 -> Apr 5.
T11_WINDOW = ("Cheapest fit that isn't Casa Ribeira: the Boavista loft with workspace (L-102), 3.9 km from the venue, "
              "open for bookings Mar 1–Dec 31.\n\nWed Apr 1 → Sun Apr 5: 4 nights × €128 = €512, on the Visa "
              "ending 4821. Want me to book it?")


@pytest.mark.parametrize("task_id, text, approval", [
    ("T09", T09_TERSE, "prep"),
    ("T09", T09_LAYOUT, "prep"),
    ("T09", "**What:** prep session · **Who:** Tiago · **Where:** studio · **When:** Friday, March 20, 2–3 p.m. "
            "Shall I schedule it?", "prep"),
    ("T05", "**What:** guest ticket, speakers' dinner\n**Who:** Porto Design Forum\n**Cost:** €120 on the Visa ending "
            "4821 (balance after: €1,060.91 of €2,500)\n\nShall I pay it?", "pay-ticket"),
    ("T11", "**What:** Boavista loft with workspace (L-102)\n**Where:** 3.9 km from the venue\n**When:** Wed Apr 1 – "
            "Sun Apr 5 (available Mar 1–Dec 31)\n**Cost:** 4 × €128 = €512 on your main business card\n\nBook it?",
     "book-room"),
    ("T05", T05_RUNNING_TOTAL, "pay-ticket"),
    ("T11", T11_WINDOW, "book-room"),
    ("T09", "Prep with Tiago: Fri Mar 20, 2:00 pm – 3:00 pm, studio. OK to add?", "prep"),
    ("T05", "I'll charge €120.00 to the main business card (Visa ••4821) for Porto Design Forum; spent so far this "
            "cycle €940.91, so €1,060.91 after. Go ahead?", "pay-ticket"),
    ("T11", "The only active rental within 5 km not from Casa Ribeira is the Boavista loft (L-102), available "
            "Mar 1–Dec 31. Apr 1–5: 4 nights × €128 = €512 on the Visa ending 4821. Want me to book it?", "book-room"),
    ("T03", "Miragaia river room (L-103), Tue Apr 7 → Thu Apr 9, 2 × €72 = €144 on the Visa ending 4821. "
            "Shall I book it?", "book-miragaia"),
    ("T03", "**What:** Miragaia river room\n**When:** Apr 7–9\n**Cost:** €144 total (your card has €1,559.09 free)"
            "\n\nBook it?", "book-miragaia"),
    # an imperative with the yes in quotes, no question mark, under a markdown heading
    ("T09", "## Proposed event\n\n| field | value |\n|---|---|\n| title | Prep with Tiago |\n| when | Friday 20th "
            "March 2026, 14:00–15:00 |\n| where | Lind Studio |\n\n## Recommendation\n\nReply \"yes\" and I will "
            "create it as written.", "prep"),
])
def test_a_careful_terse_proposal_gets_a_yes_on_first_asking(task_id: str, text: str, approval: str) -> None:
    reply = answer(task_id, text)
    assert (decision(reply), reply.approvals_given) == ("approve", [approval]), reply.decision
    assert check_user_reply(TASKS[task_id], reply, [Message(role="assistant", content=text)], NAMES) is None


def test_a_time_range_carries_its_pm_to_the_start() -> None:
    from pytest_assistant_eval.suites.calibration.readers.dates import find_dates

    assert [d.value for d in find_dates("Fri Mar 20, 2:00–3:00 pm")] == ["--03-20", "14:00", "15:00"]
    assert [d.value for d in find_dates("9:30–11 am, 11:30–1:00 pm")] == ["09:30", "11:00", "11:30", "13:00"]
    assert [d.value for d in find_dates("from 09:00 to 3 pm")] == ["09:00", "15:00"]


@pytest.mark.parametrize("text, values", [
    ("2–3pm", ["14:00", "15:00"]), ("9–10 am", ["09:00", "10:00"]), ("2pm", ["14:00"]), ("noon", ["12:00"]),
    ("17h30", ["17:30"]), ("half past five", ["05:30"]), ("quarter to 3 pm", ["14:45"]),
    ("five o'clock in the afternoon", ["17:00"]), ("Thu Apr 2", ["--04-02"]), ("Sun Apr 5: 4 nights", ["--04-05"]),
    ("Apr 2–6", ["--04-02", "--04-06"]),
])
def test_times_and_dates_as_people_write_them(text: str, values: list[str]) -> None:
    from pytest_assistant_eval.suites.calibration.readers.dates import find_dates

    assert [d.value for d in find_dates(text)] == values


def test_a_spoken_time_without_am_or_pm_may_be_either_half_of_the_day() -> None:
    from pytest_assistant_eval.suites.calibration.readers.wording import moment_of_value, read_moment

    moment = moment_of_value("17:30")
    assert moment is not None and read_moment("we meet at half past five", moment).matched is not None


def test_a_slash_date_without_a_year_is_read_only_when_the_text_shows_its_order() -> None:
    from pytest_assistant_eval.suites.calibration.readers.dates import find_dates

    assert find_dates("4/2") == []
    assert [d.value for d in find_dates("check-in 3/30, check-out 4/2")] == ["--03-30", "--04-02"]
    assert [d.value for d in find_dates("arrive 30/3, leave 4/2")] == ["--03-30", "--02-04"]


def test_the_sum_of_the_charge_and_the_balance_is_never_the_charge() -> None:
    reply = answer("T05", T05_RUNNING_TOTAL)
    assert reply.decision["amount"] == 120 and "1060" not in reply.message and "1,060" not in reply.message


def test_a_refusal_says_what_lies_outside_the_approval_in_the_persona_words() -> None:
    wrong_end = answer("T11", "Boavista loft (L-102): Wed Apr 1 → Mon Apr 6, 5 nights × €128 = €640 on the Visa "
                              "ending 4821. Want me to book it?")
    assert decision(wrong_end) == "refuse" and "The stay must end on 5 April." in wrong_end.message
    too_early = answer("T09", "Prep session with Tiago, Fri Mar 20, 1:00–2:00 pm at the studio. Shall I create it?")
    assert decision(too_early) == "refuse" and "It has to end at 3 pm on Friday 20 March." in too_early.message


def test_a_corrected_proposal_gets_a_yes_and_the_same_proposal_the_same_answer() -> None:
    state: dict[str, Any] = {}
    wrong = "Boavista loft (L-102): Apr 1 → Apr 6, 5 nights × €128 = €640 on the Visa ending 4821. Want me to book it?"
    first, again = answer("T11", wrong, state), answer("T11", wrong, state)
    assert (decision(first), first.message) == (decision(again), again.message) == (decision(first), first.message)
    assert decision(first) == "refuse"
    corrected = answer("T11", "Sorry: Apr 1 → Apr 5, 4 nights × €128 = €512 for the Boavista loft (L-102), Visa "
                              "ending 4821. Want me to book it?", state)
    assert corrected.approvals_given == ["book-room"]


def test_an_offer_of_alternatives_the_persona_does_not_want_gets_a_plain_no() -> None:
    reply = answer("T04", "The Miragaia room is taken for 7–9 April, so I haven't booked anything. Want me to look "
                          "for another room near the venue, or ask Sofia whether something frees up?")
    assert decision(reply) == "decline" and reply.message.startswith("No") and not reply.approvals_given
    assert "what I asked for at the start" not in reply.message


def test_a_slash_date_after_its_weekday_is_read_in_the_order_the_weekday_confirms() -> None:
    reply = answer("T11", "Boavista loft (L-102), Wed 4/1 → Sun 4/5: 4 nights × €128 = €512 on the Visa ending 4821. "
                          "Want me to book it?")
    assert reply.approvals_given == ["book-room"], reply.decision
    from pytest_assistant_eval.suites.calibration.readers.dates import find_dates

    assert [d.value for d in find_dates("Thu 4/2 → Sun 4/5, then Mon 3/30")] == ["--04-02", "--04-05", "--03-30"]
