from pathlib import Path

import pytest

from pytest_assistant_eval.suites.calibration.levels import (
    BEHAVIOUR_VERSION,
    DEFAULT_TOOL_NAMES,
    Level,
    Levels,
    LevelsError,
    load_levels,
    placement,
    setting_change,
    setting_key,
)

SHIPPED = Path(__file__).resolve().parents[1] / "calibration" / "levels.yaml"

VALID = """\
levels_version: "7"
levels:
  basic:
    instructions: basic.md
    tools: [search_contacts, get_contact]
    caps:
      max_tool_calls: 4
      max_rounds: 5
      max_output_tokens: 512
    result_cap_chars: 2000
    context_window: 16384
    history:
      compact_at: 0.7
      keep_last_rounds: 2
    escalation_sentence: "Handing this to the standard level."
    answers: [lookup]
  standard:
    instructions: standard.md
    tools: [search_contacts, get_contact, send_message]
    caps:
      max_tool_calls: 8
      max_rounds: 8
      max_output_tokens: 1024
    result_cap_chars: 4000
    context_window: 32768
    history:
      compact_at: 0.75
      keep_last_rounds: 3
    escalation_sentence: "Handing this to a person."
    answers: [lookup, interpret]
"""


def write_levels(tmp_path: Path, text: str = VALID, *, basic_md: str | None = None) -> Path:
    (tmp_path / "instructions").mkdir(exist_ok=True)
    (tmp_path / "instructions" / "basic.md").write_text(
        basic_md if basic_md is not None else "Use the tools.\n{{escalation_sentence}}\n", encoding="utf-8"
    )
    (tmp_path / "instructions" / "standard.md").write_text("Use the tools.\n{{escalation_sentence}}\n", encoding="utf-8")
    path = tmp_path / "levels.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def errors_of(tmp_path: Path, text: str, **kwargs) -> list[str]:
    with pytest.raises(LevelsError) as info:
        load_levels(write_levels(tmp_path, text, **kwargs))
    return info.value.errors


def tool_defs(names=DEFAULT_TOOL_NAMES, description="does a thing"):
    return [{"name": n, "description": f"{n} {description}", "parameters": {"type": "object"}} for n in names]


# --- the shipped file -------------------------------------------------------


def test_shipped_levels_load_with_the_three_default_levels():
    levels = load_levels(SHIPPED)
    assert levels.names == ["basic", "standard", "advanced"]
    assert [lv.result_cap_chars for lv in levels] == [2000, 4000, 8000]
    assert [lv.context_window for lv in levels] == [16384, 32768, 65536]
    assert [lv.answers for lv in levels] == [
        ("lookup",),
        ("lookup", "interpret"),
        ("lookup", "interpret", "diagnose"),
    ]


def test_shipped_basic_offers_fewer_tools_and_the_higher_levels_offer_every_tool():
    levels = load_levels(SHIPPED)
    assert set(levels["basic"].tools) < set(DEFAULT_TOOL_NAMES)
    assert set(DEFAULT_TOOL_NAMES) - set(levels["basic"].tools) == {"get_event", "move_event", "cancel_event",
                                                                    "cancel_booking"}
    for name in ("standard", "advanced"):
        assert set(levels[name].tools) == set(DEFAULT_TOOL_NAMES)


def test_basic_offers_every_tool_a_lookup_or_a_task_needs(calibration_dir):
    """Tasks run at every level: a tool a task acts through (or a lookup reads) missing at basic would fail them."""
    from pytest_assistant_eval.suites.calibration.plan import load_calibration

    cases, levels = load_calibration(calibration_dir)
    basic = set(levels["basic"].tools)
    for task in cases.tasks:
        assert {a.tool for a in task.required_actions} <= basic, task.id
        assert {c.tool for c in task.lookups} <= basic, task.id
    for question in cases.questions.questions:
        if question.cls == "lookup":
            assert {c.tool for c in cases.key.entries[question.id].oracle_calls} <= basic


def test_shipped_escalation_sentences_name_the_next_level_and_end_with_a_human():
    levels = load_levels(SHIPPED)
    assert "standard" in levels["basic"].escalation_sentence
    assert "advanced" in levels["standard"].escalation_sentence
    assert "human" in levels["advanced"].escalation_sentence
    for level in levels:
        assert level.escalation_sentence in level.instructions_text
        assert "{{" not in level.instructions_text


# --- loading ----------------------------------------------------------------


