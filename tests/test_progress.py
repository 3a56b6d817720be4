"""The running tally of a run (S4.15)."""

from __future__ import annotations

from pytest_assistant_eval.run.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_line_counts_done_kept_not_applicable_skipped_and_left():
    progress = Progress(total=5)
    progress.add("done", "passed")
    progress.add("kept", "passed", "G05__basic__r1: kept up to turn 1, request 2", cell="G05__basic__r1",
                  code="overloaded")
    progress.add("na", "passed")
    progress.add("skipped", "passed")
    line = progress.line()
    assert "4/5 cells · done 1 · kept 1 · unsaved 0 · n/a 1 · skipped 1" in line and line.endswith("left 1")


def test_a_line_is_printed_at_most_every_few_seconds_and_the_last_one_only_in_the_summary():
    clock = Clock()
    progress = Progress(total=3, every_seconds=2.0, clock=clock)
    clock.now = 5.0
    progress.add("done", "passed")
    assert progress.tick() is not None
    clock.now = 5.5
    progress.add("done", "passed")
    assert progress.tick() is None
    clock.now = 9.6
    progress.add("done", "passed")
    assert progress.tick() is None  # the closing tally is printed once, by the summary
    assert progress.summary_lines()[0] == progress.line()


def test_unsaved_cells_have_their_own_column():
    progress = Progress(total=3)
    progress.add("unsaved", "passed", "G01__basic__r1: nothing was saved", cell="G01__basic__r1", code="key")
    progress.add("done", "passed")
    assert "2/3 cells · done 1 · kept 0 · unsaved 1 ·" in progress.line()


def test_requests_and_waits_are_shown_when_there_are_any():
    progress = Progress(total=1)
    assert "request" not in progress.line()
    progress.requests_today, progress.waited, progress.last_wait = 7, 12.0, 3.0
    assert "7 request(s) today · waited 12 s for pace, rate limits and retries (last cell 3.0 s)" in progress.line()


def test_cells_kept_for_unreadable_tool_calls_are_named_together_at_the_end():
    progress = Progress(total=2)
    for cell in ("G02__basic__r1", "G01__basic__r1"):
        progress.add("kept", "passed", f"{cell}: kept", cell=cell, code="tool_call_unreadable")
    assert progress.summary_lines()[-1] == ("2 cell(s) kept after a tool call the service could not read: "
                                            "G01__basic__r1, G02__basic__r1; run again with --resume to continue them.")
    assert progress.left_kept_or_unsaved() and not progress.quota_stopped()


def test_a_used_daily_budget_is_the_only_reason_left_so_the_run_is_no_failure():
    progress = Progress(total=2)
    progress.add("kept", "passed", "x", cell="G01__basic__r1", code="daily_quota")
    progress.add("left", "passed", "y", cell="G02__basic__r1", code="daily_quota")
    assert progress.quota_stopped()
    assert "Daily request budget used. Run again with --resume --accept-data-notice tomorrow." in progress.summary_lines()
    progress.add("unsaved", "passed", "z", cell="G03__basic__r1", code="key")
    assert not progress.quota_stopped()
