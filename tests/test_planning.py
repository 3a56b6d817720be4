"""Planning: models from options and from a --models file, and the sorted cell list."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_assistant_eval.suites.plan import ModelSpec, UsageError, parse_models, read_models_file


def test_models_come_from_preset_colon_model_or_from_provider_and_model():
    assert parse_models(None, ["scripted:oracle", "scripted:invents"]) == [
        ModelSpec("scripted", "oracle"), ModelSpec("scripted", "invents")]
    assert parse_models("scripted", ["oracle"]) == [ModelSpec("scripted", "oracle")]


def test_an_unknown_preset_or_scripted_model_is_refused_naming_the_known_ones():
    with pytest.raises(UsageError, match="known presets: .*openrouter"):
        parse_models(None, ["nope:m"])
    with pytest.raises(UsageError, match="built-in assistants are: oracle"):
        parse_models(None, ["scripted:genius"])


def test_a_models_file_lists_models_with_their_addresses(tmp_path: Path):
    file = tmp_path / "models.txt"
    file.write_text("# the calibration\nscripted:oracle\nopenai-compatible:qwen base_url=http://127.0.0.1:8000/v1\n"
                    "\nollama:llama3  # local\n")
    specs = parse_models(None, [], None, file)
    assert specs == [ModelSpec("scripted", "oracle"),
                     ModelSpec("openai-compatible", "qwen", "http://127.0.0.1:8000/v1"),
                     ModelSpec("ollama", "llama3")]


def test_a_bad_line_of_a_models_file_is_named_with_its_line(tmp_path: Path):
    file = tmp_path / "models.txt"
    file.write_text("scripted:oracle\nscripted:invents url=x\n")
    with pytest.raises(UsageError, match=r"models.txt:2: expected 'PRESET:MODEL \[base_url=URL\]'"):
        read_models_file(file)
    file.write_text("oracle\n")
    with pytest.raises(UsageError, match=r"models.txt:1: 'oracle' needs its preset"):
        read_models_file(file)


def test_a_model_named_twice_is_refused(tmp_path: Path):
    file = tmp_path / "models.txt"
    file.write_text("scripted:oracle\n")
    with pytest.raises(UsageError, match="named twice"):
        parse_models(None, ["scripted:oracle"], None, file)


def test_the_scenario_s01_is_planned_only_at_each_models_automatic_level(calibration_dir, world_dir, tmp_path):
    from pytest_assistant_eval.suites.plan import RunOptions
    from pytest_assistant_eval.suites.calibration.plan import automatic_level, load_calibration, plan_cells

    cases, levels = load_calibration(calibration_dir, world_dir)
    specs = tuple(parse_models(None, ["scripted:oracle", "scripted:escalates-everything"]))
    options = RunOptions(world=world_dir, out=tmp_path, models=specs, calibration=calibration_dir, repeats=1)
    cells = plan_cells(cases, levels, options)
    scenario = cases.questions.scenario.id
    for spec in specs:
        auto = automatic_level(spec, levels)
        mine = [c for c in cells if c.model == spec.label and c.case_id == scenario]
        assert [(c.level, c.kind) for c in mine] == [(auto, "scenario")]
    assert len(levels.levels) > 1  # the other levels exist and plan no scenario
