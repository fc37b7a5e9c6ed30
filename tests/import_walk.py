"""The modellens modules a source file imports: the one walker of the structure tests.

``tests/structure/test_limits.py`` (private modules past a package's face) and
``tests/structure/test_structure.py`` (import circles, layers) read the same
imports: every node of the file, imports inside functions included.
"""

import ast
import pathlib

import modellens as ml

SRC = pathlib.Path(ml.__file__).parent


def module_name(path) -> str:
    """The dotted name of a source file of the package (``modellens.engine`` for its face)."""
    parts = ("modellens",) + pathlib.Path(path).relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: Every module of the package by its dotted name.
MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def imported_modules(source: str, me: str, is_package: bool) -> set:
    """Every modellens module ``source`` (the module ``me``) imports, at any depth.

    ``from .pkg import name`` counts as an import of ``pkg.name`` when that is a
    module, else of ``pkg`` (its ``__init__``, which runs when it is imported).
    """
    package = me if is_package else me.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(source)):  # every node: function-level imports included
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] == "modellens":
                for alias in node.names:
                    sub = f"{mod}.{alias.name}"
                    out.add(sub if sub in MODULES else mod)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "modellens"}
    return out
