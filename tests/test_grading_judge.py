"""grade-ai with a model judge (S6.4-S6.8) against the fake servers of every judge preset.

Results folders come from one real scripted run (three reference assistants, a lookup, an
interpret question and a task at the basic level); the judge is a fake server of the
preset's wire format on 127.0.0.1 that answers each request from its own text. Nothing is
mocked between grade-ai and the socket.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.providers import openrouter
from pytest_assistant_eval.suites.calibration.grade.folder import GradingError, JudgeOptions, grade, grade_command, read_grading
from tests.judge_fakes import KEY_VARS, Replier, cell_text, good_reply, judge_fake
from tests.provider_runs_helpers import console, run_eval
from tests.providers.fakes.base import Fault
from tests.providers.fakes.presets import PLANTED_KEY

MODELS = ("oracle", "false-claims", "answers-nothing")
SELECT = ("--levels", "basic", "--repeats", "1", "-k", "G01 or G11 or T01")
PRESETS = ["openai", "openai-compatible", "openrouter", "anthropic", "gemini", "ollama"]


@pytest.fixture(scope="module")
def results_root(world_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("judged") / "results"
    result = run_eval(world_dir, out, *[a for m in MODELS for a in ("--model", f"scripted:{m}")], *SELECT)
    assert result.ret == 0, console(result)
    return out


@pytest.fixture()
def folders(results_root: Path, tmp_path: Path) -> list[Path]:
    """A private copy of the results folders (tests change records)."""
    copies = []
    for model in MODELS:
        shutil.copytree(results_root / model, tmp_path / "results" / model)
        copies.append(tmp_path / "results" / model)
    return copies


@pytest.fixture(autouse=True)
def judge_env(monkeypatch: pytest.MonkeyPatch):
    """Keys only from the environment (an empty keyring), retries without waiting."""
    import keyring
    import keyring.backends.null

    before = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.null.Keyring())
    for var in KEY_VARS.values():
        monkeypatch.setenv(var, PLANTED_KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("ASSISTANT_EVAL_RETRY_DELAY", "0")
    # The openrouter fake's model is a free one, which starts at OpenRouter's 3 s spacing: 36 s
    # of sleeping across this file, in tests whose subject is the judge, not the pacing
    # (tests/providers/test_pacing.py and test_limit_fakes.py time that). Still paced, shorter.
    monkeypatch.setattr(openrouter, "FREE_START_INTERVAL", 0.01)
    yield
    keyring.set_keyring(before)


def run_judge(folders: list[Path], out: Path, preset: str, url: str, model: str, **options: Any) -> dict[str, Any]:
    seed = options.pop("seed", 5)
    return grade(folders, out, f"{preset}:{model}", seed=seed,
                 options=JudgeOptions(base_url=url, accept_data_notice=True, saved=out.parent / "judgments",
                                      **options))


def cells(out: Path) -> dict[int, dict[str, Any]]:
    _, graded = read_grading(out)
    return {c["n"]: c for c in graded}


def cell_requests(fake) -> list[Any]:
    return [r for r in fake.requests if b"Cell #" in r.body]


def every_file_text(folder: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*") if p.is_file())


# -- a full grading run, every preset ------------------------------------------------------------
@pytest.mark.parametrize("preset", PRESETS)
def test_a_full_grading_run_asks_once_per_cell_with_an_answer_through_each_preset(preset, folders, tmp_path):
    replier = Replier()
    fake, url, model = judge_fake(preset, replier)
    with fake:
        summary = run_judge(folders, tmp_path / "grading", preset, url, model)
    graded = cells(tmp_path / "grading")
    index, _ = read_grading(tmp_path / "grading")
    assert len(graded) == len(index["order"]) == 9 and summary["graded"] == 9
    silent = [c for c in graded.values() if c["source"]["folder"] == "answers-nothing"]
    assert all(c["judge"]["requests"] == 0 and c["judge"]["route"] is None for c in silent)
    asked = {n for n, _ in replier.seen}
    assert index["canary"]["n"] in asked and index["canary"]["n"] not in graded
    # one request per distinct material: identical answers of two assistants are one judgment
    assert summary["requests"] + summary["reused"] == 1 + sum(1 for c in graded.values() if c["judge"]["route"])
    assert len(cell_requests(fake)) == summary["requests"]
    for cell in graded.values():
        if cell["judge"]["route"] is None:
            continue
        open_ids = {i["id"] for i in cell["items"] if i["verdict"] is None}
        assert set(cell["judge"]["verdicts"]) == open_ids
        assert cell["judge"]["understandability"] == 2 and cell["judge"]["grader"] == f"{preset}:{model}"
        assert cell["outcome"] != "waiting"
    usage = json.loads((tmp_path / "grading" / "usage.json").read_text())
    assert usage["judges"][f"{preset}:{model}"]["label"] == f"{preset}:{model} (calibration)"
    assert usage["judges"][f"{preset}:{model}"]["requests"] == summary["requests"]
    assert PLANTED_KEY not in every_file_text(tmp_path)


def test_a_request_as_sent_is_blind_and_fenced(folders, tmp_path):
    fake, url, model = judge_fake("openai", Replier())
    with fake:
        run_judge(folders, tmp_path / "grading", "openai", url, model)
    for recorded in cell_requests(fake):
        body = recorded.body.decode()
        user = recorded.json()["messages"][1]["content"]
        for hidden in ("oracle", "false-claims", "answers-nothing", "basic", "conversation_seconds"):
            assert hidden not in user
        assert user.startswith("Cell #") and "<<<DATA " in user and "<<<END " in user
        assert "reasoning" not in body


# -- saved judgments -------------------------------------------------------------------------------
def test_grading_unchanged_material_again_in_another_folder_sends_no_request(folders, tmp_path):
    fake, url, model = judge_fake("anthropic", Replier())
    with fake:
        first = run_judge(folders, tmp_path / "grading", "anthropic", url, model, seed=1)
        sent = len(fake.requests)
        second = run_judge(folders, tmp_path / "grading-again", "anthropic", url, model, seed=99)
    assert first["requests"] > 0 and second["requests"] == 0 and len(fake.requests) == sent
    a, b = cells(tmp_path / "grading"), cells(tmp_path / "grading-again")
    by_source = {(c["source"]["folder"], c["source"]["cell"]): c for c in a.values()}
    for cell in b.values():
        assert cell["judge"]["verdicts"] == by_source[(cell["source"]["folder"], cell["source"]["cell"])]["judge"]["verdicts"]


def test_running_again_on_the_same_folder_skips_graded_cells_and_sends_nothing(folders, tmp_path):
    fake, url, model = judge_fake("gemini", Replier())
    with fake:
        run_judge(folders, tmp_path / "grading", "gemini", url, model)
        sent = len(fake.requests)
        again = run_judge(folders, tmp_path / "grading", "gemini", url, model)
    assert again["skipped"] == 9 and again["graded"] == 0 and len(fake.requests) == sent


# -- the strict reply: slips, retry, unparsed ---------------------------------------------------
def _first_cell_with_items(out: Path) -> tuple[int, list[str], list[str]]:
    for n, cell in sorted(cells(out).items()):
        open_ids = [i["id"] for i in cell["items"] if i["verdict"] is None]
        settled = [i["id"] for i in cell["items"] if i["verdict"] is not None]
        # An open item besides the claims item every answer has: such a cell's request is its own
        # (a cell with only the claims item open may share its material with another, and be reused).
        own = [i for i in cell["items"] if i["verdict"] is None and i["kind"] != "claims"]
        if own and settled:
            open_ids = [i["id"] for i in own] + [x for x in open_ids if x not in {i["id"] for i in own}]
            return n, open_ids, settled
    raise AssertionError("no cell with open and settled items")


def _reply(open_ids: list[str], **extra_items: Any) -> str:
    items = {i: {"verdict": "wrong", "confidence": 0.9, "reason": "r"} for i in open_ids}
    items.update(extra_items)
    return json.dumps({"items": items, "understandability": 1})


@pytest.fixture()
def probe(folders, tmp_path):
    """Cell #n with open and settled items, found by a first grading with the rules judge."""
    grade(folders, tmp_path / "rules", "scripted:rules", seed=5)
    return _first_cell_with_items(tmp_path / "rules")


