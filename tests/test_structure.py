"""Structure checks of the package (issues 25, 32): one direction of use, no import circle, no oversized module.

The imports are read with `ast`, never executed, so the check sees every module, also those
behind optional extras. An import at module level runs when the module is first imported: a
circle through such imports makes the outcome depend on which module is imported first, and
that is the bug. An import inside a function runs only when it is called; a circle closed only
by such imports fails too (issue 25), and so does one closed by a type checker's import (issue 32):
a reader follows it all the same.

Between packages (issue 32) use runs one way: the front doors (plugin, cli, demo) over the stages
(run, tables, review), those over the suites (the registry, the protocol, each suite), those over
what every suite uses (the generic judge, the conversation, the providers, a results folder's
shared files), and all over the shared values (records, stats, paths, ...). A suite's modules
are reached from outside it only through the registry (``suites.suite_module``/``suite_part``).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PACKAGE = "pytest_assistant_eval"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# No circle is left on purpose (tables/lines <-> grading_source was the last, issue 25): any circle
# fails. An entry here needs its reason.
KNOWN_CYCLES: dict[frozenset[str], str] = {}

SIZE_LIMIT = 500


@dataclass
class Imports:
    """A module's imports of the package, split by where they run."""

    module_level: set[str] = field(default_factory=set)
    function_level: set[str] = field(default_factory=set)
    type_only: set[str] = field(default_factory=set)  # under ``if TYPE_CHECKING:``


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(node: ast.AST, current: str, is_package: bool, known: set[str]) -> set[str]:
    """The package modules one import statement loads (a `from x import y` may name a submodule)."""
    found: set[str] = set()
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(node, current, is_package)
        # `from pkg import sub` loads the submodule; `from pkg import name` reads pkg's __init__.
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    else:
        return found
    # A parent package being imported is not counted: Python has it in sys.modules before
    # its submodules run, so only the modules named by the statement close a circle.
    for name in names:
        if name in known and name != current:
            found.add(name)
    return found


