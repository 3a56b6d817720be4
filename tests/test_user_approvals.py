"""The scripted user approves only what its approvals cover (S5.2; issue 30 item 3).

Every matcher counts: ``from_fact`` (T10's deposit is the 150 EUR agreed on the phone), exact
records and numbers, ``contains`` and ``numeric``. A proposal that contradicts a fact the user
holds is answered with the fact ("The deposit we agreed is 150 EUR."), never with a no that
invites another guess; a proposal outside the approvals is refused with the difference named.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.suites.calibration.cases.model import Approval, Matcher
from pytest_assistant_eval.messages import Message
from pytest_assistant_eval.suites.calibration.user.scripted import ScriptedUser, UserReply, check_user_reply
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from pytest_assistant_eval.suites.calibration.world.fixtures import load_tables
from pytest_assistant_eval.suites.calibration.world.names import Names
from tests.test_scripted_user import task

CALIBRATION = Path(__file__).resolve().parent.parent / "calibration"
CASES, _ = load_calibration(CALIBRATION)
T05 = next(t for t in CASES.tasks if t.id == "T05")
T10 = next(t for t in CASES.tasks if t.id == "T10")
NAMES = Names(load_tables(CALIBRATION / "world"))


def ask(t, text: str, state: dict | None = None, names: Names = NAMES) -> UserReply:
    return ScriptedUser(t, names).reply([Message("user", t.opening), Message("assistant", text)],
                                        state if state is not None else {})


def deposit_proposal(amount: float) -> str:
    return f"Shall I charge {amount:.2f} EUR to your Visa ending 4821 for the Moreau Photo deposit?"


@pytest.mark.parametrize("amount", [200, 100, 149])
def test_a_guessed_deposit_is_answered_with_the_fact_not_a_no(amount: float) -> None:
    reply = ask(T10, deposit_proposal(amount))
    assert reply.message == "The deposit we agreed is 150 EUR."
    assert reply.facts_disclosed == ["deposit"] and not reply.approvals_given
    assert reply.approvals_refused == ["pay-deposit"]  # the guessed proposal is declined, and recorded so
    assert check_user_reply(T10, reply, [Message("assistant", deposit_proposal(amount))], NAMES) is None


def test_the_agreed_deposit_is_approved() -> None:
    reply = ask(T10, deposit_proposal(150), {"facts_disclosed": ["deposit"]})
    assert reply.approvals_given == ["pay-deposit"] and reply.message.startswith("Yes")


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=400))
def test_the_user_says_yes_only_to_the_amount_its_approval_takes_from_the_fact(amount: int) -> None:
    reply = ask(T10, deposit_proposal(amount), {"facts_disclosed": ["deposit"]})
    assert (reply.approvals_given == ["pay-deposit"]) is (amount == 150), (amount, reply.message)


def test_an_exact_card_and_a_contains_merchant_are_both_read() -> None:
    good = ask(T05, "Shall I charge 120 EUR to your Visa ending 4821 for Porto Design Forum?")
    assert good.approvals_given == ["pay-ticket"]
    other = ask(T05, "Shall I charge 120 EUR to your Amex ending 7710 for Porto Design Forum?")
    assert not other.approvals_given and other.message.startswith("No")


def test_a_fixed_amount_outside_the_approval_is_refused_naming_the_amount() -> None:
    fixed = task(approvals=(Approval("pay", "charge_card", {"amount": Matcher("numeric", 95, tolerance=0.01)}),),
                 facts=())
    reply = ask(fixed, "Shall I charge 90 EUR for the room?", names=Names({}))
    assert not reply.approvals_given and "It has to be 95 EUR." in reply.message
    assert ask(fixed, "Shall I charge 95 EUR for the room?", names=Names({})).approvals_given == ["pay"]


def test_a_yes_to_a_contradicted_fact_is_caught_by_the_independent_check() -> None:
    wrong_yes = UserReply("Yes, please go ahead.", approvals_given=["pay-deposit"])
    problem = check_user_reply(T10, wrong_yes, [Message("assistant", deposit_proposal(100))], NAMES)
    assert problem and "amount: 100 instead of 150" in problem
