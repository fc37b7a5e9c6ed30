"""The model seam: the only code that calls or reads the user's model.

:class:`Model` adapts estimators, Pipelines, plain callables and torch / JAX
models to ``encoded rows -> one float per row`` (and gradients); the private
modules hold the framework primitives it uses.
"""

from ._categories import (Expected, expected_inputs, is_text, lightgbm_names, model_feature_names,
                          with_model_levels)
from ._jax import is_jax_function
from ._torch import import_torch, is_torch_module
from .adapter import Model, ModelError, class_position, tree_ensemble_name
# the rule of target= "all" / a list, for the tree methods that read outputs from the trees
from ._targets import _requested_outputs as requested_outputs
from ._output import output_position, own_output
from ._responses import RESPONSES, response_model
from ._inputs import InputModel
from ._transformers import TEXT_OUTPUTS, TextClassifier, text_classifier
from ._threads import kernel_threads

__all__ = ["Model", "ModelError", "tree_ensemble_name",
           "is_jax_function", "InputModel", "is_torch_module", "import_torch", "kernel_threads",
           "Expected", "expected_inputs", "is_text", "model_feature_names", "lightgbm_names", "with_model_levels",
           "requested_outputs", "output_position", "own_output", "class_position",
           "RESPONSES", "response_model", "TextClassifier", "text_classifier", "TEXT_OUTPUTS"]
