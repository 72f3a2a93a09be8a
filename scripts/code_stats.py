"""Counts the issue's code measures over ragingest/: ``Any`` in signatures, function-level
imports of our own modules, docstring coverage of public names, files over 300 lines.

Run: ``python scripts/code_stats.py [--list any|imports|docs]`` from the repository root.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "ragingest"


def _mentions_any(node: ast.expr | None) -> bool:
    if node is None:
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id == "Any":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "Any":
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "Any" in sub.value:
            return True
    return False


def _annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr | None]:
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    params += [p for p in (a.vararg, a.kwarg) if p is not None]
    return [p.annotation for p in params] + [fn.returns]


def _public_defs(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """Module-level public functions and classes, and the public methods of public classes."""
    found: list[tuple[str, ast.AST]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name.startswith("_"):
                continue
            found.append((node.name, node))
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    is_fn = isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    if is_fn and not item.name.startswith("_"):
                        found.append((f"{node.name}.{item.name}", item))
    return found


def main() -> None:
    """Prints the counts; ``--list KIND`` also prints where each counted item is."""
    show = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--list" else ""
    any_count = signatures = any_signatures = local_imports = 0
    public = documented = 0
    long_files: list[tuple[int, str]] = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent)
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > 300:
            long_files.append((lines, str(rel)))
        tree = ast.parse(text)
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            signatures += 1
            hits = sum(_mentions_any(a) for a in _annotations(fn))
            any_count += hits
            any_signatures += hits > 0
            if hits and show == "any":
                print(f"{rel}:{fn.lineno}: {fn.name} ({hits})")
            for sub in ast.walk(fn):
                own = isinstance(sub, ast.ImportFrom) and (
                    sub.level > 0 or (sub.module or "").split(".")[0] == "ragingest"
                )
                own = own or (isinstance(sub, ast.Import) and any(
                    n.name.split(".")[0] == "ragingest" for n in sub.names
                ))
                if own:
                    local_imports += 1
                    if show == "imports":
                        print(f"{rel}:{sub.lineno}: in {fn.name}")
        for name, node in _public_defs(tree):
            public += 1
            if ast.get_docstring(node):  # type: ignore[arg-type]
                documented += 1
            elif show == "docs":
                print(f"{rel}:{node.lineno}: {name}")  # type: ignore[attr-defined]
    print(f"Any in signatures: {any_count} annotations in {any_signatures} of {signatures} "
          f"signatures ({100 * any_signatures / signatures:.0f} %)")
    print(f"function-level imports of ragingest modules: {local_imports}")
    print(f"docstring coverage of public names: {documented}/{public} "
          f"({100 * documented / public:.0f} %)")
    print(f"files over 300 lines: {len(long_files)}")
    for lines, rel in sorted(long_files, reverse=True):
        print(f"  {lines:5d} {rel}")


if __name__ == "__main__":
    main()
