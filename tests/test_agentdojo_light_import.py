"""AgentDojo's task suites import without its model SDKs, and what is deferred is real on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("agentdojo")

SDKS = ("anthropic", "openai", "cohere", "google.genai")


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_the_suites_attacks_and_defense_names_load_no_model_sdk():
    out = _run("import sys\n"
               "import pytest_assistant_eval.suites.agentdojo\n"
               "from pytest_assistant_eval.suites.agentdojo.defenses import defense_names\n"
               "from agentdojo.task_suite.load_suites import get_suites\n"
               "from agentdojo.attacks.attack_registry import ATTACKS\n"
               "from agentdojo.agent_pipeline.tool_execution import tool_result_to_str\n"
               "get_suites('v1.2.1'); names = defense_names()\n"
               f"print(sorted(m for m in {SDKS!r} if m in sys.modules), 'tool_filter' in names)")
    assert out == "[] True"


def test_a_deferred_module_runs_for_real_on_first_use_and_its_constants_match():
    out = _run("import sys\n"
               "import pytest_assistant_eval.suites.agentdojo\n"
               "from pytest_assistant_eval.suites.agentdojo.light_import import is_deferred\n"
               "import agentdojo.agent_pipeline.agent_pipeline as ap\n"
               "early = (list(ap.DEFENSES), ap.TOOL_FILTER_PROMPT, is_deferred(ap))\n"
               "from agentdojo.agent_pipeline.agent_pipeline import AgentPipeline\n"
               "from agentdojo.agent_pipeline import OpenAILLM\n"
               "import inspect\n"
               "print(early[2], is_deferred(ap), early[:2] == (list(ap.DEFENSES), ap.TOOL_FILTER_PROMPT),\n"
               "      inspect.isclass(AgentPipeline) and AgentPipeline.__module__ == ap.__name__,\n"
               "      inspect.isclass(OpenAILLM), 'openai' in sys.modules)")
    assert out == "True False True True True True"


def test_the_pipeline_shape_is_the_same_with_and_without_deferral():
    code = ("{setup}from pytest_assistant_eval.suites.agentdojo.defenses import pipeline_shape\n"
            "s = pipeline_shape('spotlighting_with_delimiting', 'gpt-4o-2024-05-13')\n"
            "print(repr((s.name, s.system_message, s.max_iters, s.repeat_prompt, s.tool_filter_prompt,"
            " s.output_formatter.__qualname__)))")
    # Without: AgentDojo's pipeline package imported whole before our package could defer it.
    plain = _run(code.format(setup="import agentdojo.agent_pipeline\n"))
    deferred = _run(code.format(setup=""))
    assert plain == deferred and "gpt-4o-2024-05-13" in plain


def test_a_module_missing_a_deferred_constant_is_named(tmp_path, monkeypatch):
    from pytest_assistant_eval.suites.agentdojo import light_import

    source = tmp_path / "mod.py"
    source.write_text("OTHER = 1\n", encoding="utf-8")
    with pytest.raises(ImportError, match=r"mod\.py: no literal WANTED"):
        light_import._constants(str(source), ("WANTED",))
    source.write_text("WANTED: list[str] = ['a']\nLATER = f()\n", encoding="utf-8")
    assert light_import._constants(str(source), ("WANTED",)) == {"WANTED": ["a"]}


def test_building_a_pipeline_runs_neither_the_anthropic_nor_the_google_sdk():
    out = _run("import sys\n"
               "import pytest_assistant_eval.suites.agentdojo\n"
               "from pytest_assistant_eval.suites.agentdojo.light_import import is_deferred\n"
               "from pytest_assistant_eval.suites.agentdojo.defenses import pipeline_shape\n"
               "shapes = [pipeline_shape(d, 'gpt-4o-2024-05-13') for d in (None, 'tool_filter', 'repeat_user_prompt')]\n"
               "print([is_deferred(sys.modules[m]) for m in ('anthropic', 'google.genai')],\n"
               "      [s.name for s in shapes], 'openai' in sys.modules)")
    assert out == ("[True, True] ['gpt-4o-2024-05-13', 'gpt-4o-2024-05-13-tool_filter', "
                   "'gpt-4o-2024-05-13-repeat_user_prompt'] True")


def test_a_client_class_named_before_its_module_ran_is_the_real_class_at_first_use():
    out = _run("import os, sys\n"
               "os.environ['ANTHROPIC_API_KEY'] = 'sk-ant-light-import-test'\n"
               "import pytest_assistant_eval.suites.agentdojo\n"
               "from pytest_assistant_eval.suites.agentdojo.light_import import StandIn, is_deferred\n"
               "from agentdojo.agent_pipeline.agent_pipeline import AgentPipeline\n"
               "import agentdojo.agent_pipeline.agent_pipeline as ap\n"
               "held = isinstance(vars(ap)['AnthropicLLM'], StandIn) and is_deferred(sys.modules['anthropic'])\n"
               "llm = ap.get_llm('anthropic', 'claude-3-5-sonnet-20241022', None, 'tool')\n"
               "real = sys.modules['agentdojo.agent_pipeline.llms.anthropic_llm'].AnthropicLLM\n"
               "class Mine(ap.GoogleLLM):\n"
               "    pass\n"
               "google = sys.modules['agentdojo.agent_pipeline.llms.google_llm'].GoogleLLM\n"
               "print(held, type(llm) is real, isinstance(llm, ap.AnthropicLLM), issubclass(real, ap.AnthropicLLM),\n"
               "      Mine.__mro__[1] is google, ap.GoogleLLM.query is google.query,\n"
               "      is_deferred(sys.modules['anthropic']), isinstance(real, type))")
    assert out == "True True True True True True False True"
