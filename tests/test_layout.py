"""The shape of the source tree: no import circle between modules and no package importing a layer above it
(counting imports inside functions and under TYPE_CHECKING), no module over 400 lines, no test infrastructure in
the product."""

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "biaslab").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, known: set[str]) -> dict[str, int]:
    """Modules of biaslab that ``module`` imports, each with the line of its first import: every import statement,
    at file level, inside functions and classes, and under ``TYPE_CHECKING`` alike (a circle or a climb hidden in a
    function is one all the same)."""
    return _imports_of(ast.parse(path.read_text(encoding="utf-8")), module, path.name == "__init__.py", known)


def _imports_of(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> dict[str, int]:
    package = module if is_package else module.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in _statements(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] + [f"{target}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # importing a.b.c imports a, a.b and a.b.c
                prefix = ".".join(parts[:i])
                if prefix in known and prefix != module and not module.startswith(prefix + "."):
                    found.setdefault(prefix, node.lineno)  # a package's __init__ above it: not a circle of two
    return found


def _statements(node: ast.AST):
    """Every statement in ``node``, at any depth (bodies of functions, classes, ifs, trys, withs, loops, matches):
    an import is a statement, so expressions are not walked."""
    for block in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(node, block, None) or []:
            yield child
            yield from _statements(child)


@functools.cache
def _graph() -> dict[str, dict[str, int]]:
    modules = _modules()
    return {m: _imports(m, p, set(modules)) for m, p in modules.items()}


def _circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every set of two or more modules that import each other, directly or around a loop (Tarjan's strongly
    connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for m in graph:
        if m not in index:
            strong(m)
    return sorted(cycles)


# Circles allowed between modules: none (kept as a list so that a new one has to be named here on purpose).
KNOWN_CIRCLES: list[list[str]] = []  # none: a circle is broken by a shared interface or a third module

# Packages each package must not import (at file level, inside functions or under TYPE_CHECKING): the layers.
# ``probing`` is the contract a probe author reads: it runs nothing of the application above it.
_ABOVE_PROBING = {"biaslab.app", "biaslab.cli", "biaslab.compare", "biaslab.gate", "biaslab.probes", "biaslab.report"}
LAYERS = {
    "biaslab.probing": _ABOVE_PROBING | {"biaslab.suite"},
    "biaslab.models": _ABOVE_PROBING | {"biaslab.suite"},
    "biaslab.report": {"biaslab.app", "biaslab.cli", "biaslab.suite"},
    "biaslab.app": {"biaslab.cli", "biaslab.suite"},
    "biaslab.suite": {"biaslab.cli"},
}


def test_no_import_circle_between_modules():
    assert [c for c in _circles(_graph()) if c not in KNOWN_CIRCLES] == []


def test_no_package_imports_a_layer_above_it():
    climbs = [
        f"{_modules()[m].relative_to(SRC)}:{line} imports {dep}"
        for m, deps in _graph().items()
        for dep, line in deps.items()
        for package, above in LAYERS.items()
        if (m == package or m.startswith(package + ".")) and any(dep == a or dep.startswith(a + ".") for a in above)
    ]
    assert climbs == []


def test_imports_inside_functions_and_under_type_checking_count():
    """The import graph sees every import statement, so a circle or a climb cannot hide in a function body."""
    code = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from biaslab.probes import PROBES\n"
        "def f():\n    from biaslab.report.html import write_report\n"
        "class C:\n    def g(self):\n        from . import schema\n"
    )
    known = {"biaslab", "biaslab.probes", "biaslab.report", "biaslab.report.html", "biaslab.probing.schema"}
    found = _imports_of(ast.parse(code), "biaslab.probing.core", False, known)
    assert found == {"biaslab.probes": 3, "biaslab.report": 5, "biaslab.report.html": 5, "biaslab.probing.schema": 8}
    assert _circles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]


def test_no_module_over_400_lines():
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_load_generator_in_the_product():
    assert not [p for p in SRC.rglob("*.py") if "loadgen" in p.name]
    assert not (SRC / "biaslab" / "annotation").exists()


def test_every_test_folder_is_collected(pytestconfig):
    """No folder of tests is one pytest skips by name (its ``norecursedirs``: ``build``, ``dist``, ``venv``,
    dot-folders...); tests/wino/build was, and its 129 tests never ran."""
    import fnmatch

    tests = Path(__file__).resolve().parent
    skipped = pytestconfig.getini("norecursedirs")
    folders = {p.parent for p in tests.rglob("test_*.py")}
    hidden = [
        str(f.relative_to(tests))
        for f in folders
        for part in f.relative_to(tests).parts
        if any(fnmatch.fnmatch(part, pattern) for pattern in skipped)
    ]
    assert not hidden, f"pytest never collects these test folders (rename them): {hidden}"
