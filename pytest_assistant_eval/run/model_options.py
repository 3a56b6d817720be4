"""The run's options about its models beyond which ones (issue 33): the agent path and generation settings.

One place for both front doors: the pytest plugin's options (``add_pytest_options``, read back
with ``generation_from`` and ``agent_paths``) and ``assistant-eval run``'s (``add_cli_options``,
passed on to pytest by ``forward``), so the two never drift apart.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from pytest_assistant_eval.providers.generation import EFFORTS, NAMES

__all__ = ["add_pytest_options", "add_cli_options", "forward", "generation_from", "agent_paths", "user_settings"]

_HELP = {
    "temperature": "sampling temperature of every model (0-2); a setting of its own in every table",
    "top_p": "nucleus sampling share of every model (0-1)",
    "seed": "sampling seed of every model (OpenAI-compatible, Gemini, Ollama; refused for Anthropic)",
    "max_output_tokens": "the output limit of every answer, instead of the level's",
    "reasoning_effort": f"reasoning effort ({', '.join(EFFORTS)}): OpenAI reasoning_effort, Anthropic and "
                        "Gemini thinking budget, Ollama think",
}
_TYPES: dict[str, Callable[[str], Any]] = {"temperature": float, "top_p": float, "seed": int,
                                          "max_output_tokens": int, "reasoning_effort": str}
_USER_SETTING_HELP = (f"a generation setting of the --user-model as SETTING=VALUE ({', '.join(NAMES)}; repeatable): "
                      "the assistants' --temperature ... never apply to the user")
_AGENT_PATH_HELP = "a folder put on the import path for --model agent:MODULE:FACTORY (repeatable; docs/agents.md)"


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_pytest_options(group: Any) -> None:
    group.addoption("--agent-path", action="append", default=[], type=Path, metavar="DIR", help=_AGENT_PATH_HELP)
    group.addoption("--user-setting", action="append", default=[], metavar="SETTING=VALUE", help=_USER_SETTING_HELP)
    for name in NAMES:
        group.addoption(_flag(name), dest=f"gen_{name}", type=_TYPES[name], default=None, help=_HELP[name])


def generation_from(get: Callable[[str], Any]) -> dict[str, Any]:
    """The generation settings given to the plugin (None: not given)."""
    return {name: get(f"gen_{name}") for name in NAMES}


def agent_paths(get: Callable[[str], Any]) -> tuple[Path, ...]:
    return tuple(Path(p).resolve() for p in get("agent_path") or ())


def add_cli_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agent-path", action="append", default=[], metavar="DIR", help=_AGENT_PATH_HELP)
    p.add_argument("--user-setting", action="append", default=[], metavar="SETTING=VALUE", help=_USER_SETTING_HELP)
    for name in NAMES:
        p.add_argument(_flag(name), dest=f"gen_{name}", type=_TYPES[name], default=None, help=_HELP[name])


def forward(args: argparse.Namespace) -> list[str]:
    """``assistant-eval run``'s options of this module as the plugin's."""
    argv: list[str] = []
    for folder in getattr(args, "agent_path", None) or ():
        argv += ["--agent-path", str(Path(folder).resolve())]
    for name in NAMES:
        value = getattr(args, f"gen_{name}", None)
        if value is not None:
            argv.append(f"{_flag(name)}={value}")
    for setting in getattr(args, "user_setting", None) or ():
        argv.append(f"--user-setting={setting}")
    return argv


def user_settings(given: list[str] | None) -> dict[str, str]:
    """``--user-setting SETTING=VALUE ...`` as a mapping; a malformed or repeated one is refused
    (``ValueError``, the message names it). The values are checked with the model's own."""
    found: dict[str, str] = {}
    for item in given or ():
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not value.strip() or name not in NAMES:
            raise ValueError(f"--user-setting {item!r}: expected SETTING=VALUE with SETTING one of {', '.join(NAMES)}")
        if name in found:
            raise ValueError(f"--user-setting {name} is given twice")
        found[name] = value.strip()
    return found
