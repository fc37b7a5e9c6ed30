"""Compiled kernels live in the trees package and the engine only (issue 46): a method
elsewhere states its plan and the engine or the trees run the compiled loops."""

import ast
import pathlib

import modellens as ml

SRC = pathlib.Path(ml.__file__).parent
HOMES = ("trees/", "engine/")
COMPILERS = {"njit", "jit", "generated_jit", "vectorize", "guvectorize", "stencil"}


def _compiled(source: str) -> list:
    """Names of the functions of ``source`` that numba compiles (decorated)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                name = target.attr if isinstance(target, ast.Attribute) else \
                    getattr(target, "id", "")
                if name in COMPILERS:
                    out.append(node.name)
    return out


def test_no_numba_kernel_outside_the_trees_and_the_engine():
    found = {}
    for p in sorted(SRC.rglob("*.py")):
        rel = p.relative_to(SRC).as_posix()
        if not rel.startswith(HOMES) and (names := _compiled(p.read_text())):
            found[rel] = names
    assert not found, f"numba kernels outside {HOMES}: {found}"


def test_the_check_sees_a_kernel():
    assert _compiled("@njit(cache=True)\ndef k(a):\n    pass\n@numba.njit\ndef j(a):\n"
                     "    pass\ndef plain(a):\n    pass\n") == ["k", "j"]
