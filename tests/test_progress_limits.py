"""The progress line's waiting, 429s, requests today and learned limits (S4.15, issue 17)."""

from __future__ import annotations

import json

from pytest_assistant_eval.run.progress import Progress
from pytest_assistant_eval.providers.ledger import Ledger
from pytest_assistant_eval.providers.pacing import Pacer, ledger_view
from pytest_assistant_eval.results.usage import add_rate_limits
from tests.providers.test_pacing import DAY0, FakeClock


def test_workers_waiting_side_by_side_are_not_added_up():
    progress = Progress(total=4)
    for worker, seconds in [("gw0", 10.0), ("gw1", 9.0), ("gw0", 5.0), ("gw1", 4.0)]:
        progress.add_wait(worker, seconds)
    assert progress.waited == 15.0 and progress.last_wait == 4.0


def test_requests_today_and_429s_come_from_the_ledger_and_a_learned_limit_is_shown_once(tmp_path):
    clock = FakeClock()
    pacer = Pacer(Ledger(tmp_path / "ledger.json"), "openai@https://api.example/v1", clock=clock, sleep=clock.sleep)
    pacer.before_request()
    pacer.after_response({"x-ratelimit-limit-requests": "20", "x-ratelimit-remaining-requests": "19",
                          "x-ratelimit-reset-requests": "10s"})
    pacer.before_request()
    pacer.on_rate_limited(2.0, {})
    view = ledger_view(tmp_path / "ledger.json", now=DAY0)
    progress = Progress(total=3)
    progress.from_ledger(view.requests_today, view.rate_limited_today, view.limits)
    first = progress.wait_text()
    assert "2 request(s) today" in first and "1 refused for rate (429)" in first
    assert "openai@https://api.example/v1 allows 20 requests per 10 s" in first
    progress.from_ledger(view.requests_today, view.rate_limited_today, view.limits)
    assert "allows" not in progress.wait_text()


def test_the_learned_limits_go_into_the_latest_run_entry(tmp_path):
    run_json = tmp_path / "run.json"
    from pytest_assistant_eval.records import RUN_FORMAT

    run_json.write_text(json.dumps({"format": RUN_FORMAT, "runs": [{"started": "a"}, {"started": "b"}]}))
    add_rate_limits(run_json, {"requests": {"limit": 20.0, "window_s": 10.0}})
    runs = json.loads(run_json.read_text())["runs"]
    assert "rate_limits" not in runs[0]
    assert runs[1]["rate_limits"] == {"requests": {"limit": 20.0, "window_s": 10.0}}
