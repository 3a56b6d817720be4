"""A local route without budget, pace or limits keeps out of the ledger (issue 15)."""

from __future__ import annotations

from pytest_assistant_eval.providers.ledger import Ledger
from pytest_assistant_eval.providers.pacing import Pacer

from tests.providers.test_pacing import DAY0, FakeClock

HEADERS = {"x-ratelimit-limit-requests": "20", "x-ratelimit-remaining-requests": "19",
           "x-ratelimit-reset-requests": "10s"}


class CountingLedger(Ledger):
    def __init__(self, path):
        super().__init__(path)
        self.transactions = 0

    def transaction(self):
        self.transactions += 1
        return super().transaction()


class Usage:
    input_tokens = 120


def test_a_local_route_without_budget_or_pace_takes_no_transaction(tmp_path):
    clock = FakeClock()
    ledger = CountingLedger(tmp_path / "ledger.json")
    pacer = Pacer(ledger, "openai-compatible@http://127.0.0.1:8000/v1", local=True, clock=clock, sleep=clock.sleep)
    for _ in range(5):
        pacer.before_request()
        pacer.after_response({}, usage=Usage())
    assert ledger.transactions == 0 and not (tmp_path / "ledger.json").exists()


def test_a_local_route_follows_the_ledger_once_another_worker_learns_a_limit(tmp_path):
    clock = FakeClock()
    route = "openai-compatible@http://127.0.0.1:8000/v1"
    mine = Pacer(CountingLedger(tmp_path / "ledger.json"), route, local=True, clock=clock, sleep=clock.sleep)
    other = Pacer(Ledger(tmp_path / "ledger.json"), route, local=True, clock=clock, sleep=clock.sleep)
    mine.before_request()
    other.before_request()
    other.on_rate_limited(30.0, {})  # the other worker's 429 holds every worker
    mine.before_request()
    assert clock.sleeps and clock.sleeps[-1] >= 29.0
    assert mine.light is False


def test_a_local_route_whose_answers_state_limits_is_paced_from_then_on(tmp_path):
    clock = FakeClock()
    pacer = Pacer(Ledger(tmp_path / "ledger.json"), "vllm@http://127.0.0.1:8000/v1", local=True, clock=clock,
                  sleep=clock.sleep)
    pacer.before_request()
    pacer.after_response(HEADERS)
    assert pacer.light is False
    routes = Ledger(tmp_path / "ledger.json").read()["routes"]
    assert routes["vllm@http://127.0.0.1:8000/v1"]["limits"]["requests"]["limit"] == 20.0


def test_a_budgeted_route_takes_one_transaction_per_request_that_does_not_wait(tmp_path):
    clock = FakeClock()
    ledger = CountingLedger(tmp_path / "ledger.json")
    pacer = Pacer(ledger, "openrouter", max_requests_per_day=45, clock=clock, sleep=clock.sleep)
    for _ in range(4):
        pacer.before_request()
        pacer.after_response({}, usage=Usage())
        clock.now += 5.0
    assert ledger.transactions == 4
    assert ledger.requests_on("openrouter", "2026-11-30") == 4 or sum(
        ledger.requests_by_day("openrouter").values()) == 4


def test_the_estimate_ratio_is_written_with_the_next_booking(tmp_path):
    clock = FakeClock(DAY0)
    ledger = Ledger(tmp_path / "ledger.json")
    pacer = Pacer(ledger, "openrouter", max_requests_per_day=45, clock=clock, sleep=clock.sleep)
    from pytest_assistant_eval.providers.pacing import Need

    pacer.before_request(Need(100, 10))
    pacer.after_response({}, usage=Usage())
    pacer.before_request(Need(100, 10))
    assert ledger.read()["routes"]["openrouter"]["estimate_ratio"] == 1.2
