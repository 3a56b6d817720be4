"""Pacing and the daily budget: spacing, learning from limits, the ledger shared by processes."""

from __future__ import annotations

import json
import multiprocessing
from functools import partial

import pytest

from pytest_assistant_eval.providers.errors import BudgetUsed
from pytest_assistant_eval.providers.ledger import Ledger, LedgerError
from pytest_assistant_eval.providers.pacing import RESET_SLACK, Pacer, utc_day
from tests.providers.fakes import Answer
from tests.providers.fakes.openai_fake import OpenAIFake
from tests.providers.fakes.workers import paced_requests

DAY0 = 1_780_000_000.0  # some UTC noon-ish instant


class FakeClock:
    def __init__(self, now: float = DAY0) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def ledger(tmp_path):
    return Ledger(tmp_path / "ledger.json")


def pacer_for(ledger, clock, **kwargs):
    kwargs.setdefault("margin", 0.0)
    return Pacer(ledger, "openai@https://api.example/v1", clock=clock, sleep=clock.sleep, **kwargs)


def test_pace_keeps_that_many_seconds_between_starts(ledger, clock):
    pacer = pacer_for(ledger, clock, pace=2.0)
    starts = [pacer.before_request() for _ in range(3)]
    assert starts == [DAY0, DAY0 + 2, DAY0 + 4]
    assert clock.sleeps == [2.0, 2.0]


def test_the_spacing_is_the_largest_of_pace_and_start_interval(ledger, clock):
    pacer = pacer_for(ledger, clock, pace=1.0, start_interval=3.0)
    pacer.before_request()
    pacer.before_request()
    assert clock.sleeps == [3.0]


def test_a_limit_header_alone_says_nothing_about_the_window(ledger, clock):
    # Groq's x-ratelimit-limit-requests is per day, OpenAI's per minute: the number alone sets no pace.
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.after_response({"x-ratelimit-limit-requests": "10"})
    pacer.before_request()
    assert clock.sleeps == []


def test_a_safety_margin_is_added_to_the_start_interval_but_not_to_pace(ledger, clock):
    pacer = Pacer(ledger, "r", pace=2.0, start_interval=1.0, clock=clock, sleep=clock.sleep)
    pacer.before_request(), pacer.before_request()
    assert clock.sleeps == [2.0]
    pacer2 = Pacer(ledger, "r2", start_interval=1.0, clock=clock, sleep=clock.sleep)
    pacer2.before_request(), pacer2.before_request()
    assert clock.sleeps[-1] == pytest.approx(1.03)


def test_a_rate_limit_holds_every_pacer_of_the_route_until_retry_after(ledger, clock):
    first, second = pacer_for(ledger, clock), pacer_for(ledger, clock)
    first.before_request()
    first.on_rate_limited(5.0, {})
    second.before_request()
    assert clock.sleeps == [5.0]


def test_a_rate_limit_without_stated_limits_learns_a_longer_interval(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.on_rate_limited(None, {})
    pacer.before_request()
    pacer.before_request()
    assert clock.sleeps == [1.0, 1.0]
    pacer.on_rate_limited(None, {})
    pacer.before_request()
    assert clock.sleeps[-1] == 1.5


def test_nothing_remaining_holds_until_the_reset(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.after_response({"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
                          "x-ratelimit-reset-requests": "1m30s"})
    pacer.before_request()
    assert clock.sleeps == [pytest.approx(90.0 + RESET_SLACK)]


def test_the_daily_budget_is_checked_before_every_request(ledger, clock):
    pacer = pacer_for(ledger, clock, max_requests_per_day=3)
    for _ in range(3):
        pacer.before_request()
    with pytest.raises(BudgetUsed) as caught:
        pacer.before_request()
    assert str(caught.value) == "Daily request budget used. Run again with --resume --accept-data-notice tomorrow."
    assert caught.value.code == "daily_quota" and caught.value.kind == "temporary"
    assert pacer.requests_today() == 3
    clock.now += 86400  # the next UTC day starts a new budget
    pacer.before_request()
    assert pacer.requests_by_day() == {utc_day(DAY0): 3, utc_day(DAY0 + 86400): 1}


def test_a_local_models_budget_message_has_no_notice_flag(ledger, clock):
    pacer = pacer_for(ledger, clock, max_requests_per_day=0, local=True)
    with pytest.raises(BudgetUsed, match=r"^Daily request budget used\. Run again with --resume tomorrow\.$"):
        pacer.before_request()


def test_the_ledger_is_plain_json_keyed_by_route_and_unreadable_ledgers_are_refused(ledger, clock):
    pacer_for(ledger, clock).before_request()
    data = json.loads(ledger.path.read_text())
    assert data["routes"]["openai@https://api.example/v1"]["requests_by_day"] == {utc_day(DAY0): 1}
    assert not [p for p in ledger.path.parent.iterdir() if p.name.endswith(".tmp")]
    ledger.path.write_text("{torn")
    with pytest.raises(LedgerError):
        pacer_for(ledger, clock).before_request()


def _run_two(tmp_path, fake, counts, **kwargs):
    ctx = multiprocessing.get_context("spawn")
    route = "openai-compatible@" + fake.url + "/v1"
    work = partial(paced_requests, str(tmp_path / "ledger.json"), route, fake.url + "/v1", **kwargs)
    with ctx.Pool(2) as pool:
        return pool.map(work, counts)


def test_two_processes_sharing_a_route_never_exceed_the_allowed_rate(tmp_path, make_fake):
    fake = make_fake(OpenAIFake, rate_window=(20, 2.0), default=Answer(text="ok"))
    # A wider margin than the default 3% keeps this test calm on a loaded machine; the benchmark uses 3%.
    results = _run_two(tmp_path, fake, [18, 18], margin=0.08)
    assert fake.rate_limited == 0
    assert sum(r["ok"] for r in results) == 36 and not any(r["errors"] for r in results)
    arrivals = sorted(r.at for r in fake.requests)
    assert all(later - earlier > 2.0 for earlier, later in zip(arrivals, arrivals[20:]))


def test_a_budget_of_45_across_two_processes_lets_exactly_45_requests_through(tmp_path, make_fake):
    # Each reply takes 50 ms, as a provider's would, so the two processes' requests overlap and both
    # meet the budget (a fake answering at once let the first send its 40 before the second started).
    fake = make_fake(OpenAIFake, default=Answer(text="ok"), reply_delay=0.05)
    results = _run_two(tmp_path, fake, [40, 40], max_per_day=45)
    assert len(fake.requests) == 45
    assert sum(r["ok"] for r in results) == 45
    assert all(r["budget_used"] for r in results)
    ledger = Ledger(tmp_path / "ledger.json")
    [counts] = [entry["requests_by_day"] for entry in ledger.read()["routes"].values()]
    assert list(counts.values()) == [45]
