"""The versions an AgentDojo run depends on, read from the installed agentdojo (issue 25).

Kept apart from ``settings.py`` so ``cells.py`` can read the default benchmark version
without importing the settings (which check attacks with ``cells.py``). ``agentdojo`` is
imported only inside functions.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["agentdojo_version", "benchmark_versions", "default_benchmark_version"]


@lru_cache(maxsize=1)
def default_benchmark_version() -> str:
    """The benchmark version AgentDojo's own ``benchmark`` script runs when not told (``v1.2.2`` in 0.1.35).

    Read from the script's source, its ``--benchmark-version`` option's default: importing the
    script imports every model SDK (3 s of a process's start; light_import.py). When the source
    does not say it plainly, the script is imported and its click option asked."""
    from pytest_assistant_eval.suites.agentdojo.light_import import option_default

    found = option_default("agentdojo.scripts.benchmark", "--benchmark-version")
    if found is not None:
        return found
    try:
        from agentdojo.scripts.benchmark import main

        for param in main.params:
            if param.name == "benchmark_version" and isinstance(param.default, str):
                return param.default
    except ImportError:  # the script's own dependencies (click, rich) missing: its library default then
        pass
    import inspect

    from agentdojo.benchmark import load_suite_results

    return str(inspect.signature(load_suite_results).parameters["benchmark_version"].default)


def benchmark_versions() -> list[str]:
    """Every benchmark version agentdojo registers (its registry has no public listing: its table is read)."""
    from agentdojo.task_suite import load_suites

    return [v for v, suites in load_suites._SUITES.items() if suites]


@lru_cache(maxsize=1)
def agentdojo_version() -> str:
    """The installed agentdojo package's version, as its own logs record it (read once: reading a
    package's metadata takes milliseconds, and every cell's fingerprint and record carry it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentdojo")
    except PackageNotFoundError:
        return "unknown"
