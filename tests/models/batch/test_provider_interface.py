"""The batch providers stand on their backends' public interface: no private member of another object is used,
and no import circle runs through them, counting the imports inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src"
PROVIDERS = ("biaslab/models/openai/batch.py", "biaslab/models/anthropic/batch.py")
WATCHED = (
    "biaslab.models.batch",
    "biaslab.models.openai.batch",
    "biaslab.models.openai.backend",
    "biaslab.models.anthropic",
)


def test_the_batch_providers_use_no_private_member_of_another_object():
    for rel in PROVIDERS:
        tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
        private = [
            f"{rel}:{node.lineno} .{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ]
        assert private == []


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "biaslab").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """Every biaslab module ``module`` imports, at its top or inside a function (``if TYPE_CHECKING:`` aside)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            test = node.test
            if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            ):
                for sub in node.orelse:
                    self.visit(sub)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(a.name for a in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)

    Visitor().visit(ast.parse(path.read_text(encoding="utf-8")))
    deps = set()
    for name in found:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in known and prefix != module and not module.startswith(prefix + "."):
                deps.add(prefix)
    return deps


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for dep in graph[todo.pop()]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_no_import_circle_runs_through_the_batch_providers_or_their_backends():
    modules = _modules()
    graph = {m: _imports(m, p, set(modules)) for m, p in modules.items()}
    watched = [m for m in modules if m.startswith(WATCHED)]
    assert "biaslab.models.anthropic.batch" in watched and "biaslab.models.batch.runner" in watched
    circles = {m: sorted(d for d in graph[m] if m in _reaches(graph, d)) for m in watched}
    assert {m: deps for m, deps in circles.items() if deps} == {}
