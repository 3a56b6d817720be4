"""Generation settings (issue 33): parsed and refused, in the label, the identity and the setting key,
sent on the wire, and never pooled: one model at two temperatures is two rows of the leaderboard."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_assistant_eval.cli import main as cli_main
from pytest_assistant_eval.providers.generation import GenerationError, parse_settings, provider_options
from pytest_assistant_eval.suites.plan import UsageError, parse_models
from pytest_assistant_eval.tables.leaderboard import leaderboard_command
from tests.provider_runs_helpers import console, records, run_eval
from tests.reference_fake import ReferenceOpenAIFake


@given(st.floats(min_value=0.0, max_value=2.0, allow_nan=False))
def test_a_temperature_in_range_is_kept_as_given(value):
    assert parse_settings({"temperature": value}) == (("temperature", value),)


@given(st.one_of(st.floats(max_value=-1e-9), st.floats(min_value=2.0000001), st.just(float("nan")),
                 st.text(alphabet="abc", min_size=1)))
def test_a_temperature_out_of_range_or_not_a_number_is_refused(value):
    with pytest.raises(GenerationError, match="temperature must be"):
        parse_settings({"temperature": value})


@pytest.mark.parametrize(("preset", "values", "words"), [
    ("anthropic", {"seed": 1}, "Anthropic's Messages API has no seed"),
    ("anthropic", {"reasoning_effort": "high"}, "give --max-output-tokens above 16384"),
    ("anthropic", {"reasoning_effort": "low", "temperature": 0.5, "max_output_tokens": 9000},
     "refuses a temperature with extended thinking"),
    ("scripted", {"temperature": 0.2}, "do not sample"),
    ("agent", {"seed": 3}, "an agent's own model calls are its own"),
    ("ollama", {"reasoning_effort": "minimal"}, "Ollama's think takes low, medium or high"),
])
def test_a_setting_a_provider_has_none_of_is_refused(preset, values, words):
    with pytest.raises(GenerationError, match=words):
        provider_options(preset, parse_settings(values))


def test_settings_are_in_the_label_and_refused_settings_are_a_usage_error():
    spec, = parse_models(None, ["openai:gpt-4.1"], generation={"temperature": 0.2, "seed": 7, "top_p": None})
    assert spec.generation == (("temperature", 0.2), ("seed", 7))
    assert spec.label == "gpt-4.1_t0.2_s7" and spec.route == "openai"
    plain, = parse_models(None, ["openai:gpt-4.1"])
    assert plain.label == "gpt-4.1" and plain.generation == ()
    with pytest.raises(UsageError, match="anthropic:claude: seed: Anthropic's Messages API has no seed"):
        parse_models(None, ["anthropic:claude"], generation={"seed": 7})


def test_a_models_file_gives_each_model_its_own_settings(tmp_path):
    models = tmp_path / "models.txt"
    models.write_text("openai:gpt-4.1 temperature=0.2\nopenai:gpt-4.1-mini seed=5  # its own\n"
                      "openai:o4-mini\n", encoding="utf-8")
    specs = parse_models(None, [], models_file=models, generation={"temperature": 0.9})
    assert [(s.label, s.generation) for s in specs] == [
        ("gpt-4.1_t0.2", (("temperature", 0.2),)),
        ("gpt-4.1-mini_t0.9_s5", (("temperature", 0.9), ("seed", 5))),
        ("o4-mini_t0.9", (("temperature", 0.9),))]
    models.write_text("openai:gpt-4.1 warmth=0.2\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"models.txt:1: expected 'PRESET:MODEL \[base_url=URL\]' and generation settings as SETTING=VALUE"):
        parse_models(None, [], models_file=models)


@pytest.fixture
def oracle(world_dir, calibration_dir):
    fake = ReferenceOpenAIFake(calibration_dir, world_dir)
    try:
        yield fake
    finally:
        fake.close()


def _run(world: Path, out: Path, fake, *args: str):
    return run_eval(world, out, "--model", "openai-compatible:oracle", f"--base-url={fake.url}/v1",
                    "--levels", "basic", "--repeats", "1", "-k", "T01", *args)


def test_two_temperatures_of_one_model_are_two_settings_never_pooled(world_dir, tmp_path, oracle, capsys):
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    for folder, value in ((cold, "0.2"), (warm, "0.7")):
        result = _run(world_dir, folder, oracle, f"--temperature={value}", "--max-output-tokens=900")
        assert result.ret == 0, console(result)
    sent = {(r.json() or {}).get("temperature") for r in oracle.requests if r.path.endswith("/chat/completions")}
    assert sent == {0.2, 0.7}
    assert {(r.json() or {}).get("max_tokens") for r in oracle.requests if r.body} == {900}
    a, b = records(cold)["T01__basic__r1"], records(warm)["T01__basic__r1"]
    assert a["setting_key"]["generation"] == {"temperature": 0.2, "max_output_tokens": 900}
    assert b["setting_key"]["generation"] == {"temperature": 0.7, "max_output_tokens": 900}
    assert a["model"]["label"] == "oracle_t0.2_o900" and b["model"]["label"] == "oracle_t0.7_o900"
    run = json.loads((cold / "run.json").read_text(encoding="utf-8"))
    assert run["identity"]["generation"] == {"temperature": 0.2, "max_output_tokens": 900}

    assert cli_main(["grade-ai", str(cold), str(warm), "--dir", str(tmp_path / "grading")]) == 0
    capsys.readouterr()
    out = io.StringIO()
    assert leaderboard_command(tmp_path / "grading", out=out, fmt="text") == 0
    board = out.getvalue()
    # One model at two settings is two rows (issue 29's one identity per model names them by the
    # settings); each row's one task run is its own (here waiting for the owner's review, issue 29).
    for name in ("oracle (temperature=0.2, max_output_tokens=900)", "oracle (temperature=0.7, max_output_tokens=900)"):
        assert f"{name} 1 task run(s)" in board
        assert sum(line.startswith(name) for line in board.splitlines()) >= 2  # a row in each table

    # A resume of the cold folder with the warm setting is refused: its cells would mix two settings.
    again = _run(world_dir, cold, oracle, "--temperature=0.7", "--max-output-tokens=900", "--resume")
    assert again.ret != 0
    assert "generation" in console(again)


def test_assistant_eval_run_passes_the_agent_path_and_the_settings_to_the_plugin(tmp_path):
    from pytest_assistant_eval.cli import build_parser, pytest_args_for_run

    args, extra = build_parser().parse_known_args([
        "run", "--world", str(tmp_path), "--model", "agent:m:f", "--agent-path", str(tmp_path),
        "--temperature", "0.2", "--seed", "7", "--reasoning-effort", "low"])
    argv = pytest_args_for_run(args, extra)
    assert ["--agent-path", str(tmp_path.resolve())] == argv[argv.index("--agent-path"):argv.index("--agent-path") + 2]
    assert {"--temperature=0.2", "--seed=7", "--reasoning-effort=low"} <= set(argv)
    assert not any(a.startswith("--top-p") for a in argv)


def test_a_price_of_a_model_run_with_settings_is_the_models():
    from pytest_assistant_eval.tables.prices import route_key

    assert route_key("openai", "gpt-4.1 (temperature=0.2, seed=7)") == route_key("openai", "gpt-4.1") == "openai:gpt-4.1"
    with pytest.raises(GenerationError, match="max_output_tokens: the scripted assistants do not sample"):
        provider_options("scripted", parse_settings({"max_output_tokens": 500}))
