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

Building a pipeline (``defenses.pipeline_shape``, at every cell's start) runs ``agent_pipeline``
for real, and its top imports the Anthropic and Google SDKs for ``get_llm``, which makes a client
for a model named by a string; our runs hand it a stand-in model, so ``get_llm`` never runs. Those
two SDKs cost 2.0 of the 2.6 s a process took to build its first pipeline. So the clients' modules
(:data:`CLIENT_CLASSES`) are deferred as well, each class named in them by a :class:`StandIn` that is
the real class on first use (a call, ``isinstance``, a subclass, an attribute), and the two SDKs
(:data:`CLIENT_SDKS`) are deferred just before a deferred module runs for real.
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

#: The model clients' modules AgentDojo's pipeline imports for ``get_llm`` → the classes it takes from
#: them, named by stand-ins until the module runs (``tool_execution`` reads a constant of google_llm).
CLIENT_CLASSES: dict[str, tuple[str, ...]] = {
    "agentdojo.agent_pipeline.llms.anthropic_llm": ("AnthropicLLM",),
    "agentdojo.agent_pipeline.llms.google_llm": ("GoogleLLM",),
}
#: The SDKs ``agent_pipeline`` imports at its top for those clients (``import anthropic``, ``from
#: google import genai``); deferred only once a deferred module runs, so loading the suites alone
#: leaves them out of ``sys.modules``.
CLIENT_SDKS = ("anthropic", "google.genai")

_lock = threading.RLock()


class StandIn:
    """A class of a deferred module, named before the module has run; the real class at its first use.

    ``from m import C`` takes ``C`` from the module's namespace without asking ``__getattr__``, so
    a class AgentDojo's pipeline imports but never uses would run its module (and its SDK). This
    object is what the name holds until then: calling it, ``isinstance``/``issubclass`` against it,
    subclassing it (``__mro_entries__``) or reading an attribute runs the module and hands the
    question to the real class. The name then still holds the stand-in where it was imported."""

    def __init__(self, module: str, name: str, run_for_real: Any) -> None:
        self._where = (module, name)
        self._run_for_real = run_for_real

    def real(self) -> Any:
        found = self._run_for_real(self._where[1])
        if found is self:
            raise ImportError(f"{self._where[0]} ran but defines no {self._where[1]} (an AgentDojo release "
                              "light_import does not know)")
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.real()(*args, **kwargs)

    def __instancecheck__(self, instance: Any) -> bool:
        return isinstance(instance, self.real())

    def __subclasscheck__(self, subclass: type) -> bool:
        return issubclass(subclass, self.real())

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (self.real(),)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)  # copy, pickle and the like probing the object itself
        return getattr(self.real(), attribute)

    def __repr__(self) -> str:
        return f"<stand-in for {self._where[0]}.{self._where[1]}, not loaded yet>"


def install() -> bool:
    """Defer the modules of :data:`DEFERRED` and :data:`CLIENT_CLASSES` not imported yet; False when AgentDojo is
    not installed (the ``[agentdojo]`` extra is optional). Safe to call any number of times."""
    with _lock:
        if importlib.util.find_spec("agentdojo") is None:
            return False
        for name in (*DEFERRED, *CLIENT_CLASSES):
            if name not in sys.modules:
                _defer(name)
        return True


def _defer_client_sdks() -> None:
    """Defer :data:`CLIENT_SDKS` not imported yet (before a deferred module runs for real)."""
    for name in CLIENT_SDKS:
        if name not in sys.modules:
            _defer(name)


def is_deferred(module: ModuleType) -> bool:
    """Whether a deferred module (of :data:`DEFERRED`, :data:`CLIENT_CLASSES` or :data:`CLIENT_SDKS`) still
    waits for its first use."""
    return "__getattr__" in vars(module) and getattr(vars(module)["__getattr__"], "_defers", False)


def _defer(name: str) -> None:
    parent, _, leaf = name.rpartition(".")
    if parent:
        importlib.import_module(parent)  # the parents come first, as the import system would
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:  # a parent missing: the SDK is not installed, and there is nothing to defer
        return
    if spec is None or spec.loader is None or spec.origin is None:
        return
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(_constants(spec.origin, DEFERRED.get(name, ())))

    def run_for_real(attribute: str) -> Any:
        if attribute.startswith("__") and attribute.endswith("__") and attribute != "__all__":
            # The import system asks a module for ``__path__`` and the like (``from m import x``
            # asks whether m is a package): a question about the module, not a use of it.
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
        with _lock:
            if is_deferred(module):
                _defer_client_sdks()
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
    module.__dict__.update({cls: StandIn(name, cls, run_for_real) for cls in CLIENT_CLASSES.get(name, ())})
    sys.modules[name] = module
    if parent:
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
