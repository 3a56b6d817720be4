"""The pytest plugin: options, cell parametrisation, scheduling and reporting.

Hooks stay thin and hand off to ``run.session`` (the one session that plans and runs the cells
of the chosen suite: ``--suite NAME``, docs/suites.md) and ``progress`` (the running tally).
Loaded only on request (``-p assistant_eval``, as ``calibration/pytest.ini`` does), never
through an entry point.

Size: the options, the parametrisation, xdist scheduling, the writer lock, the report's
redaction and the progress reporter meet here, each a few lines of hook that delegate.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval import option_ranges as ranges

from pytest_assistant_eval.run import session as runner
from pytest_assistant_eval.run.progress import Progress
from pytest_assistant_eval.run.results_folder import check_run_folders, refuse_grading_folder
from pytest_assistant_eval.secret import Secrets
from pytest_assistant_eval.run.report_redaction import guard_showlocals, redact_report
from pytest_assistant_eval.run.scheduling import RouteScheduling, scope_for
from pytest_assistant_eval.results.writer_lock import FolderInUse, WriterLock, check_under

SESSION_KEY = pytest.StashKey["runner.RunSession"]()
LOCKS_KEY = pytest.StashKey[list]()  # the controller's writer locks, one per results folder (writer_lock.py)
WRITER_TOKEN = "assistant_eval_writer"  # the workerinput key: the token of the lock the controller holds
PROGRESS_KEY = pytest.StashKey[Progress]()
STATUS_PROPERTY = "assistant_eval_status"
CUSTOM_OUTCOMES = {"kept": ("kept", "K", "KEPT"), "na": ("na", "N", "NOT APPLICABLE"), "left": ("left", "L", "LEFT"),
                   "skipped": ("skipped-by-owner", "S", "SKIPPED BY OWNER"), "unsaved": ("unsaved", "U", "UNSAVED")}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assistant-eval", "pytest-assistant-eval: run assistants against the grounding world")
    group.addoption("--suite", default=None, metavar="NAME[:PARTS]",
                    help="the suite whose cells run: calibration (default; needs --world) or agentdojo "
                         "(agentdojo:banking,slack for some of its suites; docs/suites.md)")
    group.addoption("--world", type=Path, help="the built grounding world (DIR/'Grounding world ä')")
    group.addoption("--provider", help="provider preset for --model (scripted, openai, openrouter, anthropic, gemini, ollama, openai-compatible)")
    group.addoption("--model", action="append", default=[], help="MODEL with --provider, or PRESET:MODEL; repeat for several models")
    group.addoption("--base-url", help="the address of an openai-compatible or ollama server")
    group.addoption("--models", type=Path, default=None, metavar="FILE",
                    help="models to run, one a line: PRESET:MODEL [base_url=URL] (with or instead of --model)")
    group.addoption("--out", type=Path, default=None,
                    help="results folder, a parent folder when several models run "
                         "(default: _eval_reports/results in the current folder, which git ignores)")
    from pytest_assistant_eval.run.model_options import add_pytest_options

    add_pytest_options(group)  # --agent-path, --temperature ... (issue 33)
    group.addoption("--levels", help="comma-separated levels (default: every level in levels.yaml)")
    group.addoption("--repeats", type=ranges.REPEATS, help="repeats per cell (default: 1 per question, each task's own)")
    group.addoption("--resume", action="store_true", help="continue a results folder: finished cells are skipped")
    group.addoption("--accept-data-notice", action="store_true", help="accept the remote provider's data notice for this run only")
    group.addoption("--no-stream", action="store_true", help="ask for whole answers instead of streams")
    group.addoption("--pace", type=ranges.PACE, default=0.0, help="at least this many seconds between request starts")
    group.addoption("--request-deadline", type=ranges.REQUEST_DEADLINE, default=None, metavar="SECONDS",
                    help="the longest one request attempt may take, connect and whole answer (default: 600)")
    group.addoption("--relax-data-collection", action="store_true",
                    help="let a router use providers that keep request data (the data is synthetic; recorded)")
    group.addoption("--max-requests-per-day", type=ranges.REQUESTS_PER_DAY, default=None,
                    help="daily request budget per route (default: 45 for free models, none otherwise)")
    group.addoption("--group-by-route", action="store_true",
                    help="keep every route's cells on one worker, the limit-free scripted ones too")
    group.addoption("--calibration-dir", type=Path, help="the calibration folder (default: the rootdir)")
    group.addoption("--spread-route", action="store_true",
                    help="let one route's cells spread over several workers (they share its pacer and budget)")
    group.addoption("--user-model", default=None, metavar="PRESET:MODEL",
                    help="the model that plays the simulated user of task cells (default: the scripted user)")
    group.addoption("--user-base-url", default=None, help="the address of the --user-model's server")
    group.addoption("--ollama-context", default=None, metavar="LEVEL=TOKENS,...",
                    help="Ollama: one variant per context size, e.g. basic=16384,standard=32768,advanced=65536")
    group.addoption("--allow-cpu-offload", action="store_true",
                    help="Ollama: run a variant that does not fit in GPU memory (each cell records cpu_offload)")
    group.addoption("--skip", action="append", default=[], metavar="CELL",
                    help="record CELL as not applicable (skipped by owner) and run nothing; needs --skip-reason")
    group.addoption("--skip-reason", default="", help="why the --skip cells are skipped")
    group.addoption("--unskip", action="append", default=[], metavar="CELL", help="take a skipped cell back")
    group.addoption("--agentdojo", default=None, metavar="SUITES",
                    help="alias of --suite agentdojo:SUITES: AgentDojo's user tasks, comma-separated suites or 'all' "
                         "(needs the [agentdojo] extra; no --world; docs/agentdojo.md)")
    group.addoption("--agentdojo-crossed", action="store_true",
                    help="with --agentdojo: also every user task crossed with every injection task")
    group.addoption("--agentdojo-attack", default=None, help="with --agentdojo: the attack of crossed cells (default: direct)")
    group.addoption("--agentdojo-cell", action="append", default=[], metavar="CELL",
                    help="with --agentdojo: exactly these cells (AD-banking-0__r1, AD-slack-1-i2__r1; repeatable)")
    group.addoption("--agentdojo-benchmark-version", default=None,
                    help="with --agentdojo: AgentDojo's benchmark version (default: the installed agentdojo's default)")
    group.addoption("--agentdojo-defense", default=None,
                    help="with --agentdojo: one of AgentDojo's defenses (tool_filter, spotlighting_with_delimiting, "
                         "repeat_user_prompt, transformers_pi_detector)")
    group.addoption("--agentdojo-conversation", default="agentdojo", choices=("agentdojo", "ours"),
                    help="with --agentdojo: AgentDojo's conversation (default) or ours, which is not comparable "
                         "with AgentDojo's leaderboard")


def _suite_choice(config: pytest.Config) -> tuple[str, tuple[str, ...]]:
    """``--suite NAME[:PARTS]``, or its alias ``--agentdojo PARTS``: the suite's name and its parts."""
    from pytest_assistant_eval.suites import DEFAULT_SUITE, SUITES

    value, alias = config.getoption("suite"), config.getoption("agentdojo")
    if alias is not None:
        if value and value.partition(":")[0] != "agentdojo":
            raise pytest.UsageError(f"--agentdojo is --suite agentdojo; it cannot go with --suite {value}")
        value = f"agentdojo:{alias}"
    name, _, parts = (value or DEFAULT_SUITE).partition(":")
    if name not in SUITES:
        raise pytest.UsageError(f"--suite: unknown suite {name!r}; the suites are: {', '.join(SUITES)}")
    return name, tuple(x.strip() for x in parts.split(",") if x.strip())