def test_a_valid_file_loads_into_frozen_levels(tmp_path):
    levels = load_levels(write_levels(tmp_path))
    assert isinstance(levels, Levels) and levels.version == "7"
    basic = levels["basic"]
    assert isinstance(basic, Level)
    assert basic.tools == ("search_contacts", "get_contact")
    assert (basic.max_tool_calls, basic.max_rounds, basic.max_output_tokens) == (4, 5, 512)
    assert (basic.compact_at, basic.keep_last_rounds) == (0.7, 2)
    assert basic.instructions_file == "basic.md"
    assert basic.instructions_text == "Use the tools.\nHanding this to the standard level.\n"
    assert levels.higher("basic") == "standard" and levels.higher("standard") is None
    with pytest.raises(AttributeError):
        basic.max_rounds = 9  # type: ignore[misc]


@pytest.mark.parametrize(
    "old, new, line, message",
    [
        ('levels_version: "7"', "levels_versoin: 7", 1, "unknown key 'levels_versoin'"),
        ("    tools: [search_contacts, get_contact]", "    tools: [search_contacts, get_contacts]", 5, "unknown tool 'get_contacts'"),
        ("      max_rounds: 5", "      max_rounds: five", 8, "max_rounds must be a positive integer, got 'five'"),
        ("      max_rounds: 5", "      max_rounds: 0", 8, "max_rounds must be a positive integer"),
        ("      compact_at: 0.7", "      compact_at: 1.5", 13, "compact_at must be a fraction in (0, 1]"),
        ("      keep_last_rounds: 2", "      keep_last_rounds: -1", 14, "keep_last_rounds must be a whole number"),
        ("    answers: [lookup]", "    answers: [lookups]", 16, "unknown class 'lookups'"),
        ("    instructions: basic.md", "    instructions: missing.md", 4, "instructions file 'missing.md' not found"),
        ("    instructions: basic.md", "    instructions: ../basic.md", 4, "must be a file name under instructions/"),
        ('    escalation_sentence: "Handing this to the standard level."', '    escalation_sentence: ""', 15, "escalation_sentence must be a non-empty"),
        ("    result_cap_chars: 2000", "    result_cap_chars: 2000\n    colour: blue", 11, "unknown key 'colour'"),
        ("    result_cap_chars: 2000\n", "", 3, "result_cap_chars is missing"),
        ("      max_output_tokens: 512", "      max_output_tokens: 20000", 9, "must be below context_window"),
        ("    tools: [search_contacts, get_contact]", "    tools: [get_contact, get_contact]", 5, "'get_contact' is listed twice"),
        ("    tools: [search_contacts, get_contact]", "    tools: []", 5, "tools must be a non-empty list"),
        ('    escalation_sentence: "Handing this to a person."', '    escalation_sentence: "Handing this to the standard level."', 29, "share one escalation sentence"),
    ],
)
def test_each_loader_error_names_file_line_and_problem(tmp_path, old, new, line, message):
    assert old in VALID
    errors = errors_of(tmp_path, VALID.replace(old, new, 1))
    assert any(e.startswith(f"{tmp_path / 'levels.yaml'}:{line}: ") and message in e for e in errors), errors


def test_a_duplicate_level_is_reported_at_its_line(tmp_path):
    text = VALID + VALID.split("levels:\n", 1)[1].replace("  standard:", "  other:", 1)
    errors = errors_of(tmp_path, text)
    assert any(":31: " in e and "duplicate key 'basic'" in e for e in errors), errors


def test_all_errors_are_reported_at_once(tmp_path):
    text = VALID.replace("max_rounds: 5", "max_rounds: x").replace("answers: [lookup]", "answers: [nope]")
    errors = errors_of(tmp_path, text)
    assert len(errors) == 2


def test_invalid_yaml_names_its_line(tmp_path):
    errors = errors_of(tmp_path, VALID.replace("    caps:\n", "    caps: [\n", 1))
    assert len(errors) == 1 and "not valid YAML" in errors[0]
    assert errors[0].startswith(f"{tmp_path / 'levels.yaml'}:")


def test_an_empty_file_and_a_missing_version_are_refused(tmp_path):
    assert "is empty" in errors_of(tmp_path, "")[0]
    errors = errors_of(tmp_path, VALID.replace('levels_version: "7"\n', ""))
    assert any(":1: levels_version is missing" in e for e in errors)


def test_instructions_must_carry_the_escalation_sentence(tmp_path):
    errors = errors_of(tmp_path, VALID, basic_md="Use the tools.\n")
    assert any(":4: " in e and "escalation sentence" in e for e in errors), errors
    levels = load_levels(write_levels(tmp_path, VALID, basic_md="Say: Handing this to the\nstandard level.\n"))
    assert levels["basic"].instructions_text.startswith("Say:")


def test_unknown_tools_are_accepted_when_the_world_is_not_ours(tmp_path):
    path = write_levels(tmp_path, VALID.replace("get_contact]", "fly_drone]", 1))
    assert load_levels(path, known_tools=None)["basic"].tools == ("search_contacts", "fly_drone")


# --- the setting key --------------------------------------------------------


