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
    "results of the synthetic services) is sent to {who}. The data comes from {source} and describes no real "
    "person; {who} may keep or log it under its own terms. "
    "Accept with --accept-data-notice (for this run only)."
)

#: Where a suite's data comes from, as its notice says it (``{source}``): a notice names the data
#: that is sent, and an AgentDojo run sends AgentDojo's environments, not our world.
DATA_SOURCES: dict[str, str] = {
    "grounding": "the grounding world built for this evaluation",
    "agentdojo": "AgentDojo's synthetic task suites (their environments and injected texts)",
}

NOTICES: dict[str, str] = {
    "openai": _COMMON.replace("{who}", "OpenAI"),
    "anthropic": _COMMON.replace("{who}", "Anthropic"),
    "gemini": _COMMON.replace("{who}", "Google (the Gemini API)"),
    "openrouter": _COMMON.replace("{who}", "OpenRouter and the provider it routes each request to")
    + " Free models may route to providers that keep request data (--relax-data-collection allows them).",
    "openai-compatible": _COMMON.replace("{who}", "the server at {address}"),
    "ollama": _COMMON.replace("{who}", "the Ollama server at {address}"),
    "ollama-cloud": _COMMON.replace("{who}", "Ollama's cloud service ({forwarded}), through your local Ollama server"),
}


@dataclass(frozen=True)
class Notice:
    route: str
    text: str


def notice_for(preset: str, model: str, base_url: str | None, forwarded_to: str | None = None,
               data: str = "grounding") -> list[Notice]:
    """The notices a run on this route must show; empty for a local model. ``data``: the suite
    whose data is sent (a key of ``DATA_SOURCES``)."""
    return [Notice(n.route, n.text.replace("{source}", DATA_SOURCES[data]))
            for n in _notices(preset, model, base_url, forwarded_to)]


def _notices(preset: str, model: str, base_url: str | None, forwarded_to: str | None) -> list[Notice]:
    notices: list[Notice] = []
    if preset == "scripted":
        return notices
    if preset == "ollama":
        if base_url and not is_local_address(base_url):
            notices.append(Notice("ollama", NOTICES["ollama"].replace("{address}", base_url)))
        cloud = forwarded_to or (("ollama.com") if (model.endswith("-cloud") or model.endswith(":cloud")) else None)
        if cloud:
            notices.append(Notice("ollama-cloud", NOTICES["ollama-cloud"].replace("{forwarded}", cloud)))
        return notices
    if preset == "openai-compatible":
        if base_url and is_local_address(base_url):
            return notices
        return [Notice(preset, NOTICES[preset].replace("{address}", base_url or "the given address"))]
    return [Notice(preset, NOTICES.get(preset, _COMMON.replace("{who}", preset)))]


def check_notice(
    preset: str,
    model: str,
    base_url: str | None,
    accepted: bool,
    world_verified: bool,
    forwarded_to: str | None = None,
    data: str = "grounding",
) -> list[Notice]:
    """The notices to show for this run; ``NoticeRequired`` when a remote route is not accepted.

    ``forwarded_to`` is what the Ollama probe found (``remote_host`` in ``/api/show``).
    """
    notices = notice_for(preset, model, base_url, forwarded_to, data)
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
