"""Sphinx configuration for the modellens documentation.

Build (offline, warnings are errors, the gallery is executed)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

import os
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The checkout's own sources first, so the docs describe the code beside them (a copy of
# docs/ elsewhere, as the docs test makes, uses the modellens on the path instead).
if (HERE.parent / "src" / "modellens").is_dir():
    sys.path.insert(0, str(HERE.parent / "src"))
os.environ.setdefault("MPLBACKEND", "Agg")

import modellens  # noqa: E402

project = "modellens"
author = "the modellens developers"
copyright = "the modellens developers"
version = release = modellens.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax copied into the site, so formulas render without a network (the default
    # loads MathJax from a CDN)
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "examples/README.rst"]
root_doc = "index"
default_role = "literal"  # single backticks in the guide are code, not cross-references

# --- API pages -------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"           # types are in the numpydoc Parameters sections
autodoc_default_options = {"inherited-members": False}
numpydoc_show_class_members = False  # the class template lists members itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# --- warnings are errors, every reference must resolve -----------------------------------
nitpicky = True
# Names that public docstrings in src/ mention but that have no page of their own (private
# helpers, and one stale path): they render as text.  Fix them in the docstrings, then
# delete them here.
nitpick_ignore = [
    ("py:func", "interaction_partner"),
]
# Names of other libraries: intersphinx would need the network, so they stay plain text.
nitpick_ignore_regex = [
    (r"py:.*", r"(np|numpy|pd|pandas|sklearn|scipy|matplotlib|mpl|plt|torch|jax|dask"
               r"|distributed|shap|lime|skimage|IPython|pyarrow|polars|pl|narwhals)(\..*)?"),
    (r"py:.*", r"(ndarray|DataFrame|Series|Axes|Figure|Explanation|Client|ArrayLike"
               r"|NDArray|DTypeLike|Tensor|Module)"),
    # Builtins and typing names that numpydoc/autodoc may turn into references.
    (r"py:.*", r"(str|int|float|bool|dict|list|tuple|None|object|callable|Callable|Iterable"
               r"|Sequence|Mapping|Any|Literal|Optional|Union|TypeVar|array-like"
               r"|ValueError|TypeError|Warning|UserWarning|RuntimeError|Exception)"),
    # The standard library's abstract types in the values of modellens.typing's aliases.
    (r"py:.*", r"(collections\.abc|typing|types|os)\.\w+"),
    # Private modules and helpers that public docstrings mention.
    (r"py:.*", r"modellens\.(attribution|effects|engine|models|plot|report|data|_\w+)(\..*)?"),
]

# The changelog is included from the repository's CHANGELOG.md below its title.
suppress_warnings = ["myst.header"]

# --- look ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"modellens {release}"
html_static_path = ["_static"]
html_css_files = ["modellens.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_sidebars = {"index": [], "install": [], "changelog": []}
html_show_sourcelink = True
html_last_updated_fmt = None

# --- gallery (executed at every build) -----------------------------------------------------
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg",
                        category=UserWarning)

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "capture_repr": (),  # show what the scripts print, not the repr of a last expression
    "show_memory": False,
    "plot_gallery": "True",
    "reset_modules": ("matplotlib", "seaborn"),
    "doc_module": ("modellens",),
    "reference_url": {"modellens": None},
    "backreferences_dir": "generated/backrefs",
    "first_notebook_cell": None,
    "min_reported_time": 1,
    # the computation-times page loads scripts from CDNs; the site must work offline
    "write_computation_times": False,
}
