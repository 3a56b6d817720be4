"""AgentDojo's task suites without its model clients: a process that runs or grades a cell imports
what the cell needs, not every provider's SDK (issue 32, speed).

``agentdojo.agent_pipeline``'s ``__init__`` imports every pipeline element, and with them the
Anthropic, OpenAI, Google and Cohere SDKs; its task suites import that package for three small
modules (the base element, its errors, the ground-truth pipeline), and ``tool_execution`` imports
the Google client for one string constant. Measured on the 2-core machine: importing the task
suites and the attack registry took 3.8 s, 3.0 s of it those SDKs; with :func:`install`, 1.3 s
(the rest is pydantic, deepdiff and pandas, which the suites use). Every subprocess of a run, a
grade-ai worker and an xdist worker paid it.

:func:`install` registers the few modules whose top level drags the SDKs in as *deferred*
modules: created from their real spec (so a package's submodules import as usual), holding the
plain constants our side reads (taken from the source by ``ast``, never restated here), and
executed for real the first time anything else is asked of them (PEP 562's module
``__getattr__``). A defense that needs ``OpenAILLM`` or ``AgentPipeline`` therefore gets the real
class: it is only the import that is deferred. docs/agentdojo.md says so.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

#: Module → the plain constants of its top level that may be read before it runs.
DEFERRED: dict[str, tuple[str, ...]] = {
    "agentdojo.agent_pipeline": (),
    "agentdojo.agent_pipeline.llms": (),
    "agentdojo.agent_pipeline.llms.google_llm": ("EMPTY_FUNCTION_NAME",),
    "agentdojo.agent_pipeline.agent_pipeline": ("DEFENSES", "TOOL_FILTER_PROMPT"),
}

_lock = threading.RLock()


def install() -> bool:
    """Defer the modules of :data:`DEFERRED` that are not imported yet; False when AgentDojo is
    not installed (the ``[agentdojo]`` extra is optional). Safe to call any number of times."""
    with _lock:
        if importlib.util.find_spec("agentdojo") is None:
            return False
        for name in DEFERRED:
            if name not in sys.modules:
                _defer(name)
        return True


def is_deferred(module: ModuleType) -> bool:
    """Whether a module of :data:`DEFERRED` still waits for its first use."""
    return "__getattr__" in vars(module) and getattr(vars(module)["__getattr__"], "_defers", False)


def _defer(name: str) -> None:
    parent, _, leaf = name.rpartition(".")
    importlib.import_module(parent)  # the parents come first, as the import system would
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.origin is None:
        return
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(_constants(spec.origin, DEFERRED[name]))

    def run_for_real(attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__") and attribute != "__all__":
            # The import system asks a module for ``__path__`` and the like (``from m import x``
            # asks whether m is a package): a question about the module, not a use of it.
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        with _lock:
            if is_deferred(module):
                del module.__dict__["__getattr__"]
                try:
                    spec.loader.exec_module(module)  # type: ignore[union-attr]
                except BaseException:
                    module.__dict__["__getattr__"] = run_for_real
                    raise
        try:
            return module.__dict__[attribute]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    run_for_real._defers = True  # type: ignore[attr-defined]
    module.__dict__["__getattr__"] = run_for_real
    sys.modules[name] = module
    setattr(sys.modules[parent], leaf, module)


def _source_tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as source:
        return ast.parse(source.read(), path)


def _constants(path: str, names: tuple[str, ...]) -> dict[str, Any]:
    """The literal values a module's top level assigns to ``names``, read from its source."""
    if not names:
        return {}
    tree = _source_tree(path)
    found: dict[str, Any] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) and node.value is not None else None)
        if isinstance(target, ast.Name) and target.id in names:
            found[target.id] = ast.literal_eval(node.value)  # type: ignore[arg-type]
    missing = set(names) - set(found)
    if missing:
        raise ImportError(f"{path}: no literal {', '.join(sorted(missing))} at its top level "
                          "(this AgentDojo release differs from the ones light_import knows)")
    return found


def option_default(module: str, option: str) -> str | None:
    """The literal string ``default=`` of a ``click.option(option, ...)`` in ``module``'s source,
    read without importing it (AgentDojo's benchmark script imports every SDK); None when the
    source does not say it plainly."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return None
    try:
        tree = _source_tree(spec.origin)
    except (OSError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and node.args[0].value == option):
            for keyword in node.keywords:
                if keyword.arg == "default" and isinstance(keyword.value, ast.Constant):
                    value = keyword.value.value
                    return value if isinstance(value, str) else None
    return None
