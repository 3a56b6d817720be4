"""Whole cells through the runner against fake provider servers (S4.3–S4.10, S4.14, S4.16).

Every run here is a separate pytest process with the plugin (``python -m pytest -c
calibration/pytest.ini``, what ``assistant-eval run`` starts), talking over real sockets to
a fake server on 127.0.0.1 in the provider's own wire format. The reference fakes answer
as the built-in reference assistants, so a provider cell can be compared with the same
cell of the ``scripted`` preset. Paired tasks whose first request cannot tell the pair
apart (the second task of a pair) are left out of the equality comparisons.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.provider_runs_helpers import (
    checkpoints,
    comparable,
    console,
    records,
    run_env,
    run_eval,
    spent,
)
from tests.providers.fakes.base import Answer, Call, Fault, Raw
from tests.providers.fakes.openai_fake import OpenAIFake
from tests.reference_fake import REFERENCE_FAKES

CELLS = "G01 or G11 or G21 or T01 or T07 or T10"  # a lookup, interpret, diagnose question and three tasks
SELECT = ("--levels", "basic", "--repeats", "1", "-k", CELLS)
ONE = ("--levels", "basic", "--repeats", "1", "-k", "G01")


@pytest.fixture(scope="module")
def scripted_records(world_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("scripted") / "results"
    result = run_eval(world_dir, out, "--model", "scripted:oracle", *SELECT)
    assert result.ret == 0, console(result)
    found = records(out)
    assert len(found) == 6, sorted(found)
    return found


def reference_fake(preset: str, calibration: Path, world: Path) -> tuple[Any, str]:
    cls, suffix = REFERENCE_FAKES[preset]
    fake = cls(calibration, world)
    return fake, fake.url + suffix


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("preset", ["openai", "openrouter", "anthropic", "gemini", "ollama", "openai-compatible"])
def test_a_provider_cell_gives_the_record_the_scripted_preset_gives(preset, stream, scripted_records,
                                                                    calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake(preset, calibration_dir, world_dir)
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, "--model", f"{preset}:oracle", f"--base-url={url}",
                          "--accept-data-notice", *SELECT, *(() if stream else ("--no-stream",)))
    assert result.ret == 0, console(result)
    found = records(out)
    assert sorted(found) == sorted(scripted_records)
    for cell, record in found.items():
        assert record["model"]["preset"] == preset
        assert comparable(record) == comparable(scripted_records[cell]), cell
    bodies = [r.json() for r in fake.requests if r.body]
    asked_stream = {b.get("stream", True) if preset == "ollama" else bool(b.get("stream")) for b in bodies
                    if isinstance(b, dict)}
    if preset == "gemini":  # Gemini says it in the method, not the body
        asked_stream = {":streamGenerateContent" in r.path for r in fake.requests}
    assert asked_stream == {stream}
    # S4.16: the run's requests and tokens, labelled as calibration use, on the console and in run.json
    assert re.search(rf"usage {re.escape(preset)}:oracle \(calibration\): {len(fake.requests)} request\(s\)",
                     console(result)), console(result)[-2000:]


# -- the fault matrix (S4.7, S4.9, S4.10) -------------------------------------------------------------

KEPT = "G01__basic__r1: kept up to turn 1, request 1; run again with --resume to continue it"
UNSAVED_KEY = ("G01__basic__r1: nothing was saved for this cell: the key was refused. Store a valid key "
               "(keyring service 'assistant-eval', username 'openai', or OPENAI_API_KEY), then run again with --resume.")
UNSAVED_MODEL = "G01__basic__r1: nothing was saved for this cell: the service does not know the model 'oracle'."
UNREADABLE = [Answer(calls=[Call("search_contacts", '{"query": "Jo', id=f"call_bad{i}")]) for i in range(3)]

# fault id -> (preset, items queued before the reference answers, code, exit code, what is saved,
#              console text, provider's words on the console)
FAULTS: dict[str, tuple[str, list[Any], str, int, str, str, str | None]] = {
    "429 beyond the retry budget": ("openai", [Fault("rate_limit", retry_after=500)], "rate_limit", 1, "checkpoint",
                                    KEPT, "provider: HTTP 429 rate_limit_exceeded: Rate limit reached"),
    "503 overloaded": ("openai", [Fault("overloaded")] * 4, "overloaded", 1, "checkpoint", KEPT,
                       "provider: HTTP 503 server_is_overloaded: The engine is currently overloaded"),
    "529 overloaded": ("anthropic", [Raw(529, {"content-type": "application/json"},
                                         b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')] * 4,
                       "overloaded", 1, "checkpoint", KEPT, "provider: HTTP 529 overloaded_error: Overloaded"),
    "daily quota": ("openrouter", [Fault("daily_quota")], "daily_quota", 0, "checkpoint",
                    "Daily request budget used. Run again with --resume --accept-data-notice tomorrow.", None),
    "gemini tpm_input twice": ("gemini", [Fault("tpm_input", retry_after=0.05)] * 2, "tpm_input", 0, "na record",
                               "G01__basic__r1: not applicable (provider quota per request)",
                               "provider: HTTP 429 RESOURCE_EXHAUSTED: You exceeded your current quota"),
    "cut stream": ("openai", [Fault("cut")] * 4, "stream_cut", 1, "checkpoint", KEPT,
                   "provider: no answer: the answer stream from http://127.0.0.1:"),
    "unreadable tool calls three times": ("openai", UNREADABLE, "tool_call_unreadable", 1, "checkpoint",
                                          "1 cell(s) kept after a tool call the service could not read: "
                                          "G01__basic__r1; run again with --resume to continue them.", None),
    "context too long": ("openai", [Fault("context_too_long")], "context_too_long", 0, "record", "", None),
    "refusal": ("openai", [Fault("refusal")], "refusal", 0, "record", "", None),
    "bad key 401": ("openai", [Fault("bad_key")], "key", 1, "nothing", UNSAVED_KEY,
                    "provider: HTTP 401 invalid_api_key: Incorrect API key provided"),
    "unknown model 404": ("openai", [Fault("unknown_model")], "model", 1, "nothing", UNSAVED_MODEL,
                          "provider: HTTP 404 model_not_found: The model `oracle` does not exist"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_matrix(fault, calibration_dir, world_dir, tmp_path):
    preset, items, code, exit_code, saved, message, words = FAULTS[fault]
    fake, url = reference_fake(preset, calibration_dir, world_dir)
    fake.add(*items)
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, "--model", f"{preset}:oracle", f"--base-url={url}",
                          "--accept-data-notice", *ONE)
    text = console(result)
    assert result.ret == exit_code, text
    assert message in text, text
    if words:
        assert words in text, text
    cells, kept, entries = records(out), checkpoints(out), spent(out)["cells"].get("G01__basic__r1", [])
    if saved == "checkpoint":
        assert not cells and list(kept) == ["G01__basic__r1"]
        assert kept["G01__basic__r1"]["stop"]["code"] == code
        assert [e["outcome"] for e in entries] == ["kept"]
    elif saved == "na record":
        assert not kept and cells["G01__basic__r1"]["status"] == "na"
        record = cells["G01__basic__r1"]
        assert record["na_reason"] == "provider quota per request"
        assert record["quota"] and record["stops"][-1]["code"] == "tpm_input"
        assert record["requests"][-1]["stop_reason"] == "tpm_input"
        assert record["stops"][-1]["request_sha256"] and record["stops"][-1]["input_tokens_estimate"]
        assert [e["outcome"] for e in entries] == ["na"]
        assert [a["code"] for a in entries[0]["attempts"]] == ["tpm_input", "tpm_input"]
    elif saved == "record":
        assert not kept and cells["G01__basic__r1"]["stop_reason"] == code
        # the graded answer is the cell's outcome; the provider's words of it stay with the record
        assert [a["code"] for a in cells["G01__basic__r1"]["attempts"]] == [code]
        assert [e["event"] for e in entries] == ["saved"]
        entries = []
    else:
        assert not cells and not kept
        assert [e["outcome"] for e in entries] == ["unsaved"]
    if entries:
        stop = entries[-1]["stop"]
        assert stop["code"] == code
        assert entries[-1]["pace"] == 0.0 and entries[-1]["stream"] is True
        assert all(len(a["message"] or "") <= 300 for a in entries[-1]["attempts"])
        assert len(stop["message"] or "") <= 300
        if code in ("stream_cut", "tool_call_unreadable"):
            assert stop["status"] is None and stop["provider_code"] is None and stop["message"] is None
        if code in ("rate_limit", "overloaded", "stream_cut"):
            # the retries of the request are each a failed attempt with the provider's words
            assert entries[-1]["attempts"] and {a["code"] for a in entries[-1]["attempts"]} == {code}


def test_a_saved_cell_keeps_the_failed_attempts_its_provider_retried(calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake("openai", calibration_dir, world_dir)
    fake.add(Fault("overloaded"), Fault("server_error"))
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={url}", "--accept-data-notice",
                          *ONE)
    assert result.ret == 0, console(result)
    record = records(out)["G01__basic__r1"]
    assert [(a["code"], a["status"], a["turn"], a["request"]) for a in record["attempts"]] == [
        ("overloaded", 503, 0, 1), ("busy", 500, 0, 1)]
    entries = spent(out)["cells"]["G01__basic__r1"]
    assert [e["event"] for e in entries] == ["saved"]
    assert [a["code"] for a in entries[0]["attempts"]] == ["overloaded", "busy"]


def test_the_same_request_stopped_three_times_is_named(calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake("openai", calibration_dir, world_dir)
    out = tmp_path / "results"
    args = ("--model", "openai:oracle", f"--base-url={url}", "--accept-data-notice", *ONE)
    texts = []
    with fake:
        for run in range(3):
            fake.add(*[Fault("overloaded")] * 4)
            result = run_eval(world_dir, out, *args, *(("--resume",) if run else ()))
            assert result.ret == 1, console(result)
            texts.append(console(result))
    assert "the same request failed" not in texts[1]
    assert "G01__basic__r1: the same request failed 3 times; --skip it or wait" in texts[2], texts[2]
    entries = spent(out)["cells"]["G01__basic__r1"]
    assert [e["outcome"] for e in entries] == ["kept"] * 3
    assert len({e["request_sha256"] for e in entries}) == 1


def test_earlier_attempts_texts_are_shown_once_after_the_providers_words(calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake("openai", calibration_dir, world_dir)
    fake.add(Fault("overloaded"), Fault("server_error"), Fault("server_error"), Fault("overloaded"))
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={url}", "--accept-data-notice",
                          *ONE)
    text = console(result)
    assert result.ret == 1, text
    words = text[text.index(KEPT):]
    assert words.count("The server had an error while processing your request.") == 1
    assert "provider: HTTP 503 server_is_overloaded" in words
    # the stopping answer's text is not repeated among the earlier ones
    assert words.count("The engine is currently overloaded") == 1


# -- the daily budget over two workers (S4.6, S4.14) -------------------------------------------------

WORKER = re.compile(r"^\[(?P<worker>gw\d+)\]")


def test_a_daily_budget_of_45_over_two_workers_sends_exactly_45_requests(calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake("openai", calibration_dir, world_dir)
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={url}", "--accept-data-notice",
                          "--levels", "basic,standard", "--repeats", "1", "-k", "G", "--max-requests-per-day", "45",
                          "-n", "2", "--spread-route", "-v")
    text = console(result)
    assert result.ret == 0, text
    assert len(fake.requests) == 45
    assert "Daily request budget used. Run again with --resume" in text
    assert {m.group("worker") for line in result.outlines for m in [WORKER.match(line)] if m} == {"gw0", "gw1"}
    kept = checkpoints(out)
    assert kept, "the cells stopped in the middle keep their checkpoints"
    assert all(cp["stop"]["code"] == "daily_quota" for cp in kept.values())
    assert sum(sum(r["requests_by_day"].values()) for r in records(out).values()) + sum(
        sum(cp["requests_by_day"].values()) for cp in kept.values()) == 45
    # S4.16: both workers added what they spent to run.json's run entry
    usage = json.loads((out / "run.json").read_text(encoding="utf-8"))["runs"][-1]["usage"]
    assert usage["openai:oracle"]["requests"] == 45
    assert usage["openai:oracle"]["label"] == "openai:oracle (calibration)"
    assert "usage openai:oracle (calibration): 45 request(s)" in text


def test_without_spread_route_one_route_stays_on_one_worker(calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake("openai", calibration_dir, world_dir)
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={url}", "--accept-data-notice",
                          "--levels", "basic", "--repeats", "1", "-k", "G0", "-n", "2", "-v")
    assert result.ret == 0, console(result)
    workers = {m.group("worker") for line in result.outlines for m in [WORKER.match(line)] if m}
    assert len(workers) == 1, workers


@pytest.mark.parametrize("items, asked_after", [
    ([Fault("rate_limit", retry_after=500)], False),  # temporary: the run stops (S4.7)
    ([Fault("bad_key")], False),  # fatal: the run stops
    (UNREADABLE, True),  # one answer's format problem: the run goes on with the next cell
], ids=["temporary", "fatal", "format"])
def test_a_temporary_or_fatal_error_stops_the_run_an_unreadable_tool_call_does_not(items, asked_after,
                                                                                   calibration_dir, world_dir,
                                                                                   tmp_path):
    fake, url = reference_fake("openai", calibration_dir, world_dir)
    fake.add(*items)
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={url}", "--accept-data-notice",
                          "--levels", "basic", "--repeats", "1", "-k", "G01 or G02")
    assert result.ret == 1, console(result)
    assert ("G02__basic__r1" in records(out)) is asked_after


# -- Ollama variants per context size (S4.5) ----------------------------------------------------------

GB = 1_000_000_000


def ollama_run(calibration: Path, world: Path, out: Path, spec: dict[str, Any], *extra: str):
    cls, _ = REFERENCE_FAKES["ollama"]
    fake = cls(calibration, world, models={"oracle": spec})
    with fake:
        result = run_eval(world, out, "--model", "ollama:oracle", f"--base-url={fake.url}", "--levels", "basic",
                          "--repeats", "1", "-k", "G01 or G02", "--ollama-context", "basic=16384", *extra)
    chats = [r.json() for r in fake.requests if r.path == "/api/chat" and (r.json() or {}).get("messages")]
    return result, chats


def test_an_ollama_variant_that_fits_runs_with_its_context_recorded(calibration_dir, world_dir, tmp_path):
    out = tmp_path / "results"
    result, chats = ollama_run(calibration_dir, world_dir, out, {"size": 5 * GB, "vram": 5 * GB})
    assert result.ret == 0, console(result)
    found = records(out)
    assert sorted(found) == ["G01__basic__r1", "G02__basic__r1"]
    assert all(r["ollama"] == {"num_ctx": 16384, "context": 16384} and r["cpu_offload"] is None
               for r in found.values())
    assert chats and {c["options"]["num_ctx"] for c in chats} == {16384}
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["identity"]["ollama_contexts"] == {"basic": 16384}
    probe = run["runs"][-1]["ollama"]["basic"]
    assert probe["context"] == 16384 and probe["size_vram"] == 5 * GB and probe["applicable"] is True


@pytest.mark.parametrize("extra", [(), ("--allow-cpu-offload",)], ids=["", "even-with-cpu-offload"])
def test_a_smaller_context_than_asked_is_never_applicable(extra, calibration_dir, world_dir, tmp_path):
    out = tmp_path / "results"
    result, chats = ollama_run(calibration_dir, world_dir, out, {"max_ctx": 8192}, *extra)
    assert result.ret == 0, console(result)
    assert chats == []  # no cell was asked
    found = records(out)
    assert {r["status"] for r in found.values()} == {"na"} and len(found) == 2
    assert all(r["na_reason"] == "context" and "runs with 8192 tokens, 16384 were asked" in r["why"]
               for r in found.values())
    assert "G01__basic__r1: not applicable (context): runs with 8192 tokens" in console(result)


def test_a_variant_not_in_gpu_memory_is_not_applicable_unless_cpu_offload_is_allowed(calibration_dir, world_dir,
                                                                                     tmp_path):
    spec = {"size": 8 * GB, "vram": 6 * GB}
    result, chats = ollama_run(calibration_dir, world_dir, tmp_path / "refused", spec)
    assert result.ret == 0 and chats == []
    assert {r["status"] for r in records(tmp_path / "refused").values()} == {"na"}
    assert "not fully in GPU memory" in console(result)
    result, chats = ollama_run(calibration_dir, world_dir, tmp_path / "allowed", spec, "--allow-cpu-offload")
    assert result.ret == 0, console(result)
    found = records(tmp_path / "allowed")
    assert len(found) == 2 and all("status" not in r for r in found.values())
    offload = found["G01__basic__r1"]["cpu_offload"]
    assert offload["size"] == 8 * GB and offload["size_vram"] == 6 * GB and offload["cpu_share"] == pytest.approx(0.25)


def test_a_cell_not_applicable_for_the_per_request_quota_is_not_asked_again(calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake("gemini", calibration_dir, world_dir)
    fake.add(Fault("tpm_input", retry_after=0.05), Fault("tpm_input", retry_after=0.05))
    out = tmp_path / "results"
    args = ("--model", "gemini:oracle", f"--base-url={url}", "--accept-data-notice", *ONE)
    with fake:
        first = run_eval(world_dir, out, *args)
        sent = len(fake.requests)
        again = run_eval(world_dir, out, *args, "--resume")
    assert first.ret == 0 and again.ret == 0, console(again)
    assert len(fake.requests) == sent == 2
    assert "G01__basic__r1: not applicable (provider quota per request) in an earlier run" in console(again)


def test_a_cell_not_applicable_for_its_context_is_asked_once_its_setting_fits(calibration_dir, world_dir, tmp_path):
    cls, _ = REFERENCE_FAKES["ollama"]
    out = tmp_path / "results"
    args = ("--model", "ollama:oracle", "--levels", "basic", "--repeats", "1", "-k", "G01",
            "--ollama-context", "basic=16384")
    with cls(calibration_dir, world_dir, models={"oracle": {"max_ctx": 8192}}) as fake:
        first = run_eval(world_dir, out, *args, f"--base-url={fake.url}")
        assert first.ret == 0 and records(out)["G01__basic__r1"]["status"] == "na", console(first)
        fake.models["oracle"] = {"size": GB, "vram": GB}  # more memory: the variant now gets its context
        again = run_eval(world_dir, out, *args, f"--base-url={fake.url}", "--resume")
    assert again.ret == 0, console(again)
    record = records(out)["G01__basic__r1"]
    assert "status" not in record and record["ollama"] == {"num_ctx": 16384, "context": 16384}


def test_every_stop_names_its_request_and_its_corrected_input_token_estimate(calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake("openai", calibration_dir, world_dir)
    # the first answer is read (its usage reports 210 input tokens), the second request is refused
    fake.add(Answer(calls=[Call("search_contacts", {"query": "Jo"}, id="call_1")], usage=(210, 7)),
             Fault("rate_limit", retry_after=500))
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={url}", "--accept-data-notice",
                          *ONE)
    text = console(result)
    entry = spent(out)["cells"]["G01__basic__r1"][-1]
    checkpoint = checkpoints(out)["G01__basic__r1"]
    pending = checkpoint["pending"]
    assert entry["request"] == 2 and entry["request_sha256"] == pending["request_sha256"]
    # corrected by the ratio of the first request's reported input tokens to its raw estimate
    from pytest_assistant_eval.conversation.loop import estimate_tokens
    from pytest_assistant_eval.messages import Message
    from pytest_assistant_eval.suites.calibration.plan import level_setting, load_calibration

    cases, levels = load_calibration(calibration_dir)
    setting = level_setting(levels.levels["basic"])
    question = next(q for q in cases.questions.questions if q.id == "G01")
    first = estimate_tokens([Message(role="system", content=setting.instructions),
                             Message(role="user", content=question.text)], setting.tools)
    assert pending["estimate_ratio"] == pytest.approx(210 / first)
    assert entry["input_tokens_estimate"] == round(pending["input_tokens_raw"] * pending["estimate_ratio"])
    assert f"request 2 ({pending['request_sha256'][:12]}), about {entry['input_tokens_estimate']} input tokens" in text


def test_an_ollama_model_forwarded_to_a_cloud_needs_that_routes_notice(calibration_dir, world_dir, tmp_path):
    spec = {"size": GB, "vram": GB, "remote_host": "https://ollama.com:443"}
    refused, chats = ollama_run(calibration_dir, world_dir, tmp_path / "refused", spec)
    assert refused.ret == 1, console(refused)
    assert "--accept-data-notice" in console(refused) and chats == []
    assert records(tmp_path / "refused") == {}
    accepted, chats = ollama_run(calibration_dir, world_dir, tmp_path / "accepted", spec, "--accept-data-notice")
    assert accepted.ret == 0, console(accepted)
    assert sorted(records(tmp_path / "accepted")) == ["G01__basic__r1", "G02__basic__r1"]
