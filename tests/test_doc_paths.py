"""Every module path the README and docs/ name exists (issue 32: the moves left old names in prose).

A backticked dotted name whose first part is one of the package's top-level modules or packages
(``run.session.RunSession``, ``pytest_assistant_eval.suites.calibration.cases.load_cases``), or one
of the top-level names the issue-32 moves retired (``reading.numbers``, ``grading.tasks``,
``planning``...), must name a module of the package and, after it, a name that module defines.
A backticked path into the package (``suites/calibration/readers/negation.py``,
``tables/digest.merge_primed``) must name a file or folder that exists. Read with ``ast``, never
imported, so a module behind an optional extra counts too.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "pytest_assistant_eval"
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

#: Top-level modules and packages that issue 32 moved into packages: a name under them is stale.
RETIRED = {"runner", "planning", "scheduling", "skips", "spent", "usage", "progress", "run_folders", "results_folder",
           "writer_lock", "cell_checkpoints", "cell_records", "cell_stops", "provider_setup", "report_redaction",
           "grading", "reading", "world", "cases", "levels"}
#: What a file name ends with (``run.json``, ``levels.yaml``): a file, not a module path.
FILE_ENDINGS = {"py", "md", "json", "jsonl", "yaml", "yml", "txt", "html", "ini", "toml", "lock", "folder", "csv",
                "db", "sqlite", "key", "log", "tmp"}

DOTTED = re.compile(r"`((?:pytest_assistant_eval\.)?[A-Za-z_]\w*(?:\.\w+)+)(?:\(\))?`")
SLASHED = re.compile(r"`((?:pytest_assistant_eval/)?[a-z_]+/[\w/]*\w(?:\.\w+)?)/?`")


@functools.lru_cache(maxsize=None)
def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts:
            found[".".join(parts)] = path
    return found


def _tops() -> set[str]:
    return {name.split(".")[0] for name in _modules()}


@functools.lru_cache(maxsize=None)
def _defined(path: Path) -> dict[str, set[str]]:
    """A module's top-level names, each with the names its class body defines (empty for others)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, set[str]] = {}

    def targets(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Name):
            return [node.id]
        if isinstance(node, (ast.Tuple, ast.List)):
            return [n for e in node.elts for n in targets(e)]
        return []

    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            inner = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    inner.update(targets(item.target))
                elif isinstance(item, ast.Assign):
                    inner.update(n for t in item.targets for n in targets(t))
            names[node.name] = inner
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = set()
        elif isinstance(node, ast.Assign):
            names.update({n: set() for t in node.targets for n in targets(t)})
        elif isinstance(node, ast.AnnAssign):
            names.update({n: set() for n in targets(node.target)})
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update({(a.asname or a.name).split(".")[0]: set() for a in node.names})
    return names


def _resolves(dotted: str) -> str | None:
    """None when the dotted name is a module of the package and names defined in it; else why not."""
    parts = dotted.removeprefix("pytest_assistant_eval.").split(".")
    modules = _modules()
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        if module in modules:
            rest = parts[i:]
            if not rest:
                return None
            defined = _defined(modules[module])
            if rest[0] not in defined:
                return f"{module} defines no {rest[0]}"
            if len(rest) > 1 and defined[rest[0]] and rest[1] not in defined[rest[0]]:
                return f"{module}.{rest[0]} defines no {rest[1]}"
            return None
    return "no such module in the package"


def _named() -> list[tuple[str, int, str, str]]:
    """(doc, line, name, "dotted" or "path") of every module path the docs name."""
    tops = _tops()
    found = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
            for match in DOTTED.finditer(line):
                name = match.group(1)
                first = name.removeprefix("pytest_assistant_eval.").split(".")[0]
                if name.rsplit(".", 1)[-1] in FILE_ENDINGS:
                    continue
                if name.startswith("pytest_assistant_eval.") or first in tops or first in RETIRED:
                    found.append((doc.name, n, name, "dotted"))
            for match in SLASHED.finditer(line):
                name = match.group(1).removeprefix("pytest_assistant_eval/")
                first = name.split("/")[0]
                if first in tops and (PACKAGE / first).is_dir() or first in ("grading", "reading"):
                    found.append((doc.name, n, name, "path"))
    return found


def _path_problem(name: str) -> str | None:
    target = PACKAGE / name
    if target.exists():
        return None
    stem, dot, attr = name.rpartition(".")
    if dot and attr not in FILE_ENDINGS and (PACKAGE / f"{stem}.py").exists():  # tables/digest.merge_primed
        return _resolves(stem.replace("/", ".") + "." + attr)
    if (PACKAGE / f"{name}.py").exists():
        return None
    return "no such file or folder in the package"


def test_every_module_path_the_docs_name_exists() -> None:
    stale = []
    for doc, n, name, kind in _named():
        problem = _resolves(name) if kind == "dotted" else _path_problem(name)
        if problem:
            stale.append(f"{doc}:{n}: `{name}`: {problem}")
    assert not stale, "module paths in README.md and docs/ that the package does not have:\n" + "\n".join(stale)


def test_the_check_reads_the_names_it_must_and_finds_a_stale_one() -> None:
    """Not empty by mistake: the docs name module paths, and a retired one is reported."""
    assert len(_named()) > 20
    assert _resolves("suites.calibration.readers.numbers.find_quantities") is None
    assert _resolves("reading.numbers.find_quantities") == "no such module in the package"
    assert _resolves("run.session.NoSuchThing") == "run.session defines no NoSuchThing"
    assert _path_problem("reading/negation.py") == "no such file or folder in the package"
    assert _path_problem("suites/calibration/readers/negation.py") is None
