"""The tree ensembles: reading fitted trees, checking them, and the kernels over them.

:func:`tree_ensemble` reads a scikit-learn, XGBoost or LightGBM model into a
:class:`TreeEnsemble` (flat node arrays, each library's split semantics kept);
:func:`route` answers whether the trees can serve a request of a tree method and
answer as the model does on its rows, and if not why, in each method's one refusal or
fallback warning (every tree method asks it);
the ``check_*`` functions refuse tree arrays that would send a kernel out of
bounds before anything reads them (``lightgbm_saved_text``: a loaded
LightGBM booster's text for the check of what it read; ``lightgbm_loaded_booster``: a
booster loaded from checked bytes as they are); :mod:`kernels` holds the numba kernels the
tree methods (TreeSHAP, tree partial dependence, tree H statistics) run, and
:func:`ice_margins` the exact ICE curves of data rows (no model rows).
Other packages reach all of it through this face only.
"""

from .._kernel_cache import keep_kernels_fresh

keep_kernels_fresh()  # before any kernel module: their caches are keyed on the whole package

from . import _kernels as kernels  # noqa: E402
from ._checks import MAX_TREE_DEPTH, UnsafeModelError
from ._checks_lightgbm import check_lightgbm_text
from ._checks_lightgbm_scan import check_lightgbm_file
from ._checks_sklearn import check_sklearn_objects
from ._checks_xgboost import FLAT_ARRAYS, FlatTrees, check_xgboost_model
from ._checks_xgboost_scan import TreesAsRead
from ._checks_xgboost_doc import scan_xgboost_ubjson
from ._checks_xgboost_json import scan_xgboost_json
from ._ice import IceGrids, ice_margins
from ._ensemble import (MISSING_AS_ZERO, MISSING_CATEGORICAL, MISSING_DEFAULT, MISSING_ZERO_OR_NAN,
                        SUPPORTED_TREE_MODELS, TreeEnsemble)
from ._lightgbm import lightgbm_loaded_booster, lightgbm_saved_text
from ._read import output_column, tree_ensemble, tree_outputs, unfit_data
from ._route import ROUTED_METHODS, Route, raw_is_response, refused, route
from ._agree import (CHECK_TOLERANCE, DATA_CHECK_ROWS, EXPLAINED_CHECK_ROWS, FLOAT32_TOLERANCE,
                     RESPONSE_CHECK_ROWS, disagreement, margin_disagreement, margin_model,
                     model_response, respond)
from ._state import compile_leaf_reader

__all__ = ["TreeEnsemble", "tree_ensemble", "output_column", "tree_outputs", "unfit_data",
           "route", "Route", "ROUTED_METHODS", "SUPPORTED_TREE_MODELS", "MISSING_DEFAULT", "MISSING_AS_ZERO",
           "MISSING_ZERO_OR_NAN", "MISSING_CATEGORICAL", "UnsafeModelError", "check_lightgbm_text", "check_lightgbm_file",
           "check_sklearn_objects", "check_xgboost_model", "FlatTrees", "FLAT_ARRAYS", "scan_xgboost_ubjson",
           "TreesAsRead",
           "scan_xgboost_json", "kernels", "MAX_TREE_DEPTH",
           "lightgbm_saved_text", "lightgbm_loaded_booster", "IceGrids", "ice_margins", "compile_leaf_reader",
           "disagreement", "margin_disagreement", "margin_model", "respond", "refused", "CHECK_TOLERANCE", "FLOAT32_TOLERANCE",
           "EXPLAINED_CHECK_ROWS", "DATA_CHECK_ROWS", "RESPONSE_CHECK_ROWS", "raw_is_response",
           "model_response"]