@pytest.fixture
def basic(tmp_path) -> Level:
    return load_levels(write_levels(tmp_path))["basic"]


def test_setting_key_has_caps_window_history_hashes_and_behaviour(basic):
    key = setting_key(basic, tool_defs())
    assert key["max_tool_calls"] == 4 and key["context_window"] == 16384
    assert key["history"] == {"compact_at": 0.7, "keep_last_rounds": 2}
    assert key["behaviour"] == BEHAVIOUR_VERSION == "b1"
    assert len(key["system_hash"]) == 64 and len(key["tools_hash"]) == 64


def test_hashes_do_not_change_without_a_change(basic):
    assert setting_key(basic, tool_defs()) == setting_key(basic, list(reversed(tool_defs())))


def test_tools_hash_ignores_tools_the_level_does_not_offer_and_extra_fields(basic):
    defs = tool_defs()
    more = [dict(d, consequential=True) for d in defs]
    more[-1]["description"] = "changed"  # get_run, not a basic tool here
    assert setting_key(basic, defs)["tools_hash"] == setting_key(basic, more)["tools_hash"]


def test_tools_hash_changes_with_a_description_parameters_or_order(basic):
    base = setting_key(basic, tool_defs())
    changed_description = tool_defs()
    changed_description[1]["description"] = "finds a contact"
    changed_parameters = tool_defs()
    changed_parameters[0]["parameters"] = {"type": "object", "properties": {"q": {"type": "string"}}}
    reordered = Level(**{**basic.__dict__, "tools": tuple(reversed(basic.tools))})
    for key in (
        setting_key(basic, changed_description),
        setting_key(basic, changed_parameters),
        setting_key(reordered, tool_defs()),
    ):
        assert key["tools_hash"] != base["tools_hash"]
        assert key["system_hash"] == base["system_hash"]


def test_system_hash_changes_with_the_instructions_only(basic):
    base = setting_key(basic, tool_defs())
    edited = Level(**{**basic.__dict__, "instructions_text": basic.instructions_text + " "})
    key = setting_key(edited, tool_defs())
    assert key["system_hash"] != base["system_hash"]
    assert key["tools_hash"] == base["tools_hash"]


def test_a_missing_tool_definition_is_an_error(basic):
    with pytest.raises(ValueError, match="get_contact"):
        setting_key(basic, tool_defs(["search_contacts"]))


def test_setting_change_says_why_a_checkpoint_cannot_continue(basic):
    key = setting_key(basic, tool_defs())
    assert setting_change(key, dict(key)) is None
    assert setting_change(key, {**key, "context_window": 8192}) == "the level setting changed: window"
    assert setting_change(key, {**key, "tools_hash": "x"}) == "the instructions or tools changed"
    assert setting_change(key, {**key, "behaviour": "b2"}) == "the assistant's behaviour changed since this checkpoint"


# --- placement --------------------------------------------------------------


@pytest.mark.parametrize(
    "name, size, window, expected",
    [
        ("llama3.2:3b", None, 131072, "basic"),
        ("qwen2.5", 7.0, 131072, "basic"),
        ("qwen2.5:14b", None, 16384, "basic"),
        ("qwen2.5:14b", None, 32768, "standard"),
        ("mistral-small", 24, 131072, "standard"),
        ("llama3.3:70b", None, 131072, "advanced"),
        ("llama3.3:70b", None, 32768, "standard"),
        ("mixtral:8x22b", None, 65536, "advanced"),
        ("claude-opus-4-1", None, 200000, "advanced"),
        ("claude-sonnet-4-5", None, None, "advanced"),
        ("claude-3-5-haiku", None, 200000, "standard"),
        ("gpt-4o", None, 128000, "advanced"),
        ("gpt-4o-mini", None, 128000, "standard"),
        ("gpt-5", None, 400000, "advanced"),
        ("gpt-5-nano", None, 400000, "standard"),
        ("openai/o3", None, 200000, "advanced"),
        ("gemini-2.5-pro", None, 1048576, "advanced"),
        ("gemini-2.5-flash", None, 1048576, "standard"),
        ("some-model", None, None, "standard"),
        ("scripted:oracle", None, None, "advanced"),
    ],
)
def test_placement_table(name, size, window, expected):
    assert placement(name, size, window, load_levels(SHIPPED)) == expected


def test_scripted_provider_models_are_placed_advanced():
    assert placement("oracle", None, 4096, load_levels(SHIPPED), provider="scripted") == "advanced"


def test_placement_falls_back_by_rank_for_other_level_names(tmp_path):
    text = VALID.replace("  basic:", "  low:").replace("  standard:", "  high:")
    levels = load_levels(write_levels(tmp_path, text))
    assert placement("tiny", 1, None, levels) == "low"
    assert placement("gpt-5", None, None, levels) == "high"