def test_the_two_slips_are_accepted_and_recorded_without_a_retry(folders, tmp_path, probe):
    n, open_ids, settled = probe
    long_reason = "x" * 260
    reply = json.loads(_reply(open_ids))
    reply["items"][open_ids[0]]["reason"] = long_reason
    reply["items"][settled[0]] = {"verdict": "right", "confidence": 1, "reason": "settled"}
    replier = Replier(special={n: [json.dumps(reply)]})
    fake, url, model = judge_fake("openrouter", replier)
    with fake:
        run_judge(folders, tmp_path / "grading", "openrouter", url, model)
    judge = cells(tmp_path / "grading")[n]["judge"]
    assert [s for s in replier.seen if s[0] == n] == [(n, False)]
    assert judge["verdicts"][open_ids[0]]["reason"] == "x" * 200 and settled[0] not in judge["verdicts"]
    assert any("cut to 200" in r for r in judge["relaxed"]) and any("settled" in r for r in judge["relaxed"])


@pytest.mark.parametrize("bad, named", [
    ("```json\n{}\n```", "not one JSON object"),
    ("verdict-not-allowed", ".verdict: 'maybe'"),
    ("missing-item", "missing; give a verdict"),
    ("unknown-item", "not an item to grade"),
    ("bad-confidence", ".confidence: 7"),
    ("bad-understandability", "understandability: 5"),
])
def test_an_invalid_reply_is_asked_again_once_naming_what_was_wrong(bad, named, folders, tmp_path, probe):
    n, open_ids, _ = probe
    good = json.loads(_reply(open_ids))
    wrong = json.loads(_reply(open_ids))
    if bad == "verdict-not-allowed":
        wrong["items"][open_ids[0]]["verdict"] = "maybe"
    elif bad == "missing-item":
        del wrong["items"][open_ids[0]]
    elif bad == "unknown-item":
        wrong["items"]["G99/fact:nothing"] = {"verdict": "right", "confidence": 1, "reason": "r"}
    elif bad == "bad-confidence":
        wrong["items"][open_ids[0]]["confidence"] = 7
    elif bad == "bad-understandability":
        wrong["understandability"] = 5
    first = bad if bad.startswith("```") else json.dumps(wrong)
    replier = Replier(special={n: [first, json.dumps(good)]})
    fake, url, model = judge_fake("ollama", replier)
    with fake:
        run_judge(folders, tmp_path / "grading", "ollama", url, model)
    retry = [r.json() for r in cell_requests(fake) if cell_text(r.json()).startswith(f"Cell #{n}\n")][-1]
    feedback = retry["messages"][-1]["content"]
    assert feedback.startswith("Your reply could not be used") and named in feedback
    assert retry["messages"][-2] == {"role": "assistant", "content": first}
    judge = cells(tmp_path / "grading")[n]["judge"]
    assert judge["retried"] is True and judge["requests"] == 2 and not judge["unparsed"]
    assert set(judge["verdicts"]) == set(open_ids)


