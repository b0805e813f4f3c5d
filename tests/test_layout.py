"""The shape of the source tree: no import circle between modules, no module over 400 lines,
no test infrastructure in the product."""

import ast
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


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_imports(module: str, path: Path, known: set[str]) -> set[str]:
    """Modules of biaslab imported when ``module`` is imported (function bodies and TYPE_CHECKING aside)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(body):
        for node in body:
            if isinstance(node, ast.If) and _is_type_checking(node):
                visit(node.orelse)
                continue
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                for block in ("body", "orelse", "finalbody", "handlers"):
                    for sub in getattr(node, block, []) or []:
                        visit(sub.body if isinstance(sub, ast.ExceptHandler) else [sub])
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    deps = set()
    for name in found:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c imports a, a.b and a.b.c
            prefix = ".".join(parts[:i])
            if prefix in known and prefix != module:
                deps.add(prefix)
    return deps


def test_no_import_circle_between_modules():
    modules = _modules()
    graph = {m: _top_level_imports(m, p, set(modules)) for m, p in modules.items()}
    # a package's own __init__ importing its submodules is not a circle of two modules
    graph = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def strong(v):  # Tarjan's strongly connected components
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
    assert cycles == []


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