def _deadline(seconds: float | None) -> float | None:
    if seconds is not None and not seconds > 0:
        raise pytest.UsageError("--request-deadline must be a number of seconds above 0")
    return seconds


def _options(config: pytest.Config) -> runner.RunOptions:
    """The run's options for any suite: the one place pytest's config becomes plain values."""
    from pytest_assistant_eval.suites import suite_module

    get = config.getoption
    suite, parts = _suite_choice(config)
    if suite == "calibration" and get("world") is None:
        raise pytest.UsageError("assistant-eval needs --world DIR/'Grounding world ä' "
                                "(build a world first: assistant-eval build --out DIR)")
    try:
        from pytest_assistant_eval.run.model_options import generation_from

        models = runner.parse_models(get("provider"), list(get("model")), get("base_url"), get("models"),
                                     generation_from(get))
    except runner.UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    user_model = _check_user_model(_user_model(config), models, worker=hasattr(config, "workerinput"))
    levels = tuple(x.strip() for x in get("levels").split(",") if x.strip()) if get("levels") else None
    repeats = get("repeats")
    if repeats is not None and repeats < 1:
        raise pytest.UsageError("--repeats must be at least 1")
    out = get("out") or Path.cwd() / "_eval_reports" / ("results" if suite == "calibration" else suite)
    try:
        suite_options = suite_module(suite).suite_options(parts, get)
    except (ValueError, ImportError) as exc:
        raise pytest.UsageError(f"--suite {suite}: {exc}") from None
    return runner.RunOptions(world=get("world") if suite == "calibration" else None, out=out, models=tuple(models),
                             calibration=get("calibration_dir") or config.rootpath, levels=levels,
                             repeats=repeats, resume=get("resume"), stream=not get("no_stream"), pace=get("pace"),
                             accept_data_notice=get("accept_data_notice"),
                             relax_data_collection=get("relax_data_collection"),
                             max_requests_per_day=get("max_requests_per_day"), user_model=user_model,
                             ollama_contexts=_ollama_contexts(get("ollama_context")),
                             allow_cpu_offload=get("allow_cpu_offload"),
                             request_deadline=_deadline(get("request_deadline")),
                             suite=suite, suite_options=suite_options, agent_path=_agent_paths(get))