def test_a_second_invalid_reply_is_saved_unparsed_for_the_owner(folders, tmp_path, probe):
    n, open_ids, _ = probe
    replier = Replier(special={n: ["not json", '{"items": {}}']})
    fake, url, model = judge_fake("openai", replier)
    with fake:
        run_judge(folders, tmp_path / "grading", "openai", url, model)
    cell = cells(tmp_path / "grading")[n]
    assert cell["outcome"] == "waiting" and cell["judge"]["unparsed"] is True
    assert any("unparsed" in r for r in cell["judge"]["to_owner"])
    saved = json.loads((tmp_path / "grading" / "unparsed" / f"{n}.json").read_text())
    assert saved["format"] == "assistant-eval.unparsed/1" and saved["replies"] == ["not json", '{"items": {}}']
    assert len(saved["problems"]) == 2
    # an unparsed cell is asked again by the next run (nothing was saved as a judgment)
    fake2, url2, _ = judge_fake("openai", Replier())
    with fake2:
        run_judge(folders, tmp_path / "grading", "openai", url2, model)
    assert cells(tmp_path / "grading")[n]["outcome"] != "waiting"
    assert len(cell_requests(fake2)) == 1


# -- the canary ------------------------------------------------------------------------------------
def test_the_canary_comes_back_flagged_from_a_judge_that_reads_data_as_data(folders, tmp_path):
    fake, url, model = judge_fake("openai", Replier())  # last allowed verdict: "wrong"
    with fake:
        code = grade_command(folders, tmp_path / "grading", f"openai:{model}", seed=3,
                             options=JudgeOptions(base_url=url, accept_data_notice=True,
                                                  saved=tmp_path / "judgments"))
    canary = json.loads((tmp_path / "grading" / "canary.json").read_text())
    assert code == 0 and canary["flagged"] is True and canary["hints"]
    index, graded = read_grading(tmp_path / "grading")
    assert canary["n"] == len(index["order"]) + 1 and all(c["n"] != canary["n"] for c in graded)


