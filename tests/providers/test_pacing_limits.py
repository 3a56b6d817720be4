"""Pacing from the provider's own statements: spreading what remains, holds, tokens, the race."""

from __future__ import annotations

import pytest

from pytest_assistant_eval.providers.ledger import Ledger
from pytest_assistant_eval.providers.pacing import RESET_SLACK, Need, learned_limits, utc_day
# The fake clock, its ledger and pacer are test_pacing's: one set of fixtures for both files.
from tests.providers.test_pacing import DAY0, FakeClock, clock, ledger, pacer_for  # noqa: F401

ROUTE = "openai@https://api.example/v1"




def openai(remaining, reset, limit=20, dim="requests"):
    return {f"x-ratelimit-limit-{dim}": str(limit), f"x-ratelimit-remaining-{dim}": str(remaining),
            f"x-ratelimit-reset-{dim}": reset}


def test_what_remains_is_spread_over_the_time_to_the_reset(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.after_response(openai(9, "10s"))  # 9 left for the next 10 s: one every 1 s
    pacer.before_request()
    assert clock.sleeps == [pytest.approx(1.0)]


def test_the_last_unit_of_a_window_waits_for_its_reset(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.after_response(openai(1, "4s"))
    pacer.before_request()  # the last one: half way
    pacer.before_request()  # nothing left: the reset
    assert clock.sleeps == [pytest.approx(2.0), pytest.approx(2.0 + RESET_SLACK)]


def test_after_a_reset_starts_are_spaced_by_the_learned_window(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.after_response(openai(19, "10s"))  # the first answer of a fresh 10 s window of 20
    pacer.after_response(openai(0, "0.5s"))  # (a later answer:) all used, resets in half a second
    pacer.before_request()
    pacer.before_request()  # no answer since the reset: 10 s / 20 apart
    assert clock.sleeps == [pytest.approx(0.5 + RESET_SLACK), pytest.approx(0.5)]
    assert learned_limits(Ledger.entry(ledger.read(), ROUTE)) == {"requests": {"limit": 20, "window_s": 10.0}}


def test_a_daily_request_limit_is_learned_as_daily(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.after_response(openai(14370, "2m59.56s", limit=14400))
    pacer.before_request()
    pacer.after_response(openai(14369, "3m5.56s", limit=14400))
    pacer.after_response(openai(14368, "3m11.5s", limit=14400))
    assert clock.sleeps == [] or clock.sleeps[0] < 0.1  # thousands are left: no real wait
    assert learned_limits(Ledger.entry(ledger.read(), ROUTE))["requests"]["window_s"] == 86400.0


def test_tokens_are_paced_by_the_estimated_tokens_of_the_next_request(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request(Need(1000, 0))
    pacer.after_response({**openai(99, "60s", limit=100), **openai(5000, "20s", limit=10000, dim="tokens")})
    pacer.before_request(Need(4000, 1000))  # 5000 of the 5000 left: spread, 20 s * 5000 / 10000
    assert clock.sleeps == [pytest.approx(10.0)]
    pacer.before_request(Need(100, 0))  # nothing left now: the token window's reset
    assert clock.sleeps[-1] == pytest.approx(10.0 + RESET_SLACK)


def test_the_token_estimate_is_corrected_by_what_the_provider_counted(ledger, clock):
    class Usage:
        input_tokens = 1500

    pacer = pacer_for(ledger, clock)
    pacer.before_request(Need(1000, 0))
    pacer.after_response(openai(3000, "30s", limit=6000, dim="tokens"), usage=Usage())
    pacer.before_request(Need(1000, 0))  # counts as 1500: 30 s * 1500 / (3000 + 1500)
    assert clock.sleeps == [pytest.approx(10.0)]
    assert Ledger.entry(ledger.read(), ROUTE)["estimate_ratio"] == 1.5


def test_bookings_made_after_a_request_are_taken_off_what_its_answer_reports(ledger, clock):
    first, second = pacer_for(ledger, clock), pacer_for(ledger, clock)
    first.before_request()
    second.before_request()  # booked before the first answer arrived
    first.after_response(openai(1, "8s"))  # the provider had not seen the second: 1 left is 0 left
    first.before_request()
    assert clock.sleeps == [pytest.approx(8.0 + RESET_SLACK)]


def test_a_hold_learned_while_a_start_was_booked_reaches_that_start(ledger, clock):
    """The race of two workers: B booked a start, then A learned that nothing is left."""
    a, b = pacer_for(ledger, clock, pace=0.0), pacer_for(ledger, clock)
    a.before_request()
    a.after_response(openai(5, "10s"))
    told = []

    def sleep_while_a_learns(seconds):
        clock.sleep(seconds)
        if not told:  # during B's wait for its booked slot, A's answer says nothing is left
            told.append(True)
            a.after_response(openai(0, "6s"))

    b.sleep = sleep_while_a_learns
    start = b.before_request()
    booked = DAY0 + 10.0 / 6  # what B booked: 10 s spread over the 5 left (+1)
    assert clock.sleeps[0] == pytest.approx(10.0 / 6)
    assert start == pytest.approx(booked + 6.0 + RESET_SLACK)  # checked again before sending: moved to the reset


def test_a_429_holds_the_route_counts_once_and_learns_what_it_states(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    reset_ms = str(int((DAY0 + 55) * 1000))
    pacer.on_rate_limited(55.0, {"x-ratelimit-limit": "20", "x-ratelimit-remaining": "0",
                                 "x-ratelimit-reset": reset_ms})
    pacer.before_request()
    assert clock.sleeps == [pytest.approx(55.0)]  # the Retry-After and the reset agree
    pacer.before_request()  # after the reset: a minute over 20, OpenRouter's free limit
    assert clock.sleeps[-1] == pytest.approx(3.0)
    entry = Ledger.entry(ledger.read(), ROUTE)
    assert entry["rate_limited_by_day"] == {utc_day(DAY0): 1}
    assert learned_limits(entry) == {"requests": {"limit": 20, "window_s": 60.0}}


def test_a_gemini_quota_refusal_paces_by_its_stated_window(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.on_rate_limited(12.0, {}, quota={"quota_id": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                                           "value": "10"})
    pacer.before_request()
    pacer.before_request()
    assert clock.sleeps == [pytest.approx(12.0), pytest.approx(6.0)]
    assert learned_limits(Ledger.entry(ledger.read(), ROUTE)) == {"requests": {"limit": 10, "window_s": 60.0}}


def test_an_answer_from_before_a_reset_already_passed_is_stale(ledger, clock):
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.after_response(openai(0, "1s"))
    pacer.before_request()  # waits for the reset and rolls the window
    pacer.after_response(openai(0, "0s"))  # a late answer about the old window
    pacer.before_request()
    assert clock.sleeps[-1] < 1.0


def test_a_sliding_token_window_is_spaced_by_the_whole_requests_it_holds(ledger, clock):
    """20,000 tokens per 10 s hold ten requests of 1,900, not 10.5: starts 1 s apart, not 0.95 s.

    At 0.95 s an eleventh start falls into some window; with two workers it was moved behind
    the other worker's next booking and each window lost almost two spacings (93.9%).
    """
    pacer = pacer_for(ledger, clock)
    need = Need(1700, 200)
    pacer.before_request(need)
    pacer.after_response(openai(18100, "10s", limit=20000, dim="tokens"))
    pacer.after_response(openai(0, "0.5s", limit=20000, dim="tokens"))
    pacer.before_request(need)  # nothing left until the reset, and then the window's whole count: 10 s / 10
    pacer.before_request(need)  # no answer since the reset: 1 s again
    assert clock.sleeps == [pytest.approx(1.0), pytest.approx(1.0)]


def test_a_bucket_is_still_spaced_by_its_rate(ledger, clock):
    """A bucket refills continuously: 1,900 of 20,000 per 10 s is one start every 0.95 s."""
    pacer = pacer_for(ledger, clock)
    need = Need(1700, 200)
    pacer.before_request(need)
    for remaining, reset in ((18100, "0.95s"), (16200, "1.9s"), (14300, "2.85s")):  # 10 s to refill, each time
        pacer.after_response(openai(remaining, reset, limit=20000, dim="tokens"))
    clock.now += 3.0  # full again
    pacer.before_request(need)
    pacer.before_request(need)  # no answer since it was full: its rate
    assert clock.sleeps == [pytest.approx(0.95)]


def openrouter_429(clock, seconds):
    """OpenRouter's 429: its limit, nothing left, the reset in epoch milliseconds."""
    return {"X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int((clock() + seconds) * 1000))}


def test_a_start_booked_for_now_is_checked_against_a_429_recorded_before_it_is_sent(tmp_path, clock):
    """OpenRouter says nothing before its first 429: A's 429 lands in the ledger just after B booked
    a start for now. B must not send into the hold (it was the third 429 of a two-worker run)."""
    path = tmp_path / "ledger.json"
    a, b = pacer_for(Ledger(path), clock), pacer_for(Ledger(path), clock)
    a.before_request()
    looked = b._file_state
    a_learns = [lambda: a.on_rate_limited(7.0, openrouter_429(clock, 6.5))]

    def a_writes_right_after_b_booked():
        state = looked()  # B's look at the ledger just after its booking
        while a_learns:
            a_learns.pop()()
        return state

    b._file_state = a_writes_right_after_b_booked
    start = b.before_request()  # booked for now; A's 429 is recorded before B sends
    assert start == pytest.approx(DAY0 + 6.5 + RESET_SLACK, abs=1e-3)
    assert clock.sleeps == [pytest.approx(6.5 + RESET_SLACK, abs=1e-3)]


def test_a_429_holds_to_its_stated_reset_rather_than_the_rounded_retry_after(ledger, clock):
    """Retry-After is whole seconds rounded up; the reset in milliseconds starts the window on time."""
    pacer = pacer_for(ledger, clock)
    pacer.before_request()
    pacer.on_rate_limited(7.0, openrouter_429(clock, 6.3))
    pacer.before_request()
    assert clock.sleeps == [pytest.approx(6.3 + RESET_SLACK, abs=1e-3)]


def test_a_429_late_in_a_window_does_not_teach_a_short_window(ledger, clock):
    """OpenRouter, 20 per 10 s: 20 served in the first second, the 21st refused 0.24 s before the window ends.

    Its reset alone says "0.24 s" (a 1 s window, and 21 starts early in the next one); the 20
    served starts before it put the window at 1.24 s or more: 10 s. The following windows
    start at the stated reset and a window apart, not where the spacing drifts.
    """
    pacer = pacer_for(ledger, clock, margin=0.03)
    for _ in range(20):
        pacer.before_request()
        pacer.after_response({})  # OpenRouter states nothing on its answers
        clock.now += 0.05
    pacer.before_request()
    pacer.on_rate_limited(1.0, openrouter_429(clock, 0.24))
    reset = DAY0 + 1.0 + 0.24
    starts = [pacer.before_request() for _ in range(21)]
    assert learned_limits(Ledger.entry(ledger.read(), ROUTE)) == {"requests": {"limit": 20, "window_s": 10.0}}
    assert starts[0] == pytest.approx(reset + RESET_SLACK, abs=2e-3)
    assert starts[19] < reset + 10.0  # 20 in the window that begins at the reset
    assert starts[20] == pytest.approx(reset + 10.0 + RESET_SLACK, abs=2e-3)  # the next begins a window later
