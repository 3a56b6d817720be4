"""Data notices per route (S4.4): what leaves the machine, and the check before a run.

A remote route shows its notice and needs ``--accept-data-notice`` for this run only; the
acceptance counts only for a verified grounding world (synthetic data, never a real user's),
and nothing of it is kept. A local Ollama model needs none, but a model the Ollama server
forwards to a cloud service needs that service's notice too.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_assistant_eval.providers.errors import NoticeRequired
from pytest_assistant_eval.providers.presets import is_local_address

_COMMON = (
    "Every request of this run (the level's instructions, the conversation, the tool definitions and the "
    "results of the synthetic services) is sent to {who}. The data comes from {data} "
    "and describes no real person; {who} may keep or log it under its own terms. "
    "Accept with --accept-data-notice (for this run only)."
)

#: Where the data of a run comes from, as the notice says it; a suite names its own (``Suite.data_source``).
GROUNDING_WORLD = "the grounding world built for this evaluation"

NOTICES: dict[str, str] = {
    "openai": _COMMON.format(who="OpenAI", data="{data}"),
    "anthropic": _COMMON.format(who="Anthropic", data="{data}"),
    "gemini": _COMMON.format(who="Google (the Gemini API)", data="{data}"),
    "openrouter": _COMMON.format(who="OpenRouter and the provider it routes each request to", data="{data}")
    + " Free models may route to providers that keep request data (--relax-data-collection allows them).",
    "openai-compatible": _COMMON.format(who="the server at {address}", data="{data}"),
    "ollama": _COMMON.format(who="the Ollama server at {address}", data="{data}"),
    "ollama-cloud": _COMMON.format(who="Ollama's cloud service ({forwarded}), through your local Ollama server",
                                   data="{data}"),
}


@dataclass(frozen=True)
class Notice:
    route: str
    text: str


def notice_for(preset: str, model: str, base_url: str | None, forwarded_to: str | None = None,
               data_source: str = GROUNDING_WORLD) -> list[Notice]:
    """The notices a run on this route must show; empty for a local model. ``data_source`` says
    where the run's data comes from (the suite's own words)."""
    notices = [Notice(n.route, n.text.replace("{data}", data_source))
               for n in _notices(preset, model, base_url, forwarded_to)]
    return notices


def _notices(preset: str, model: str, base_url: str | None, forwarded_to: str | None) -> list[Notice]:
    notices: list[Notice] = []
    if preset == "scripted":
        return notices
    if preset == "ollama":
        if base_url and not is_local_address(base_url):
            notices.append(Notice("ollama", NOTICES["ollama"].format(address=base_url, data="{data}")))
        cloud = forwarded_to or (("ollama.com") if (model.endswith("-cloud") or model.endswith(":cloud")) else None)
        if cloud:
            notices.append(Notice("ollama-cloud", NOTICES["ollama-cloud"].format(forwarded=cloud, data="{data}")))
        return notices
    if preset == "openai-compatible":
        if base_url and is_local_address(base_url):
            return notices
        return [Notice(preset, NOTICES[preset].format(address=base_url or "the given address", data="{data}"))]
    return [Notice(preset, NOTICES.get(preset, _COMMON.format(who=preset, data="{data}")))]


def check_notice(
    preset: str,
    model: str,
    base_url: str | None,
    accepted: bool,
    world_verified: bool,
    forwarded_to: str | None = None,
    data_source: str = GROUNDING_WORLD,
) -> list[Notice]:
    """The notices to show for this run; ``NoticeRequired`` when a remote route is not accepted.

    ``forwarded_to`` is what the Ollama probe found (``remote_host`` in ``/api/show``).
    """
    notices = notice_for(preset, model, base_url, forwarded_to, data_source)
    if not notices:
        return notices
    routes = ", ".join(n.route for n in notices)
    if not accepted:
        texts = "\n".join(f"  data notice ({n.route}): {n.text}" for n in notices)
        raise NoticeRequired(
            f"{preset}:{model} sends data to a remote service ({routes}). Read the data notice and run again "
            f"with --accept-data-notice (it is needed for every run, --resume too):\n{texts}"
        )
    if not world_verified:
        raise NoticeRequired(
            "--accept-data-notice counts only for a verified grounding world: build one with "
            "'assistant-eval build' and pass it with --world."
        )
    return notices
