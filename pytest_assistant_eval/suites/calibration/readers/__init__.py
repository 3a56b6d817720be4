"""Reading text as a careful person does: numbers with units, dates and times, wording.

Shared by the simulated user (which reads an assistant's proposal before answering it),
the reference assistants and the checks (which read answers and reports), so all three
understand the same forms. It only reads; it never decides an answer or a verdict.
"""


def warm_up() -> None:
    """Build the readers' one-off parts now: pint's unit registry and dateparser (about 0.4 s of CPU).

    grade-ai calls it in the parent just before it forks its grading workers, so they inherit
    both instead of each building its own (issue 32). The month names of every language
    (``readings._month_names``) stay lazy: few answers need them.
    """
    from pytest_assistant_eval.suites.calibration.readers.relative_dates import _parse
    from pytest_assistant_eval.suites.calibration.readers.units import _pint
    from pytest_assistant_eval.suites.calibration.world.clock import NOW

    _pint()
    _parse("tomorrow", NOW.replace(tzinfo=None).isoformat())
