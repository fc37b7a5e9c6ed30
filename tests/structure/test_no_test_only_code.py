"""No test-only code inside ``src`` (issue 46): every module-level function of a private
module is used by the library itself (its code or its documentation), not only by tests.

A reference implementation a test needs (a Shapley value from a whole game, say) lives in
the tests; a function nothing calls goes.  Public modules are the user's: their functions
are the API, used or not.
"""

import ast
import pathlib
import re
from collections import Counter

import modellens as ml

SRC = pathlib.Path(ml.__file__).parent


def _without_exports(text: str) -> str:
    """The source without its ``__all__`` and plain ``from ... import`` lines (a re-export
    is not a use; an import under another name is: the other name is then looked for)."""
    lines = text.splitlines()
    drop = set()
    for node in ast.walk(ast.parse(text)):
        export = isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "__all__" for t in node.targets)
        plain_import = isinstance(node, ast.ImportFrom) and not any(a.asname for a in node.names)
        if export or plain_import:
            drop |= set(range(node.lineno, node.end_lineno + 1))
    return "\n".join(line for i, line in enumerate(lines, 1) if i not in drop)


def unused_functions(files: dict) -> list:
    """``"module.py:name"`` of each module-level function of a private module that no other
    line of ``files`` (path -> source) names."""
    words = Counter(re.findall(r"\w+", "\n".join(_without_exports(t) for t in files.values())))
    out = []
    for path, source in files.items():
        name = pathlib.PurePath(path).name
        if not name.startswith("_") or name == "__init__.py":
            continue
        for node in ast.parse(source).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and not node.name.startswith("__") \
                    and words[node.name] <= 1:
                out.append(f"{path}:{node.name}")
    return sorted(out)


def test_no_function_of_a_private_module_is_used_only_by_tests():
    files = {p.relative_to(SRC).as_posix(): p.read_text() for p in SRC.rglob("*.py")}
    found = unused_functions(files)
    assert not found, (f"used by nothing in the library: move it to the tests that need it, "
                       f"or delete it: {found}")


def test_the_check_sees_an_unused_function():
    files = {"pkg/_a.py": "__all__ = ['f', 'g', 'h']\ndef f():\n    return g()\n"
                          "def g():\n    pass\ndef h():\n    pass\n",
             "pkg/__init__.py": "from ._a import f, h\nfrom ._a import g as _g\n",
             "pkg/public.py": "def unused():\n    pass\n"}
    # f is only exported (a re-export is no use), h only listed; g is called
    assert unused_functions(files) == ["pkg/_a.py:f", "pkg/_a.py:h"]
