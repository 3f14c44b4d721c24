"""``lazynd`` never imports ``lazynd_sym`` or ``lazynd_kv``: the symbolic and kvstore faces are reached lazily."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import lazynd as mx

ROOT = Path(__file__).resolve().parents[1]
SIBLINGS = ("lazynd_sym", "lazynd_kv")


def _sibling_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        found += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in SIBLINGS]
    return found


def test_no_lazynd_module_has_an_import_statement_of_a_sibling_package() -> None:
    # function-level imports count too: the faces go through lazynd/__init__'s lazy table
    found = [line for path in sorted((ROOT / "lazynd").rglob("*.py")) for line in _sibling_imports(path)]
    assert found == []


def test_importing_every_lazynd_module_leaves_the_siblings_unimported() -> None:
    code = (
        "import importlib, pkgutil, sys, lazynd\n"
        "for info in pkgutil.walk_packages(lazynd.__path__, 'lazynd.'):\n"
        "    if '.cuda' not in info.name and not info.name.startswith('lazynd.tools'):\n"
        "        importlib.import_module(info.name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lazynd_sym', 'lazynd_kv')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_mx_callback_do_checkpoint_is_the_symbolic_checkpoint_callback() -> None:
    from lazynd_sym.model.checkpoint import do_checkpoint

    assert mx.callback.do_checkpoint is do_checkpoint
    assert "do_checkpoint" in dir(mx.callback)


def _private_numpy_uses(path: Path) -> list[str]:
    """Imports of NumPy's private modules (``numpy._core``...) and ``np._name`` attribute reads in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("np", "numpy")
            and node.attr.startswith("_")
        ):
            names = [f"{node.value.id}.{node.attr}"]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] in ("np", "numpy") and any(p.startswith("_") or p == "core" for p in parts[1:]):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} uses {name}")
    return found


def test_no_module_uses_numpys_private_api() -> None:
    # private NumPy changes without notice between releases; the public API (np.errstate...) does not
    packages = ("lazynd", "lazynd_sym", "lazynd_kv")
    found = [
        line for pkg in packages for path in sorted((ROOT / pkg).rglob("*.py")) for line in _private_numpy_uses(path)
    ]
    assert found == []


MAX_LINES = 400  # the project's rule: a module holds one idea in 100-400 lines


def test_no_package_module_is_over_the_line_limit() -> None:
    # a module past the limit holds two ideas: split it by idea, not by slicing a class
    long = [
        f"{path.relative_to(ROOT)}: {count} lines"
        for package in ("lazynd", "lazynd_sym", "lazynd_kv")
        for path in sorted((ROOT / package).rglob("*.py"))
        if (count := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert long == []
