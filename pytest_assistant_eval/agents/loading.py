"""Loading an agent's factory from ``agent:MODULE:FACTORY`` and ``--agent-path`` (issue 33).

Checked once before any cell (``Providers.check_routes``): a module that does not import, or a
factory that is not there or not callable, is a usage error naming what to change, not a
failed cell.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

from pytest_assistant_eval.suites.plan import UsageError

__all__ = ["load_factory", "check_factory", "last_line"]


def last_line(exc: BaseException) -> str:
    """The last line of an exception's traceback (``ValueError: no such listing``)."""
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def _add_paths(paths: Sequence[Path]) -> None:
    for folder in reversed([str(Path(p).resolve()) for p in paths]):
        if folder not in sys.path:
            sys.path.insert(0, folder)


def load_factory(model: str, paths: Sequence[Path] = ()) -> Callable[[Any], Any]:
    """The callable ``MODULE:FACTORY`` names, with ``paths`` put first on the import path."""
    module_name, _, factory_name = model.partition(":")
    for folder in paths:
        if not Path(folder).is_dir():
            raise UsageError(f"--agent-path {folder}: no such folder")
    _add_paths(paths)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        where = f" (--agent-path {', '.join(map(str, paths))})" if paths else " (give its folder with --agent-path DIR)"
        raise UsageError(f"agent:{model}: cannot import {module_name!r}{where}: {last_line(exc)}") from None
    except Exception as exc:  # the module itself failed while importing
        raise UsageError(f"agent:{model}: importing {module_name!r} failed: {last_line(exc)}") from None
    factory = getattr(module, factory_name, None)
    if factory is None:
        raise UsageError(f"agent:{model}: {module_name!r} has no {factory_name!r}")
    if not callable(factory):
        raise UsageError(f"agent:{model}: {module_name}.{factory_name} is not callable")
    return factory


def check_factory(model: str, paths: Sequence[Path] = ()) -> None:
    load_factory(model, paths)
