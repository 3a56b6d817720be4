"""The simulated user played by a model (S5.2), against the fake OpenAI server.

Unit tests drive ``ModelUser`` through a real provider over a socket; the last tests run
whole task cells through the runner with ``--user-model``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_assistant_eval.messages import Message
from pytest_assistant_eval.suites.calibration.user.model_user import BadUserReply, ModelUser, instructions, problems_of
from pytest_assistant_eval.suites.calibration.user.scripted import check_user_reply
from pytest_assistant_eval.providers.errors import KeyRefused, RetryPolicy
from pytest_assistant_eval.providers.presets import make_provider
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from tests.provider_runs_helpers import console, records, run_eval
from tests.providers.fakes.base import Answer, Fault
from tests.providers.fakes.openai_fake import OpenAIFake
from tests.reference_fake import ReferenceOpenAIFake

TASK_ID = "T05"  # pay a 120 EUR ticket: one approval to give, one to refuse


def reply_text(**fields: object) -> str:
    data = {"message": "Yes, please go ahead.", "facts_disclosed": [], "approvals_given": [],
            "approvals_refused": [], "done": False}
    data.update(fields)
    return json.dumps(data)


@pytest.fixture(scope="module")
def task(calibration_dir: Path):
    cases, _ = load_calibration(calibration_dir)
    return next(t for t in cases.tasks if t.id == TASK_ID)


@pytest.fixture
def fake():
    with OpenAIFake() as server:
        yield server


def user_of(fake: OpenAIFake, task, **kwargs) -> ModelUser:
    provider = make_provider("openai-compatible", "user-sim", base_url=fake.url + "/v1", key=None,
                             retry=RetryPolicy(base_delay=0, max_delay=0), sleep=lambda s: None)
    return ModelUser(provider, task, **kwargs)


def visible(task) -> list[Message]:
    return [Message(role="system", content="You are the assistant."), Message(role="user", content=task.opening),
            Message(role="assistant", content="Shall I charge 120 EUR to card-visa-4821 for Porto Design Forum?")]


def test_the_user_model_gets_persona_facts_and_approvals_and_answers_the_assistant(fake, task):
    fake.add(Answer(text=reply_text(approvals_given=["pay-ticket"])))
    state: dict = {}
    reply = user_of(fake, task).reply(visible(task), state)
    assert reply.message == "Yes, please go ahead." and reply.approvals_given == ["pay-ticket"]
    assert state["approvals_given"] == ["pay-ticket"]
    body = fake.requests[0].json()
    system = body["messages"][0]["content"]
    assert task.persona.strip() in system
    assert "pay-ticket: GIVE when asked" in system and "other-card: REFUSE when asked" in system
    # roles turned round: the user's own opening is its earlier turn, the assistant's question what it answers
    roles = [(m["role"], m["content"][:20]) for m in body["messages"][1:]]
    assert roles[-2] == ("assistant", task.opening[:20]) and roles[-1][0] == "user"
    assert "tools" not in body


def test_a_fenced_json_reply_is_read(fake, task):
    fake.add(Answer(text="```json\n" + reply_text(done=True) + "\n```"))
    assert user_of(fake, task).reply(visible(task), {}).done is True


def test_a_reply_that_is_not_the_json_is_asked_again_once_naming_what_was_wrong(fake, task):
    fake.add(Answer(text="Sure, go ahead!"), Answer(text=reply_text(approvals_given=["pay-ticket"])))
    reply = user_of(fake, task).reply(visible(task), {})
    assert reply.approvals_given == ["pay-ticket"] and not isinstance(reply, BadUserReply)
    second = fake.requests[1].json()["messages"]
    assert second[-2] == {"role": "assistant", "content": "Sure, go ahead!"}
    assert "could not be used: the reply is not JSON" in second[-1]["content"]


def test_two_bad_replies_make_a_user_error(fake, task):
    fake.add(Answer(text=json.dumps({"message": "ok"})), Answer(text=json.dumps({"message": "", "done": "yes"})))
    reply = user_of(fake, task).reply(visible(task), {})
    assert isinstance(reply, BadUserReply)
    assert "not the asked JSON twice" in reply.problem and "done must be true or false" in reply.problem
    assert "missing field(s)" in fake.requests[1].json()["messages"][-1]["content"]
    assert len(fake.requests) == 2


def test_the_code_check_not_the_model_decides_whether_an_approval_is_allowed(fake, task):
    fake.add(Answer(text=reply_text(approvals_given=["other-card"])))
    reply = user_of(fake, task).reply(visible(task), {})
    assert reply.approvals_given == ["other-card"]  # the model gave it ...
    assert "approval the task does not allow: other-card" in check_user_reply(task, reply)  # ... the check refuses it


def test_the_user_models_provider_errors_are_provider_errors(fake, task):
    fake.add(Fault("bad_key"))
    with pytest.raises(KeyRefused):
        user_of(fake, task).reply(visible(task), {})


@pytest.mark.parametrize("text, wrong", [
    ("[1]", "not a JSON object"),
    (json.dumps({"message": "hi", "facts_disclosed": [1], "approvals_given": [], "approvals_refused": [],
                 "done": False}), "facts_disclosed must be a list of ids"),
    (json.dumps({"message": "hi", "facts_disclosed": [], "approvals_given": [], "approvals_refused": [],
                 "done": False, "mood": "fine"}), "unknown field(s): mood"),
])
def test_problems_are_named_field_by_field(text, wrong):
    data, problems = problems_of(text)
    assert data is None and any(wrong in p for p in problems)


def test_instructions_name_every_fact_with_its_value(task):
    text = instructions(task)
    for fact in task.facts:
        assert f"{fact.id}: {fact.description}: {fact.value}" in text


# -- through the runner -------------------------------------------------------------------------------

def run_with_user(world: Path, calibration: Path, out: Path, user_fake: OpenAIFake, preset: str = "openai-compatible",
                  *extra: str):
    assistant = ReferenceOpenAIFake(calibration, world)
    with assistant:
        model = ("--model", "scripted:oracle") if preset == "scripted" else (
            "--model", "openai-compatible:oracle", f"--base-url={assistant.url}/v1")
        return run_eval(world, out, *model, "--user-model", "openai-compatible:user-sim",
                        f"--user-base-url={user_fake.url}/v1", "--accept-data-notice", "--levels", "basic",
                        "--repeats", "1", "-k", f"{TASK_ID} or G01", *extra)


def test_a_task_cell_of_a_provider_assistant_is_answered_by_the_user_model(calibration_dir, world_dir, tmp_path):
    done = Answer(text=reply_text(message="Thank you, that is all.", done=True))
    with OpenAIFake(default=done) as user_fake:
        user_fake.add(Answer(text=reply_text(approvals_given=["pay-ticket"])))
        result = run_with_user(world_dir, calibration_dir, tmp_path / "results", user_fake)
    assert result.ret == 0, console(result)
    found = records(tmp_path / "results")
    task_record, question_record = found[f"{TASK_ID}__basic__r1"], found["G01__basic__r1"]
    assert task_record["user"] == {"kind": "model", "user_error": None, "model": "openai-compatible:user-sim"}
    assert question_record["user"]["kind"] is None  # questions have no simulated user
    structured = [t["structured"] for t in task_record["transcript"] if t["type"] == "user" and t["structured"]]
    assert structured[0]["approvals_given"] == ["pay-ticket"] and structured[-1]["done"] is True
    assert task_record["stop_reason"] == "user_done"
    assert len(user_fake.requests) == len(structured)
    assert "usage openai-compatible:user-sim (calibration)" in console(result)


def test_the_user_models_own_generation_settings_reach_its_requests_and_the_record(calibration_dir, world_dir,
                                                                                  tmp_path):
    done = Answer(text=reply_text(message="Thank you, that is all.", done=True))
    with OpenAIFake(default=done) as user_fake:
        user_fake.add(Answer(text=reply_text(approvals_given=["pay-ticket"])))
        result = run_with_user(world_dir, calibration_dir, tmp_path / "results", user_fake, "openai-compatible",
                               "--user-setting", "temperature=0.3", "--user-setting", "seed=7")
    assert result.ret == 0, console(result)
    record = records(tmp_path / "results")[f"{TASK_ID}__basic__r1"]
    assert record["user"]["generation"] == {"temperature": 0.3, "seed": 7}
    bodies = [r.json() for r in user_fake.requests]
    assert bodies and all(b.get("temperature") == 0.3 and b.get("seed") == 7 for b in bodies)


def test_a_user_setting_without_a_user_model_or_malformed_is_refused(calibration_dir, world_dir, tmp_path):
    result = run_eval(world_dir, tmp_path / "a", "--model", "scripted:oracle", "--user-setting", "temperature=0.3",
                      "-k", "G01")
    assert result.ret != 0 and "--user-setting needs --user-model" in console(result)
    with OpenAIFake() as user_fake:
        bad = run_with_user(world_dir, calibration_dir, tmp_path / "b", user_fake, "openai-compatible", "--user-setting", "warmth=9")
    assert bad.ret != 0 and "--user-setting 'warmth=9'" in console(bad)


def test_an_approval_the_task_does_not_allow_makes_the_run_a_user_error(calibration_dir, world_dir, tmp_path):
    with OpenAIFake() as user_fake:
        user_fake.add(Answer(text=reply_text(approvals_given=["other-card"])))
        result = run_with_user(world_dir, calibration_dir, tmp_path / "results", user_fake)
    assert result.ret == 0, console(result)
    record = records(tmp_path / "results")[f"{TASK_ID}__basic__r1"]
    assert record["stop_reason"] == "user_error"
    assert "approval the task does not allow: other-card" in record["user"]["user_error"]


def test_scripted_assistants_keep_the_scripted_user(calibration_dir, world_dir, tmp_path):
    with OpenAIFake() as user_fake:
        result = run_with_user(world_dir, calibration_dir, tmp_path / "results", user_fake, "scripted")
    assert result.ret == 0, console(result)
    assert records(tmp_path / "results")[f"{TASK_ID}__basic__r1"]["user"]["kind"] == "scripted"
    assert user_fake.requests == []


def test_the_run_command_passes_the_user_model_on():
    from pytest_assistant_eval.cli import build_parser, pytest_args_for_run

    args, extra = build_parser().parse_known_args(
        ["run", "--world", "w", "--out", "o", "--model", "openai:m", "--user-model", "openai:u",
         "--user-base-url", "http://127.0.0.1:1/v1", "--spread-route", "--max-requests-per-day", "45"])
    argv = pytest_args_for_run(args, extra)
    assert argv[argv.index("--user-model") + 1] == "openai:u"
    assert argv[argv.index("--user-base-url") + 1] == "http://127.0.0.1:1/v1"
    assert "--spread-route" in argv and argv[argv.index("--max-requests-per-day") + 1] == "45"
