"""The statistics package's public face: every entry point resolves, importing the package is cheap, and the
package imports nothing from the layers above it."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import biaslab.stats as stats

STATS = Path(stats.__file__).resolve().parent


def test_every_public_name_is_its_module_object():
    assert len(stats.__all__) == len(set(stats.__all__))
    for name in stats.__all__:
        home = importlib.import_module(f"biaslab.stats.{stats._MODULE_OF[name]}")
        assert getattr(stats, name) is getattr(home, name), name
    assert set(stats.__all__) <= set(dir(stats))


def test_the_type_checking_imports_list_the_same_names():
    tree = ast.parse((STATS / "__init__.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    imported = {
        (node.module.rpartition(".")[2], alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    assert imported == {(module, name) for name, module in stats._MODULE_OF.items()}


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import():
    try:
        stats.bh_qvalues  # noqa: B018
    except AttributeError as err:
        assert "bh_qvalues" in str(err)
    else:
        raise AssertionError("no AttributeError")
    from biaslab.stats import noninferiority

    assert noninferiority.__name__ == "biaslab.stats.noninferiority"


def test_importing_the_package_imports_no_entry_point():
    watched = "('numpy', 'scipy', 'biaslab.')"
    code = f"import sys, biaslab.stats; print(sorted(m for m in sys.modules if m.startswith({watched})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['biaslab.stats']"


def test_stats_imports_no_other_part_of_biaslab():
    """stats is the bottom layer: planning, probes, compare, gate and the rest build on it, never the reverse
    (function-level imports included)."""
    found = []
    for path in sorted(STATS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            outside = [n for n in names if n.startswith("biaslab") and n.split(".")[:2] != ["biaslab", "stats"]]
            found += [f"{path.name}: {n}" for n in outside]
    assert found == []