def _agent_paths(get: Any) -> tuple[Path, ...]:
    from pytest_assistant_eval.run.model_options import agent_paths

    return agent_paths(get)


def _ollama_contexts(value: str | None) -> tuple[tuple[str, int], ...] | None:
    if not value:
        return None
    pairs = []
    for item in value.split(","):
        level, _, tokens = item.strip().partition("=")
        if not level or not tokens.strip().isdigit() or not 0 < int(tokens) <= 100_000_000:
            raise pytest.UsageError(f"--ollama-context: {item.strip()!r} is not LEVEL=TOKENS "
                                    "(e.g. basic=16384,standard=32768,advanced=65536)")
        pairs.append((level.strip(), int(tokens)))
    return tuple(pairs)


def _user_model(config: pytest.Config) -> runner.ModelSpec | None:
    value = config.getoption("user_model")
    if not value:
        if config.getoption("user_setting"):
            raise pytest.UsageError("--user-setting needs --user-model: the scripted user has no generation settings")
        return None
    if ":" not in value:
        raise pytest.UsageError("--user-model needs PRESET:MODEL (e.g. openai:gpt-4.1-mini)")
    from pytest_assistant_eval.run.model_options import user_settings

    try:
        settings = user_settings(config.getoption("user_setting"))
        return runner.parse_models(None, [value], config.getoption("user_base_url"), generation=settings)[0]
    except (runner.UsageError, ValueError) as exc:
        raise pytest.UsageError(f"--user-model: {exc}") from None


