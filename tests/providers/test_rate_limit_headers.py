"""Reading each provider's rate-limit statements: reset formats, header families, windows."""

from __future__ import annotations

import pytest

from pytest_assistant_eval.providers.ratelimits import (
    Observation,
    describe_limit,
    observations_from_headers,
    observations_from_quota,
    reset_seconds,
    snap_window,
    window_estimate,
)

NOW = 1_780_000_000.0


@pytest.mark.parametrize("value, seconds", [
    ("6m0s", 360.0), ("1s", 1.0), ("20ms", 0.02), ("2m59.56s", 179.56), ("1h0m0s", 3600.0),
    ("7.66s", 7.66), ("12", 12.0), ("0.5", 0.5),
    (str(int((NOW + 42) * 1000)), 42.0),  # OpenRouter: epoch milliseconds
    (str(int(NOW + 30)), 30.0),  # epoch seconds
    ("2026-05-28T20:27:10Z", None),  # RFC 3339 (Anthropic), checked below against its own timestamp
    ("garbage", None),
])
def test_a_reset_is_read_in_every_format_providers_use(value, seconds):
    if value.endswith("Z"):
        from datetime import datetime

        expected = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() - (NOW - 5)
        assert reset_seconds(value, NOW - 5) == pytest.approx(max(0.0, expected))
        return
    assert reset_seconds(value, NOW) == (pytest.approx(seconds) if seconds is not None else None)


def test_an_http_date_reset_is_read():
    assert reset_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470.0) == pytest.approx(10.0)


def test_openai_and_groq_headers_give_requests_and_tokens():
    found = observations_from_headers({
        "x-ratelimit-limit-requests": "14400", "x-ratelimit-remaining-requests": "14370",
        "x-ratelimit-reset-requests": "2m59.56s", "x-ratelimit-limit-tokens": "18000",
        "x-ratelimit-remaining-tokens": "17997", "x-ratelimit-reset-tokens": "7.66s"}, NOW)
    assert sorted(found, key=lambda o: o.dimension) == [
        Observation("requests", 14400, 14370, pytest.approx(179.56)),
        Observation("tokens", 18000, 17997, pytest.approx(7.66))]


def test_anthropic_headers_give_every_dimension_and_token_remainders_lose_their_rounding():
    found = {o.dimension: o for o in observations_from_headers({
        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
        "anthropic-ratelimit-requests-reset": "2026-05-28T20:26:41Z",
        "anthropic-ratelimit-input-tokens-limit": "30000", "anthropic-ratelimit-input-tokens-remaining": "27000",
        "anthropic-ratelimit-input-tokens-reset": "2026-05-28T20:26:46Z",
        "anthropic-ratelimit-output-tokens-limit": "8000", "anthropic-ratelimit-output-tokens-remaining": "8000",
        "anthropic-ratelimit-output-tokens-reset": "2026-05-28T20:26:40Z"}, NOW)}
    assert set(found) == {"requests", "input_tokens", "output_tokens"}
    assert found["requests"].remaining == 49
    assert found["input_tokens"].remaining == 26500  # "nearest thousand": half of one is taken off


def test_openrouter_headers_are_requests_with_an_epoch_millisecond_reset():
    [found] = observations_from_headers({"x-ratelimit-limit": "20", "x-ratelimit-remaining": "0",
                                         "x-ratelimit-reset": str(int((NOW + 55) * 1000))}, NOW)
    assert (found.dimension, found.limit, found.remaining) == ("requests", 20, 0)
    assert found.reset == pytest.approx(55.0)


def test_headers_of_other_kinds_state_nothing():
    assert observations_from_headers({"retry-after": "3", "content-type": "application/json"}, NOW) == []
    assert observations_from_headers(None, NOW) == []


def test_a_gemini_quota_states_its_limit_and_window():
    per_minute = observations_from_quota({"quota_id": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                                          "metric": "x/generate_content_free_tier_requests", "value": "10"}, 12.0)
    assert per_minute == [Observation("requests", 10, 0.0, 12.0, 60.0)]
    tokens = observations_from_quota({"quota_id": "GenerateContentInputTokensPerModelPerMinute-FreeTier",
                                       "metric": "generate_content_free_tier_input_token_count", "value": "16000"}, 3)
    assert tokens[0].dimension == "input_tokens" and tokens[0].window == 60.0
    daily = observations_from_quota({"quota_id": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                                     "value": "250"}, None)
    assert daily[0].window == 86400.0


@pytest.mark.parametrize("seconds, upward, snapped", [
    (10.02, False, 10.0), (59.1, False, 60.0), (86390.0, False, 86400.0), (37.26, False, 37.3),
    (55.0, True, 60.0), (4.2, True, 10.0), (None, False, None)])
def test_learned_windows_snap_to_the_windows_limits_are_stated_in(seconds, upward, snapped):
    assert snap_window(seconds, upward=upward) == snapped


def test_the_window_of_a_refilling_bucket_comes_from_its_reset_and_what_was_used():
    # Groq's example: 30 of 14400 used, full again in 3 minutes: 14400 a day.
    state = {"limit": 14400, "max_reset": 179.56, "min_bucket": 86180.0, "max_bucket": 86400.0, "buckets": 3}
    assert window_estimate(state) == 86400.0
    # OpenAI's example: 1 of 60 used, full again in 1 s: 60 a minute.
    assert window_estimate({"limit": 60, "max_reset": 1.0, "min_bucket": 59.0, "max_bucket": 60.0, "buckets": 4}) == 60.0
    # A fixed window early on: the figures disagree, the reset says 10 s.
    assert window_estimate({"limit": 20, "max_reset": 9.8, "min_bucket": 60.0, "max_bucket": 196.0, "buckets": 3}) == 10.0


def test_a_stated_window_wins_and_limits_read_as_people_say_them():
    assert window_estimate({"window": 60.0, "max_reset": 3.0}) == 60.0
    assert describe_limit("requests", 20, 10.0) == "20 requests per 10 s"
    assert describe_limit("input_tokens", 30000, 60.0) == "30000 input tokens per min"
    assert describe_limit("requests", 14400, 86400.0) == "14400 requests per day"
