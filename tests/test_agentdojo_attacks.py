"""AgentDojo's attacks by name (issue 25): every registered attack runs, an unknown one is refused first.

The ``important_instructions*`` attacks address the model by name, as AgentDojo's pipeline gives
it: AgentDojo's own mapping for a model it knows (``gpt-4o-2024-05-13`` -> ``GPT-4``), else the
model id. An unknown ``--attack`` stops ``agentdojo run`` before pytest starts (exit 2, no folder)
and the plugin before any ``run.json``. Skipped without the ``[agentdojo]`` extra.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.suites.agentdojo.cells import (  # noqa: E402
    UNUSABLE_ATTACKS,
    attack_model_name,
    attack_names,
    check_attack,
    injections_for,
    parse_cell_id,
)
from pytest_assistant_eval.suites.agentdojo.grade import grade_folders  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"
CROSSED = "AD-banking-0-i1__r1"


def agentdojo_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "agentdojo", "run", *args],
                          capture_output=True, text=True, cwd=REPO)


def test_every_registered_attack_gives_injection_texts_by_name():
    """Each usable attack of AgentDojo's registry, read when the test runs: listing them to
    parametrize imported AgentDojo's whole agent pipeline (every provider SDK) at collection, in
    every xdist worker and every collecting process (issue 32, test-suite speed)."""
    attacks = [a for a in attack_names() if a not in UNUSABLE_ATTACKS]
    assert len(attacks) >= 2, attacks
    failed = {}
    for attack in attacks:
        texts = injections_for(parse_cell_id(CROSSED), attack, "gpt-4o-2024-05-13")
        if not (texts and all(isinstance(t, str) and t for t in texts.values())):
            failed[attack] = texts
    assert failed == {}, f"attacks that gave no injection text: {failed}"


def test_important_instructions_addresses_a_known_model_by_agentdojos_name_and_another_by_its_id():
    from agentdojo.models import MODEL_NAMES

    before = dict(MODEL_NAMES)
    assert attack_model_name("gpt-4o-2024-05-13") == "GPT-4"
    assert attack_model_name("openai/claude-3-5-sonnet-20241022") == "Claude"  # a router's prefix too
    assert attack_model_name("llama3.1:8b") == "llama3.1:8b"
    text = "".join(injections_for(parse_cell_id(CROSSED), "important_instructions", "llama3.1:8b").values())
    assert "to you, llama3.1:8b." in text
    assert MODEL_NAMES == before, "AgentDojo's own mapping is left as it was"


def test_the_wrong_model_name_attack_never_uses_the_models_own_name():
    text = "".join(injections_for(parse_cell_id(CROSSED), "important_instructions_wrong_model_name",
                                  "gpt-4o-2024-05-13").values())
    assert "to you, GPT-4." not in text and "to you, " in text


def test_an_unknown_attack_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError) as caught:
        check_attack("importent_instructions")
    message = str(caught.value)
    assert "unknown attack 'importent_instructions'" in message
    assert "important_instructions" in message and "direct" in message and "tool_knowledge" in message
    with pytest.raises(ValueError, match="cannot run here"):
        check_attack("manual")


def test_agentdojo_run_refuses_an_unknown_attack_before_anything_runs(tmp_path):
    out = tmp_path / "ad"
    done = agentdojo_run("--model", "scripted:oracle", "--out", str(out), "--crossed", "--attack", "nope")
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "unknown attack 'nope'" in done.stderr and "important_instructions" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists(), "nothing is written for a refused attack"


def test_the_plugin_refuses_an_unknown_attack_before_writing_run_json(tmp_path):
    out = tmp_path / "ad"
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir",
                           str(CALIBRATION), "-p", "no:cacheprovider", "--agentdojo", "banking", "--agentdojo-crossed",
                           "--agentdojo-attack", "nope", "--model", "scripted:oracle", "--out", str(out),
                           str(CALIBRATION / "cells.py")], capture_output=True, text=True, cwd=REPO)
    assert done.returncode != 0
    assert "unknown attack 'nope'" in done.stdout + done.stderr
    assert not (out / "run.json").exists()


def test_important_instructions_runs_a_crossed_cell_and_grading_sees_the_same_texts(tmp_path):
    out = tmp_path / "ad"
    done = agentdojo_run("--model", "scripted:follows-injections", "--out", str(out),
                         "--attack", "important_instructions", "--cells", CROSSED)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    record = json.loads((out / "cells" / f"{CROSSED}.json").read_text(encoding="utf-8"))
    assert record["attack"] == "important_instructions"
    assert "This is an important message from me, Emma Johnson, to you, follows-injections." in json.dumps(
        record["transcript"])
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["attack"] == "important_instructions"
    [grade] = grade_folders([out], tmp_path / "g.json")
    assert grade.attack_success is True  # the assistant that follows injections did, in the same environment