def test_a_judge_that_obeys_the_canary_fails_the_run(folders, tmp_path, capsys):
    fake, url, model = judge_fake("anthropic", Replier(verdict=lambda item, allowed: "right"))
    with fake:
        code = grade_command(folders, tmp_path / "grading", f"anthropic:{model}", seed=3,
                             options=JudgeOptions(base_url=url, accept_data_notice=True,
                                                  saved=tmp_path / "judgments"))
    assert code == 1 and "canary" in capsys.readouterr().out
    assert json.loads((tmp_path / "grading" / "canary.json").read_text())["flagged"] is False


# -- leaks and fences, end to end ----------------------------------------------------------------
def _plant(folder: Path, cell: str, text: str) -> None:
    path = folder / "cells" / f"{cell}.json"
    record = json.loads(path.read_text())
    record["turns"][0]["final"] += " " + text
    path.write_text(json.dumps(record))


def test_a_leak_in_any_cell_sends_nothing_and_names_every_cell(folders, tmp_path):
    record = json.loads((folders[0] / "cells" / "G01__basic__r1.json").read_text())
    _plant(folders[0], "G01__basic__r1", f"(answered at {record['started_at']})")
    # A cap stated in words is blinded ("[cap]"); a setting's own field name cannot be, so it leaks.
    _plant(folders[1], "G11__basic__r1", "I stayed within max_tool_calls.")
    fake, url, model = judge_fake("openai", Replier())
    with fake, pytest.raises(GradingError) as caught:
        run_judge(folders, tmp_path / "grading", "openai", url, model)
    message = str(caught.value)
    assert fake.requests == [] and "nothing was sent" in message
    assert "names the time of a run" in message and "names a cap" in message
    index = json.loads((tmp_path / "grading" / "grading.json").read_text())
    planted = {o["n"] for o in index["order"] if (o["folder"], o["cell"]) in
               {("oracle", "G01__basic__r1"), ("false-claims", "G11__basic__r1")}}
    assert {int(n) for n in __import__("re").findall(r"cell #(\d+)", message)} == planted


def test_model_names_level_phrases_and_the_escalation_sentence_are_blinded_not_leaked(folders, tmp_path):
    _plant(folders[0], "G01__basic__r1", "As oracle (a GPT-4o variant) at the basic level I say: This question goes "
                                         "beyond what I can settle at the basic level, so I am handing it to the standard level.")
    fake, url, model = judge_fake("openai", Replier())
    with fake:
        run_judge(folders, tmp_path / "grading", "openai", url, model)
    users = [r.json()["messages"][1]["content"] for r in cell_requests(fake)]
    planted = next(u for u in users if "variant" in u)
    assert "As [assistant] (a [assistant] variant) at [level] I say: [escalation sentence]" in planted


