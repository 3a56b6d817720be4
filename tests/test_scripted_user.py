"""The scripted simulated user and the independent check of its answers."""

from __future__ import annotations

from pytest_assistant_eval.suites.calibration.cases.model import Approval, Matcher, Task, UserFact
from pytest_assistant_eval.messages import Message
from pytest_assistant_eval.suites.calibration.user.scripted import ScriptedUser, UserReply, approval_covers, check_user_reply


def task(**changes) -> Task:
    base = dict(
        id="T99", title="t", variant="base", opening="Book L-101 for me.", persona="p",
        facts=(UserFact("arrival", "your arrival date", "2026-04-01", ("arrival", "arrive")),),
        approvals=(Approval("book", "book_listing", {"listing_id": Matcher("exact", "L-101")}, 300.0, "EUR"),),
        required_actions=(), expected_state=(), restrictions=(), checks=(), lookups=(),
    )
    base.update(changes)
    return Task(**base)


def ask(user: ScriptedUser, text: str, state: dict) -> UserReply:
    return user.reply([Message("user", "hi"), Message("assistant", text)], state)


def test_a_fact_is_given_only_when_asked_for() -> None:
    user, state = ScriptedUser(task()), {}
    assert ask(user, "What is your budget?", state).facts_disclosed == []
    reply = ask(user, "When do you arrive?", state)
    assert reply.facts_disclosed == ["arrival"] and "2026-04-01" in reply.message


def test_an_approval_within_its_conditions_is_given() -> None:
    reply = ask(ScriptedUser(task()), "May I book L-101 from 2026-04-01 to 2026-04-03, for 190.00 EUR in total?", {})
    assert reply.approvals_given == ["book"] and reply.message.startswith("Yes")


def test_an_approval_over_its_amount_is_refused() -> None:
    reply = ask(ScriptedUser(task()), "May I book L-101, for 390.00 EUR in total?", {})
    assert reply.approvals_given == [] and reply.approvals_refused == ["book"]


def test_a_money_action_proposed_without_its_cost_is_not_approved() -> None:
    reply = ask(ScriptedUser(task()), "May I book L-101?", {})
    assert reply.approvals_given == []


def test_a_proposal_for_another_listing_is_not_covered() -> None:
    reply = ask(ScriptedUser(task()), "May I book L-102, for 90.00 EUR in total?", {})
    assert reply.approvals_given == [] and reply.approvals_refused == []


def test_a_report_without_a_question_ends_the_conversation() -> None:
    assert ask(ScriptedUser(task()), "I booked L-101.", {}).done


def test_the_independent_check_flags_a_fact_or_approval_the_task_does_not_have() -> None:
    t = task()
    # Issue 30: a disclosed fact must be stated with the task's value ("ok" alone no longer passes).
    assert check_user_reply(t, UserReply("ok, I arrive 2026-04-01", facts_disclosed=["arrival"],
                                         approvals_given=["book"])) is None
    assert "disclosed arrival" in check_user_reply(t, UserReply("I arrive 2026-04-03", facts_disclosed=["arrival"]))
    assert "fact" in check_user_reply(t, UserReply("ok", facts_disclosed=["pin"]))
    assert "approval" in check_user_reply(t, UserReply("ok", approvals_given=["charge"]))


def test_approval_covers_checks_tool_arguments_and_amount() -> None:
    approval = task().approvals[0]
    assert approval_covers(approval, "book_listing", {"listing_id": "L-101"}, 190.0)
    assert not approval_covers(approval, "book_listing", {"listing_id": "L-102"}, 190.0)
    assert not approval_covers(approval, "book_listing", {"listing_id": "L-101"}, 301.0)
    assert not approval_covers(approval, "charge_card", {"listing_id": "L-101"}, 10.0)