def _check_user_model(user_model: runner.ModelSpec | None, models: list[runner.ModelSpec], *, worker: bool
                      ) -> runner.ModelSpec | None:
    """``--user-model`` plays the user of the assistants of a provider; a scripted assistant keeps the
    scripted user (its faults are planted against it). Never silently ignored: a warning says so (issue 29)."""
    if user_model is None:
        return None
    scripted = [f"scripted:{m.model}" for m in models if m.preset == "scripted"]
    unused = bool(scripted) and len(scripted) == len(models)
    # An xdist worker of this run is told by its config, not by PYTEST_XDIST_WORKER: a run started from
    # inside another pytest's worker (a test, a CI job) inherits that variable and would say nothing.
    if not scripted or worker:
        return None if unused else user_model  # said once, by the controller
    given = f"{user_model.preset}:{user_model.model}"
    if unused:  # dropped: no key, no data notice and no request for a user nobody talks to
        print(f"assistant-eval: warning: --user-model {given} is not used: it plays the simulated user of an "
              f"assistant behind a provider, and the built-in assistants ({', '.join(scripted)}) always answer the "
              "scripted user (their faults are planted against it); no request goes to it", file=sys.stderr)
        return None
    else:
        print(f"assistant-eval: warning: --user-model {given} plays the user of the assistants behind a provider "
              f"only; {', '.join(scripted)} keep the scripted user", file=sys.stderr)
    return user_model


def pytest_configure(config: pytest.Config) -> None:
    for name in ("basic", "standard", "advanced", "lookup", "interpret", "diagnose", "scenario", "task"):
        config.addinivalue_line("markers", f"{name}: assistant-eval cells of this level or class")
    calibration = config.getoption("suite") in (None, "calibration") and config.getoption("agentdojo") is None
    if config.option.help or config.option.collectonly and config.getoption("world") is None and calibration:
        return
    if config.getoption("skip") or config.getoption("unskip"):
        if hasattr(config, "workerinput"):
            return
        try:
            lines = runner.skip_cells(_options(config), config.getoption("skip"), config.getoption("skip_reason"),
                                      config.getoption("unskip"))
        except (runner.UsageError, Exception) as exc:  # noqa: BLE001
            raise pytest.UsageError(_refusal_text(exc)) from None
        pytest.exit("\n".join(lines), returncode=0)
    try:
        session = runner.RunSession(_options(config))
    except (runner.UsageError, Exception) as exc:  # noqa: BLE001 - every refusal becomes one clear usage error
        raise pytest.UsageError(_refusal_text(exc)) from None
    for name in getattr(session, "marker_names", ()):
        config.addinivalue_line("markers", f"{name}: AgentDojo cells of this suite (agentdojo: all of them)")
    for spec in session.models.values():
        config.addinivalue_line("markers", f"{_marker(spec.preset)}: cells of this provider preset")
        config.addinivalue_line("markers", f"{_marker(spec.label)}: cells of this model")
    said = guard_showlocals(config.option)  # on workers too: each renders its own cells' tracebacks
    if said and not hasattr(config, "workerinput") and said not in session.start_lines:
        session.start_lines.append(said)
    if not hasattr(config, "workerinput"):
        try:
            _hold_folders(config, session)  # before anything in the folders is cleaned or written
            session.prepare_folders()
        except (runner.UsageError, FolderInUse) as exc:
            _release_folders(config)
            raise pytest.UsageError(str(exc)) from None
        config.stash[PROGRESS_KEY] = Progress(total=len(session.cells))
        config.pluginmanager.register(ProgressReporter(config, config.stash[PROGRESS_KEY]), "assistant-eval-progress")
    else:
        _check_under_controller(config, session)
    config.stash[SESSION_KEY] = session


def _session_folders(session: Any) -> list[Path]:
    return [runner.results_dir(session.options, spec) for spec in session.models.values()]


def _hold_folders(config: pytest.Config, session: Any) -> None:
    """One writer per results folder: the controller holds each folder's lock for the whole run."""
    locks: list[WriterLock] = []
    config.stash[LOCKS_KEY] = locks
    token = uuid.uuid4().hex
    for folder in [session.options.out, *_session_folders(session)]:
        refuse_grading_folder(folder, runner.UsageError)  # before the lock writes a file into it
    check_run_folders(session.options.out, [spec.label for spec in session.models.values()],
                      runner.UsageError, several=len(session.models) > 1)  # the one write rule (issue 31 D/E)
    for folder in _session_folders(session):
        lock = WriterLock(folder)
        lock.acquire(token)
        locks.append(lock)