def _in_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str, path: Path, known: set[str]) -> Imports:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    result = Imports()

    def walk(node: ast.AST, in_function: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _in_type_checking(child):
                walk(child, in_function, True)  # never runs, but a reader follows it
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            targets = _targets(child, name, is_package, known)
            kind = result.type_only if type_only else result.function_level if in_function else result.module_level
            kind.update(targets)
            walk(child, inner, type_only)

    walk(tree, False, False)
    return result


@functools.lru_cache(maxsize=None)
def _graph(level: str) -> dict[str, set[str]]:
    """Module -> the modules it imports: ``module`` (at import time), ``all`` (also inside
    functions: what runs), ``typed`` (also a type checker's: what a reader follows)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imports = _imports(name, path, known)
        edges = set(imports.module_level)
        if level in ("all", "typed"):
            edges |= imports.function_level
        if level == "typed":
            edges |= imports.type_only
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[frozenset[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components, key=sorted)


def _describe(component: frozenset[str]) -> str:
    return " <-> ".join(sorted(m.removeprefix(PACKAGE + ".") for m in component))


def _unexpected(cycles: list[frozenset[str]]) -> list[str]:
    return [_describe(c) for c in cycles if c not in KNOWN_CYCLES]


def test_no_import_circle_through_module_level_imports() -> None:
    unexpected = _unexpected(_cycles(_graph("module")))
    assert not unexpected, "import circles through module-level imports:\n" + "\n".join(unexpected)


def test_no_import_circle_closed_by_an_import_inside_a_function_either() -> None:
    """An import moved into a function hides a circle from Python, not from a reader (issue 25):
    the shared piece belongs in a module both sides read."""
    unexpected = _unexpected(_cycles(_graph("all")))
    assert not unexpected, "import circles closed by function-level imports:\n" + "\n".join(unexpected)


def test_no_import_circle_closed_by_a_type_checkers_import_either() -> None:
    """``if TYPE_CHECKING:`` hides a circle from Python, not from a reader or a type checker
    (issue 32: tables/lines <-> tables/grading_source was the last): name what you read instead."""
    unexpected = _unexpected(_cycles(_graph("typed")))
    assert not unexpected, "import circles closed by type-only imports:\n" + "\n".join(unexpected)


def test_the_known_exception_is_still_a_circle_so_it_is_not_kept_by_mistake() -> None:
    cycles = set(_cycles(_graph("typed")))
    stale = [_describe(c) for c in KNOWN_CYCLES if c not in cycles]
    assert not stale, "no longer a circle, remove it from KNOWN_CYCLES: " + ", ".join(stale)


def test_function_level_import_circles_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    """Printed (with -s) so a reader sees every circle that only a late import closes."""
    module_cycles = set(_cycles(_graph("module")))
    late = [c for c in _cycles(_graph("all")) if c not in module_cycles]
    with capsys.disabled():
        for component in late:
            reason = KNOWN_CYCLES.get(component, "not a known exception")
            print(f"\nfunction-level import circle: {_describe(component)} ({reason})")
    assert set(late) <= set(KNOWN_CYCLES)


def test_the_cycle_finder_finds_a_three_module_circle_and_not_the_module_outside_it() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [frozenset({"a", "b", "c"})]


def _first_docstring(path: Path) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return ast.get_docstring(tree) or ""


def test_no_module_over_the_size_limit_without_a_stated_reason() -> None:
    over = []
    for name, path in _modules().items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines <= SIZE_LIMIT:
            continue
        if not any(line.startswith("Size:") for line in _first_docstring(path).splitlines()):
            over.append(f"{path.relative_to(ROOT.parent)}: {lines} lines, no 'Size:' line in its docstring")
    assert not over, "\n".join(over)


# -- suites behind their registry (issue 25) ------------------------------------------------------
SUITE_PACKAGES = ("calibration", "agentdojo")
#: Modules outside a suite that may import its internals, and why. None today: the session, the
#: plugin, the CLI and the tables reach a suite through ``suites.SUITES`` (importlib, by name).
SUITE_DOORS: dict[str, str] = {}


def _suite_of(module: str) -> str | None:
    """The suite a package module belongs to (``suites.agentdojo.cells`` -> ``agentdojo``), or None."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "suites" and parts[2] in SUITE_PACKAGES:
        return parts[2]
    return None


def _suite_imports() -> dict[str, set[str]]:
    """Per module, the suites whose internals it imports (at module or function level)."""
    graph = _graph("all")
    return {module: {s for target in targets for s in [_suite_of(target)] if s} for module, targets in graph.items()}


def test_no_module_outside_a_suite_imports_its_internals_but_through_the_registry() -> None:
    leaks = [f"{module} imports suites.{suite}" for module, suites in _suite_imports().items()
             for suite in sorted(suites) if _suite_of(module) != suite and module not in SUITE_DOORS]
    assert not leaks, "a suite is reached through suites.SUITES (suites/__init__.py):\n" + "\n".join(leaks)


def test_no_module_imports_both_suites_internals() -> None:
    both = [module for module, suites in _suite_imports().items() if set(SUITE_PACKAGES) <= suites]
    assert not both, "modules that import both suites' internals: " + ", ".join(both)


def test_the_suite_check_sees_an_import_of_a_suites_internals() -> None:
    """The checks above are not empty by mistake: the AgentDojo suite's own modules import each other."""
    imports = _suite_imports()
    assert "agentdojo" in imports[f"{PACKAGE}.suites.agentdojo.suite"]
    assert _suite_of(f"{PACKAGE}.suites.base") is None and _suite_of(f"{PACKAGE}.suites") is None


# -- one direction of use between packages (issue 32) --------------------------------------------
#: Each top-level module or package of the package and its tier: a package may import only its
#: own tier or those below. Nothing else may sit at the top level (a new top-level module is a
#: front door or a shared value, or it belongs in a package).
TIERS: dict[str, int] = {
    # the front doors: pytest's hooks, the assistant-eval command, the demo
    "plugin": 4, "cli": 4, "demo": 4, "__main__": 4,
    # the stages: a run, the tables and the report, the owner's review
    "run": 3, "tables": 3, "review": 3,
    # the suites: the registry, the protocol and its defaults, what a run asks, each suite
    "suites": 2,
    # an agent as the assistant (issue 33): its factory, its MCP tools, serve-tools; it reads what a
    # run asks (suites.plan: its UsageError, a planned cell) and the run's stage drives it
    "agents": 2,
    # what every suite uses: the generic judge, the conversation, the providers, a results folder's files
    "judging": 1, "conversation": 1, "providers": 1, "results": 1,
    # the values every stage shares
    "": 0, "records": 0, "stats": 0, "paths": 0, "secret": 0, "redact": 0, "tabular": 0,
    # issue 31's rules every layer applies, importing nothing above the shared values: the console's
    # one sanitiser (providers' errors, skips, the run's lines), where a command may write (run --out,
    # grade-ai --dir, report --out), a user-named file read as a regular file only, numeric options' ranges
    "console": 0, "write_rules": 0, "input_files": 0, "option_ranges": 0,
    # every form of a key redact.py replaces (issue 31 A): beside secret.py and redact.py, which read it
    "secret_forms": 0,
    # the neutral messages the conversation, the providers, the judge and the suites exchange (issue 32)
    "messages": 0,
    # a YAML file read with its lines and its file-and-line errors: the calibration's cases and levels and the
    # tables' prices file read YAML the same way (issue 32: it was the cases' own, reached by name from the tables)
    "yaml_source": 0,
}
TIER_NAMES = {4: "front doors", 3: "stages", 2: "suites", 1: "what suites use", 0: "shared values"}

#: Imports from a package to one above it that stay, and why. Each entry names the importing
#: module and the package above it. None is left (issue 32): AgentDojo's single-cell front gets the
#: session maker from its caller, and grade-ai gets the tables' digest priming from the front door.
UPWARD: dict[tuple[str, str], str] = {}


def _top(module: str) -> str:
    """The top-level module or package a package module belongs to (``""``: the package itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _upward(graph: dict[str, set[str]]) -> list[tuple[str, str, str]]:
    """(importer, imported, the imported package) for every import into a higher tier."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = _top(module), _top(target)
            if here != there and TIERS.get(there, -1) > TIERS.get(here, -1):
                found.append((module, target, there))
    return found


def _short(module: str) -> str:
    return module.removeprefix(PACKAGE + ".")


def test_no_module_at_the_top_level_but_the_front_doors_and_the_shared_values() -> None:
    unknown = sorted({_top(m) for m in _modules()} - set(TIERS))
    assert not unknown, ("top-level modules or packages outside tests/test_structure.py's TIERS (a front door, "
                         "a shared value, or a package of a tier): " + ", ".join(unknown))


def test_no_import_from_a_package_to_one_above_it() -> None:
    leaks = [f"{_short(a)} -> {_short(b)} ({TIER_NAMES[TIERS[_top(a)]]} -> {TIER_NAMES[TIERS[p]]})"
             for a, b, p in _upward(_graph("all")) if (_short(a), p) not in UPWARD]
    assert not leaks, "imports against the direction of use (issue 32):\n" + "\n".join(leaks)


def test_every_upward_exception_is_still_needed() -> None:
    used = {(_short(a), p) for a, _, p in _upward(_graph("all"))}
    stale = [f"{m} -> {p}" for m, p in UPWARD if (m, p) not in used]
    assert not stale, "no longer imported upward, remove it from UPWARD: " + ", ".join(stale)


def test_the_direction_check_finds_an_upward_import() -> None:
    """The check above is not empty by mistake: a provider importing the run is found."""
    graph = {f"{PACKAGE}.providers.x": {f"{PACKAGE}.run.session"}, f"{PACKAGE}.run.session": {f"{PACKAGE}.records"}}
    assert _upward(graph) == [(f"{PACKAGE}.providers.x", f"{PACKAGE}.run.session", "run")]


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Top-level package -> the top-level packages its modules import (at any level, type-only too)."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        for target in targets:
            if _top(module) != _top(target):
                packages.setdefault(_top(module), set()).add(_top(target))
    return packages


def test_no_circle_between_packages_either() -> None:
    """Packages of one tier may use each other, but one way only (issue 32): where two used each
    other both ways (conversation <-> providers <-> results, review <-> tables) the shared piece
    moved below both (``messages.py``, ``judging/not_graded.py``) or is handed in by the front door
    (the checkpoint reader to ``results.skips``, ``open_grading`` to the review). No exception list."""
    circles = [" <-> ".join(sorted(c)) for c in _cycles(_package_graph(_graph("typed")))]
    assert not circles, "circles between packages:\n" + "\n".join(circles)


def test_the_package_circle_check_finds_a_circle_of_two_packages() -> None:
    """The check above is not empty by mistake: two packages importing each other's modules are found."""
    graph = {f"{PACKAGE}.review.context": {f"{PACKAGE}.tables.grading_source"},
             f"{PACKAGE}.tables.grading_source": {f"{PACKAGE}.review.overlay"}, f"{PACKAGE}.review.overlay": set()}
    assert _cycles(_package_graph(graph)) == [frozenset({"review", "tables"})]


# -- generic packages know a suite by its protocol, not by its name (issue 32) ------------------
#: The registry's lookups of a suite or one part of it (``suites.suite_part`` and kin).
REGISTRY_LOOKUPS = {"suite_part", "suite_module", "suite_module_name", "scripted_models", "suite_command", "get_suite"}
#: Packages that choose a suite (the front doors) or are one (suites/): they may name a suite.
NAMING_SUITES = {"plugin", "cli", "demo", "__main__", "suites"}
#: The registry's names of a suite that only the front doors and the registry may use.
SUITE_NAME_CONSTANTS = {"DEFAULT_SUITE", "SUITES"}


def _named(node: ast.AST) -> bool:
    """A suite named by a constant: a string, or the registry's ``DEFAULT_SUITE``."""
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or (
        isinstance(node, ast.Name) and node.id == "DEFAULT_SUITE") or (
        isinstance(node, ast.Attribute) and node.attr == "DEFAULT_SUITE")


def _named_lookups(tree: ast.AST) -> int:
    """Calls of a registry lookup whose suite is a string constant or ``DEFAULT_SUITE`` (given by position
    or by keyword), and imports of the registry's suite names."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("suites"):
            count += sum(1 for a in node.names if a.name in SUITE_NAME_CONSTANTS)
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg in ("name", "suite"))]
        if name in REGISTRY_LOOKUPS and any(_named(arg) for arg in given):
            count += 1
    return count


def _lookups_by_name() -> dict[str, int]:
    found = {}
    for name, path in _modules().items():
        if _top(name) in NAMING_SUITES:
            continue
        count = _named_lookups(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if count:
            found[_short(name)] = count
    return found


def test_no_registry_lookup_by_a_hard_coded_suite_name_in_a_generic_package() -> None:
    """The tables, the review, the run, the agents and the generic judge ask the suite a front door
    chose or a folder recorded (``suites.grading_suite``, ``suite_of_record``, ``get_suite(name)``
    of a variable), through the ``Suite`` protocol (suites/base.py); the 16 lookups by name that were
    left (issue 32 item 3) are gone, and a folder that records no suite gets the registry's default."""
    found = _lookups_by_name()
    named = [f"{m}: {n} lookup(s) by a suite's name" for m, n in sorted(found.items())]
    assert not named, ("a generic package reaches a suite by its name; ask the suite the run or the folder "
                       "recorded, through the Suite protocol (suites/base.py):\n" + "\n".join(named))


def test_the_lookup_check_finds_a_lookup_by_name_and_not_one_by_a_variable() -> None:
    tree = ast.parse("suite_part('calibration', 'levels')\nsuites.suite_module(DEFAULT_SUITE)\nsuite_part(name, 'x')\n"
                     "get_suite(suite_of_record(fmt))\nsuites.get_suite(name='agentdojo')\nrecord.get('format')\n"
                     "from pytest_assistant_eval.suites import DEFAULT_SUITE, grading_suite\n")
    assert _named_lookups(tree) == 4
