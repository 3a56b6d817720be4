"""What a run says to a newcomer (issue 10, items 7, 9 and 14): where a key goes, what went
wrong and how to continue, each in words that name the address, the path or the fix.

Runs are separate processes (``python -m pytest`` with the plugin, or ``assistant-eval``), with
keys in their environment and an empty keyring, against fake servers on 127.0.0.1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.provider_runs_helpers import CALIBRATION, console, run_env, run_eval
from tests.providers.fakes import Fault
from tests.providers.fakes.faults import refused_address, stream_fault
from tests.reference_fake import REFERENCE_FAKES

ONE = ("--levels", "basic", "--repeats", "1", "-k", "G01")


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", *map(str, args)], capture_output=True,
                          text=True, env=env or run_env(), cwd=cwd, timeout=240)


def fake_for(preset: str, world: Path):
    cls, suffix = REFERENCE_FAKES[preset]
    fake = cls(CALIBRATION, world)
    return fake, fake.url + suffix


# -- where a key goes (item 7) -----------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["openai", "anthropic", "openai-compatible"])
def test_a_key_is_never_sent_over_plain_http_to_another_host(world_dir, tmp_path, preset):
    env = run_env(OPENAI_COMPATIBLE_API_KEY="sk-compatible-0000000000000000")
    proc = cli("run", "--world", world_dir, "--out", tmp_path / "r", "--model", f"{preset}:m",
               "--base-url", "http://models.example.test/v1", "--accept-data-notice", env=env)
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "plain http" in text and "models.example.test" in text and "https://" in text, text[-2000:]
    assert "sk-" not in text
    assert not (tmp_path / "r" / "cells").exists()


def test_the_run_says_once_at_its_start_where_a_key_goes_when_not_to_the_presets_own_address(world_dir, tmp_path):
    fake, url = fake_for("openai", world_dir)
    with fake:
        result = run_eval(world_dir, tmp_path / "r", "--model", "openai:oracle", f"--base-url={url}",
                          "--accept-data-notice", *ONE)
    text = console(result)
    assert result.ret == 0, text
    line = f"assistant-eval: the openai key (OPENAI_API_KEY) goes to {url}, not to https://api.openai.com/v1"
    assert text.count(line) == 1, text[-3000:]


# -- a preset that usually needs a key and has none (item 14) ---------------------------------------
def test_an_openai_compatible_run_without_its_key_says_so_at_the_start(world_dir, tmp_path):
    fake, url = fake_for("openai-compatible", world_dir)
    with fake:
        result = run_eval(world_dir, tmp_path / "r", "--model", "openai-compatible:oracle", f"--base-url={url}",
                          "--accept-data-notice", *ONE)  # only OPENAI_API_KEY and the others are set
    text = console(result)
    assert result.ret == 0, text
    assert ("assistant-eval: openai-compatible has no key (keyring service 'assistant-eval', username "
            "'openai-compatible', or OPENAI_COMPATIBLE_API_KEY; OPENAI_API_KEY is not read for it): its requests "
            "go without one") in text, text[-3000:]


def test_every_presets_key_variable_is_in_the_providers_doc():
    from pytest_assistant_eval.providers.keys import ENV_VARS

    doc = (Path(__file__).resolve().parent.parent / "docs" / "providers.md").read_text(encoding="utf-8")
    missing = [name for names in ENV_VARS.values() for name in names if name not in doc]
    assert missing == []


# -- unclear messages (item 9) ------------------------------------------------------------------------
def test_a_world_path_that_does_not_exist_is_named_as_such(tmp_path):
    proc = cli("run", "--world", tmp_path / "no such world", "--out", tmp_path / "r", "--model", "scripted:oracle")
    assert proc.returncode != 0
    assert f"--world {tmp_path / 'no such world'}: no such folder" in proc.stderr, proc.stderr[-2000:]


def test_the_folder_a_world_was_built_in_points_to_the_world_inside_it(world_dir, tmp_path):
    proc = cli("run", "--world", world_dir.parent, "--out", tmp_path / "r", "--model", "scripted:oracle")
    assert proc.returncode != 0
    assert f"pass the world inside it: --world '{world_dir}'" in proc.stderr, proc.stderr[-2000:]


def test_calibration_may_follow_the_subcommand(tmp_path):
    proc = cli("build", "--out", tmp_path, "--calibration", CALIBRATION)
    assert proc.returncode == 0, proc.stderr


def test_a_refused_data_notice_shows_its_text(world_dir, tmp_path):
    proc = cli("run", "--world", world_dir, "--out", tmp_path / "r", "--model", "anthropic:claude-test")
    assert proc.returncode != 0
    assert "is sent to Anthropic" in proc.stderr and "--accept-data-notice" in proc.stderr, proc.stderr[-2000:]


def test_an_accepted_data_notice_is_shown_at_the_start(world_dir, tmp_path):
    fake, url = fake_for("anthropic", world_dir)
    with fake:
        result = run_eval(world_dir, tmp_path / "r", "--model", "anthropic:oracle", f"--base-url={url}",
                          "--accept-data-notice", *ONE)
    assert "assistant-eval: data notice (anthropic): Every request of this run" in console(result)


def test_a_refused_key_says_to_store_a_valid_one_not_only_to_resume(world_dir, tmp_path):
    fake, url = fake_for("openai", world_dir)
    fake.add(Fault("bad_key"))
    with fake:
        result = run_eval(world_dir, tmp_path / "r", "--model", "openai:oracle", f"--base-url={url}",
                          "--accept-data-notice", *ONE)
    text = console(result)
    assert result.ret == 1
    assert ("G01__basic__r1: nothing was saved for this cell: the key was refused. Store a valid key (keyring "
            "service 'assistant-eval', username 'openai', or OPENAI_API_KEY), then run again with --resume.") in text


def test_a_refused_connection_names_the_address_and_keeps_nothing(world_dir, tmp_path):
    address = refused_address() + "/v1"
    result = run_eval(world_dir, tmp_path / "r", "--model", "openai:oracle", f"--base-url={address}",
                      "--accept-data-notice", *ONE)
    text = console(result)
    assert result.ret == 1
    assert f"provider: no answer: the connection to {address} was refused" in text, text[-3000:]
    assert "HTTP - -" not in text


def test_a_stream_of_garbage_then_done_keeps_the_cell_and_counts_its_attempts(world_dir, tmp_path):
    from tests.provider_runs_helpers import checkpoints, records, spent

    fake, url = fake_for("openai", world_dir)
    fake.add(*[stream_fault(fake, "garbage_then_end")] * 4)
    out = tmp_path / "r"
    with fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={url}", "--accept-data-notice",
                          *ONE)
    text = console(result)
    assert result.ret == 1, text
    assert "G01__basic__r1: kept up to turn 1, request 1" in text
    assert "the answer stream held an event that is not JSON" in text
    assert not records(out) and checkpoints(out)["G01__basic__r1"]["stop"]["code"] == "unreadable_answer"
    [entry] = spent(out)["cells"]["G01__basic__r1"]
    assert [a["code"] for a in entry["attempts"]] == ["unreadable_answer"] * 4


def test_after_ctrl_c_the_run_says_how_to_continue(world_dir, tmp_path):
    out = tmp_path / "r"
    argv = [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world_dir}", f"--out={out}", "--model=scripted:oracle", str(CALIBRATION / "cells.py")]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=run_env(),
                            cwd=tmp_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((out / "cells").glob("*.json")) if (out / "cells").exists() \
            else time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    text, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2, text[-2000:]
    assert "Interrupted: finished cells are saved; continue with the same command and --resume" in text, text[-2000:]
