"""The report and the command line use the public API only (issue 28).

They are the library's first users: what they need from the methods, a user
needs too, so they reach it through the names ``modellens/__init__.py``
exports, never through the engine's, the model seam's or numba's internals.
Allowed from outside their own package:

- any name the face exports (``ml.predict`` is defined in ``_predict``,
  ``ml.ModelError`` in ``models.adapter``: importing those from where they are
  defined is using the public API);
- the shared leaves every layer uses: ``_validation`` (checks and errors),
  ``_config`` (``ml.config``), ``_version``, ``_progress`` (the bars
  ``ml.config(progress=...)`` draws), ``_process`` (the cores, the counted hold of
  process-wide state), ``typing``, ``data`` (the input seam: names, kinds, levels),
  ``datasets``;
- public names of public modules of ``attribution``, ``effects`` and ``plot``
  (for example ``attribution.shapley.MAX_EXACT_FEATURES``);
- the face of ``modellens.files`` (reading data and model files, writing files whole):
  the command line reads its files there, the report writes its page and checks a
  frame against the model's record of its inputs there; neither reaches the model
  seam or the trees for it.

Refused: anything else from ``engine``, ``models`` or ``trees``, a private module
(``_name``) of another package, a private name from anywhere outside the
package.
"""

import ast
import importlib.util
import pathlib

import modellens as ml

SRC = pathlib.Path(ml.__file__).parent
PUBLIC = set(ml.__all__)
LEAVES = {"_validation", "_config", "_version", "_progress", "_process", "typing", "data",
          "datasets"}
INTERNAL = {"engine", "models", "trees"}


def _module(path):
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path, source=None):
    """``(module, name)`` of every ``from modellens... import name`` in ``path`` (function-level
    imports included); ``(module, None)`` for ``import modellens.x``."""
    tree = ast.parse(path.read_text() if source is None else source)
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            if mod.split(".")[0] == "modellens":
                out += [(mod, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.split(".")[0] == "modellens"]
    return out


def violations(path, source=None, *, own):
    """The imports of ``path`` that reach past the public API (``own``: its package)."""
    found = []
    for mod, name in imports(path, source):
        parts = mod.split(".")[1:]
        if not parts and name is not None and ((SRC / f"{name}.py").exists()
                                               or (SRC / name).is_dir()):
            parts, name = [name], None  # from modellens import module: the module itself
        if not parts:  # the face: its public names only
            if name is not None and name not in PUBLIC and name != "__version__":
                found.append(f"modellens.{name} is not public")
            continue
        top = parts[0]
        if top == own:
            continue
        if name is not None and name in PUBLIC:
            continue  # a public name, from the module that defines it
        if top in LEAVES and len(parts) == 1:
            if name is not None and name.startswith("_"):
                found.append(f"{mod}.{name} is private")
            continue
        if top in INTERNAL:
            found.append(f"{mod}.{name or ''} is an internal of the {top} package")
        elif any(p.startswith("_") for p in parts):
            found.append(f"{mod} is a private module")
        elif name is not None and name.startswith("_"):
            found.append(f"{mod}.{name} is private")
    return found


def _files():
    yield from ((p, "report") for p in sorted((SRC / "report").rglob("*.py")))
    yield SRC / "cli.py", "cli"


def test_the_report_and_the_command_line_use_only_the_public_api():
    found = {str(p.relative_to(SRC)): v for p, own in _files()
             if (v := violations(p, own=own))}
    assert not found, f"reaching past the public API: {found}"


def test_the_report_imports_nothing_of_the_model_seam_or_the_trees():
    """The report takes objects (issue 46): it reads no model file and asks the model seam
    nothing; what it learns of a model it learns through the public functions."""
    found = [f"{p.relative_to(SRC)}: {mod}" for p, own in _files() if own == "report"
             for mod, _ in imports(p) if mod.split(".")[1:2] in (["models"], ["trees"])]
    assert not found, found


def test_files_are_read_through_public_faces_only():
    """Reading a model or a data file is the public ``ml.load_model`` / ``ml.read_data`` and
    the ``modellens.files`` face; no private module of the report is the command line's."""
    assert {"load_model", "read_data"} <= PUBLIC
    from modellens import files

    assert ml.load_model is files.load_model and ml.read_data is files.read_data
    # a package's private module (``report._files``); the shared leaves (``_config``) are allowed
    found = [mod for mod, _ in imports(SRC / "cli.py")
             if any(p.startswith("_") for p in mod.split(".")[2:])]
    assert not found, found


def test_the_check_sees_each_kind_of_reach():
    probe = SRC / "report" / "probe.py"
    source = ("from ..engine._progress import progress_bar\n"
              "def f():\n"
              "    from ..models import tree_ensemble_name, ModelError\n"
              "    from ..models import _tree_kernels as kernels\n"
              "    from ..attribution._games import TreeGame\n"
              "    from ..effects.pdp import _helper\n"
              "    from .._predict import predict\n"
              "    from .._validation import InvalidParameterError\n"
              "    from ..attribution.shapley import MAX_EXACT_FEATURES\n"
              "    from ._inputs import take_rows\n")
    found = violations(probe, source, own="report")
    assert found == ["modellens.engine._progress.progress_bar is an internal of the engine "
                     "package",
                     "modellens.models.tree_ensemble_name is an internal of the models package",
                     "modellens.models._tree_kernels is an internal of the models package",
                     "modellens.attribution._games is a private module",
                     "modellens.effects.pdp._helper is private"]