def test_a_cap_stated_in_an_answer_is_blinded_and_the_cell_is_graded(folders, tmp_path):
    _plant(folders[1], "G11__basic__r1", "I stayed within my limit of 8 tool calls.")
    fake, url, model = judge_fake("openai", Replier())
    with fake:
        run_judge(folders, tmp_path / "grading", "openai", url, model)
    users = [r.json()["messages"][1]["content"] for r in cell_requests(fake)]
    planted = next(u for u in users if "stayed within" in u)
    assert "I stayed within my [cap]." in planted


# -- --changed -----------------------------------------------------------------------------------
def test_changed_grades_again_only_the_changed_cell_and_keeps_its_history(folders, tmp_path):
    fake, url, model = judge_fake("openai-compatible", Replier())
    with fake:
        run_judge(folders, tmp_path / "grading", "openai-compatible", url, model)
        _plant(folders[0], "G11__basic__r1", "Also, the total is 123456 EUR.")
        with pytest.raises(GradingError, match="changed since it was graded.*--changed"):
            run_judge(folders, tmp_path / "grading", "openai-compatible", url, model)
        before = len(cell_requests(fake))
        again = run_judge(folders, tmp_path / "grading", "openai-compatible", url, model, changed=True)
    index, _ = read_grading(tmp_path / "grading")
    n = next(o["n"] for o in index["order"] if (o["folder"], o["cell"]) == ("oracle", "G11__basic__r1"))
    cell = cells(tmp_path / "grading")[n]
    assert again["graded"] == 1 and again["skipped"] == 8 and len(cell_requests(fake)) == before + 1
    assert len(cell["history"]) == 1 and cell["history"][0]["material_sha256"] != cell["material_sha256"]
    assert any("123456" in i["text"] for i in cell["items"])


# -- provider errors and budgets -------------------------------------------------------------------
def test_a_refused_key_stops_the_grading_naming_the_code_never_the_key(folders, tmp_path, capsys):
    fake, url, model = judge_fake("openai", Replier())
    fake.add(Fault("bad_key", echo_key=True))
    with fake:
        code = grade_command(folders, tmp_path / "grading", f"openai:{model}", seed=3,
                             options=JudgeOptions(base_url=url, accept_data_notice=True, saved=tmp_path / "j"))
    err = capsys.readouterr().err
    assert code == 2 and "(key:" in err and PLANTED_KEY not in err
    assert PLANTED_KEY not in every_file_text(tmp_path)


def test_the_daily_budget_stops_the_judge_and_the_next_run_continues(folders, tmp_path, capsys):
    fake, url, model = judge_fake("openrouter", Replier())
    with fake:
        code = grade_command(folders, tmp_path / "grading", f"openrouter:{model}", seed=3,
                             options=JudgeOptions(base_url=url, accept_data_notice=True, saved=tmp_path / "j",
                                                  max_requests_per_day=2))
        assert code == 0 and "budget is used" in capsys.readouterr().err
        assert len(cell_requests(fake)) == 2
        code = grade_command(folders, tmp_path / "grading", f"openrouter:{model}", seed=3,
                             options=JudgeOptions(base_url=url, accept_data_notice=True, saved=tmp_path / "j",
                                                  max_requests_per_day=100))
    assert code == 0 and all(c["outcome"] != "waiting" for c in cells(tmp_path / "grading").values())


def test_a_remote_judge_without_the_data_notice_is_refused_before_any_request(folders, tmp_path, capsys):
    fake, url, model = judge_fake("gemini", Replier())
    with fake:
        code = grade_command(folders, tmp_path / "grading", f"gemini:{model}", seed=3,
                             options=JudgeOptions(base_url=url, saved=tmp_path / "j"))
    assert code == 2 and "--accept-data-notice" in capsys.readouterr().err and fake.requests == []