def _release_folders(config: pytest.Config) -> None:
    for lock in config.stash.get(LOCKS_KEY, []):
        lock.release()
    config.stash[LOCKS_KEY] = []


def _check_under_controller(config: pytest.Config, session: Any) -> None:
    """An xdist worker writes only under its own controller's locks (never beside another run)."""
    token = config.workerinput.get(WRITER_TOKEN)  # type: ignore[attr-defined]
    try:
        for folder in _session_folders(session):
            check_under(folder, token or "")
    except FolderInUse as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist (controller): hand each worker the token of the locks this run holds."""
    locks = node.config.stash.get(LOCKS_KEY, [])
    if locks and locks[0].holder is not None:
        node.workerinput[WRITER_TOKEN] = locks[0].holder.token


def pytest_unconfigure(config: pytest.Config) -> None:
    _release_folders(config)


def _refusal_text(exc: BaseException) -> str:
    name = type(exc).__name__
    if name in ("WorldRefused", "CaseFileErrors", "LevelsError", "UsageError", "WorldError", "SkipError",
                "FolderInUse"):
        return str(exc)
    return f"{name}: {exc}"


def _marker(name: str) -> str:
    return "model_" + "".join(ch if ch.isalnum() else "_" for ch in name)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "cell" not in metafunc.fixturenames:
        return
    session = metafunc.config.stash.get(SESSION_KEY, None)
    if session is None:
        raise pytest.UsageError("the cells need the assistant-eval options: --world, --out and a model")
    metafunc.parametrize("cell", session.cells, ids=_param_ids(session))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is None:
        return
    for item in items:
        cell = getattr(item, "callspec", None) and item.callspec.params.get("cell")
        if cell is None:
            continue
        spec = session.models[cell.model]
        for name in (cell.level, cell.cls, _marker(spec.preset), _marker(spec.label)):
            item.add_marker(getattr(pytest.mark, name))
    items.sort(key=lambda it: it.nodeid)


@pytest.fixture
def assistant_eval_cell_runner(request: pytest.FixtureRequest) -> Any:
    """Runs one cell and records its status on the test report."""
    session = request.config.stash[SESSION_KEY]

    def run(cell: runner.CellSpec) -> runner.CellResult:
        before, waited = session.requests_sent, session.waited_seconds()
        result = session.run_cell(cell)
        request.node.user_properties.append(("assistant_eval_requests", session.requests_sent - before))
        request.node.user_properties.append(("assistant_eval_waited", round(session.waited_seconds() - waited, 3)))
        request.node.user_properties.append((STATUS_PROPERTY, result.status))
        request.node.user_properties.append(("assistant_eval_cell", cell.cell_id))
        if result.message:
            request.node.user_properties.append(("assistant_eval_message", result.message))
        if result.code:
            request.node.user_properties.append(("assistant_eval_code", result.code))
        return result

    return run


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """A cells module is imported without writing its compiled copy beside it: it lives in the
    calibration folder, an input no run writes into (write_rules' rule 2), and Python left
    ``calibration/__pycache__`` there on every run that was allowed to write bytecode."""
    if not isinstance(collector, pytest.Module):
        return (yield)
    before, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = before


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A cell's report is redacted with the run's keys before pytest prints it or writes junit."""
    outcome = yield
    session = item.config.stash.get(SESSION_KEY, None)
    if session is not None:
        redact_report(outcome.get_result(), getattr(session, "_secrets", Secrets)())


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    if report.when != "call":
        return None
    status = dict(report.user_properties).get(STATUS_PROPERTY)
    progress = config.stash.get(PROGRESS_KEY, None)
    if progress is not None and progress.terminal and report.outcome != "failed":
        # On a terminal the tally line is rewritten in place: a letter per cell would break it (issue 24).
        category, _, word = CUSTOM_OUTCOMES.get(status) or (report.outcome, "", report.outcome.upper())
        return category, "", word
    return CUSTOM_OUTCOMES.get(status) if status else None


class ProgressReporter:
    """Registered on the controller only: folds each cell's report into the running tally."""

    def __init__(self, config: pytest.Config, progress: Progress) -> None:
        self.config = config
        self.progress = progress

    @pytest.hookimpl(trylast=True)  # after pytest has written the cell's letter
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        props = dict(report.user_properties)
        gateway = getattr(getattr(report, "node", None), "gateway", None)
        self.progress.add_wait(str(getattr(gateway, "id", "main")), float(props.get("assistant_eval_waited") or 0.0))
        session = self.config.stash.get(SESSION_KEY, None)
        if session is not None:  # S4.15: today's requests and 429s as the shared ledger counts them
            from pytest_assistant_eval.providers.pacing import ledger_view

            view = ledger_view(session.ledger_path())
            self.progress.from_ledger(view.requests_today, view.rate_limited_today, view.limits)
        param = report.nodeid.rsplit("[", 1)[-1].rstrip("]") if report.nodeid.endswith("]") else None
        self.progress.add(props.get(STATUS_PROPERTY), report.outcome, props.get("assistant_eval_message"),
                          cell=props.get("assistant_eval_cell"), code=props.get("assistant_eval_code"),
                          model=self.progress.model_of.get(param or ""))
        line = self.progress.tick()
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        writer = getattr(reporter, "_tw", None)
        if self.progress.terminal and writer is not None and self.progress.finished >= self.progress.total:
            writer.write("\r\x1b[K", flush=True)  # the last cell: the closing tally takes the line's place
            return
        if line and self.progress.terminal and writer is not None:  # one line, rewritten in place
            writer.write(self.progress.in_place(writer.fullwidth), flush=True)
            if isinstance(getattr(writer, "_current_line", None), str):
                # pytest keeps the open line to measure it: a line rewritten 10,000 times must not grow so
                writer._current_line = writer._current_line.rsplit("\r", 1)[-1]
            return
        if line and reporter is not None:
            writer = getattr(reporter, "_tw", None)
            if writer is not None and writer.width_of_current_line:
                writer.line()  # under xdist pytest's letters leave the line open: never glue onto them
            reporter.ensure_newline()
            reporter.write_line(line)


def _count_selected(config: pytest.Config, nodeids: list[str]) -> None:
    # The tally counts the cells this run asks (after -k/-m), not every planned cell.
    progress = config.stash.get(PROGRESS_KEY, None)
    if progress is None:
        return  # a worker, or a run that plans nothing
    progress.total = len(nodeids)
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:  # per model: the cells it is asked, and which model a reported cell is
        by_param = dict(zip(_param_ids(session), session.cells))
        progress.model_totals, progress.model_of = {}, {}
        for nodeid in nodeids:
            param = nodeid.rsplit("[", 1)[-1].rstrip("]") if nodeid.endswith("]") else ""
            if param in by_param:
                model = by_param[param].model
                progress.model_of[param] = model
                progress.model_totals[model] = progress.model_totals.get(model, 0) + 1
    if session is not None and not progress.selection_recorded:
        progress.selection_recorded = True
        session.record_selection(_cells_of(session, nodeids), config.getoption("keyword"),
                                 config.getoption("markexpr"))


def _cells_of(session: runner.RunSession, nodeids: list[str]) -> list[runner.CellSpec]:
    """The cells of collected node ids (``test_cell[<param id>]``, the ids ``pytest_generate_tests`` gave)."""
    by_id = {param: cell for cell, param in zip(session.cells, _param_ids(session))}
    found = []
    for nodeid in nodeids:
        param = nodeid.rsplit("[", 1)[-1].rstrip("]") if nodeid.endswith("]") else None
        if param in by_id:
            found.append(by_id[param])
    return found


def _param_ids(session: runner.RunSession) -> list[str]:
    several = len(session.models) > 1
    return [f"{c.model}-{c.cell_id}" if several else c.cell_id for c in session.cells]


def pytest_collection_finish(session: pytest.Session) -> None:
    if getattr(session.config.option, "dist", "no") != "no" and not hasattr(session.config, "workerinput"):
        return  # xdist: the controller collects nothing; the workers' collection is counted below
    _count_selected(session.config, [item.nodeid for item in session.items])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    _count_selected(node.config, list(ids))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    progress = session.config.stash.get(PROGRESS_KEY, None)
    run = session.config.stash.get(SESSION_KEY, None)
    if run is not None:
        run.close()
        if progress is not None:
            _record_rate_limits(run)
    if progress is None or session.exitstatus not in (0, 1):
        return
    if progress.quota_stopped():
        session.exitstatus = 0  # S4.6: a used daily budget or quota is no failure; tomorrow continues
    elif progress.left_kept_or_unsaved():
        session.exitstatus = 1  # S4.7: 0 only when nothing is left kept or unsaved


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Say once, before any cell, what the run must tell: data notices, where keys go, missing keys."""
    run = session.config.stash.get(SESSION_KEY, None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if run is None or reporter is None or hasattr(session.config, "workerinput"):
        return
    progress = session.config.stash.get(PROGRESS_KEY, None)
    if progress is not None:
        # -v prints a line per cell: then the tally is plain lines among them, as in a pipe
        progress.terminal = _on_terminal(reporter) and session.config.get_verbosity() <= 0
        if progress.terminal:
            progress.every_seconds = 0.25  # rewriting one line costs nothing: keep it current
            if hasattr(reporter, "_show_progress_info"):
                reporter._show_progress_info = False  # pytest's own "[ 50%]" would break the line too
    for line in run.start_lines:
        reporter.write_line(line)


def _on_terminal(reporter: Any) -> bool:
    """Whether pytest writes to a terminal (not a pipe, a file or CI's log): only there is a line rewritten."""
    stream = getattr(getattr(reporter, "_tw", None), "_file", None)
    try:
        return bool(stream is not None and stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False


def _record_rate_limits(run: runner.RunSession) -> None:
    """The limits each route learned go into its folder's run.json (controller only)."""
    from pytest_assistant_eval.providers.ledger import read_routes
    from pytest_assistant_eval.providers.pacing import learned_limits
    from pytest_assistant_eval.results.usage import add_rate_limits

    routes = read_routes(run.ledger_path())
    for spec in run.models.values():
        if spec.route in routes:
            add_rate_limits(runner.results_dir(run.options, spec) / "run.json", learned_limits(routes[spec.route]))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    progress = config.stash.get(PROGRESS_KEY, None)
    if progress is not None:
        writer = getattr(terminalreporter, "_tw", None)
        if progress.terminal and writer is not None:
            writer.write("\r\x1b[K")  # the in-place line gives way to the closing tally
        lines = progress.summary_lines()
        if progress.terminal and lines:
            lines[0] = progress.compact_line()  # on a terminal the tally without its zeros: one line, unwrapped
        for line in lines:
            terminalreporter.write_line(line)
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            terminalreporter.write_line("Interrupted: finished cells are saved; continue with the same command and "
                                        "--resume (a cell that was running continues from its last request).")
    run = config.stash.get(SESSION_KEY, None)
    if run is not None and progress is not None:
        for line in run.usage_lines():
            terminalreporter.write_line(line)
        from pytest_assistant_eval.run.progress import NO_NEXT_COMMAND

        if (exitstatus == pytest.ExitCode.OK and not progress.left_kept_or_unsaved() and progress.finished
                and not os.environ.get(NO_NEXT_COMMAND)):
            folders = [runner.results_dir(run.options, spec) for spec in run.models.values()]
            terminalreporter.write_line(f"Next: grade the results: {run.suite.next_command(folders, run.options.out)}")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    session = config.stash.get(SESSION_KEY, None)
    if session is None:
        return None
    routes = {label: spec.route for label, spec in session.models.items()}
    if config.getoption("spread_route"):
        return None  # S4.14: workers share each route's pacer and budget through the ledger
    limited = {label: spec.preset != "scripted" or config.getoption("group_by_route")
               for label, spec in session.models.items()}
    if not any(limited.values()):
        return None  # nothing to keep together: xdist's own load scheduling spreads the cells
    return RouteScheduling(config, log, scope=lambda nodeid: scope_for(nodeid, routes, limited))
