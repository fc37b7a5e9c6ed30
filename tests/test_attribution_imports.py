"""No import circles inside modellens.attribution and modellens.plot, function-level imports included."""

import ast
import pathlib

import modellens

PACKAGES = ("attribution", "plot")


def import_graph(root: pathlib.Path, top: str) -> dict:
    """Every module of the package at ``root`` (named ``top``) -> the package's modules it
    imports anywhere in its body (module level or inside functions)."""
    modules = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        name = ".".join([top] + (parts[:-1] if is_init else parts))
        modules[name] = (path, is_init)
    graph = {}
    for name, (path, is_init) in modules.items():
        package = name if is_init else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module
                # "from pkg import sub" imports the module pkg.sub when there is one
                targets = [stem] + [f"{stem}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_circles_inside_attribution_and_plot():
    root = pathlib.Path(modellens.__file__).parent
    graph = import_graph(root, "modellens")
    ours = [c for c in circles(graph)
            if any(m.split(".")[1] in PACKAGES for m in c if m.count("."))]
    assert ours == []


def test_the_check_finds_a_circle_held_by_a_function_level_import(tmp_path):
    pkg = tmp_path / "demo"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from .b import g\n")
    (pkg / "sub" / "b.py").write_text("def g():\n    from . import a\n    return a\n")
    (pkg / "c.py").write_text("from .sub.a import g\n")
    found = circles(import_graph(pkg, "demo"))
    assert found == [["demo.sub.a", "demo.sub.b"]]
