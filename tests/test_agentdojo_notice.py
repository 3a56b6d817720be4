"""An AgentDojo run asks the same of a remote route as our own cells do: its data notice
accepted before any request, and where its key goes said at the start."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions, UsageError  # noqa: E402
from pytest_assistant_eval.run.session import RunSession  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.suite import AgentDojoOptions  # noqa: E402


def agentdojo_options(out: Path, model: ModelSpec, *, accept: bool = False) -> RunOptions:
    """The one session's options for AgentDojo's banking suite (``--suite agentdojo:banking``)."""
    return RunOptions(world=None, out=out, models=(model,), calibration=None, accept_data_notice=accept,
                      suite="agentdojo", suite_options=AgentDojoOptions(suites=("banking",)))


def test_a_remote_route_without_its_data_notice_is_refused_before_any_cell(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-not-sent")
    options = agentdojo_options(tmp_path, ModelSpec("openrouter", "some/model:free"))
    with pytest.raises(UsageError) as refused:
        RunSession(options)
    assert "notice" in str(refused.value).lower() and "sk-or-test" not in str(refused.value)


def test_an_accepted_notice_is_said_at_the_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-not-sent")
    options = agentdojo_options(tmp_path, ModelSpec("openrouter", "some/model:free"), accept=True)
    session = RunSession(options)
    assert any("data notice" in line for line in session.start_lines)
    assert not any("sk-or-test" in line for line in session.start_lines)


def test_the_notice_of_an_agentdojo_run_names_agentdojos_data_not_the_grounding_world(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-not-sent")
    session = RunSession(agentdojo_options(tmp_path, ModelSpec("openrouter", "some/model:free"), accept=True))
    [notice] = [line for line in session.start_lines if "data notice" in line]
    assert "AgentDojo" in notice and "grounding world" not in notice
