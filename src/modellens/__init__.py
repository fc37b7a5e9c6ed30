"""modellens: model-agnostic explanations of trained models."""

from ._config import config, get_config
from ._validation import InvalidParameterError, ModellensWarning
from .attribution import Attributions, shapley
from .effects.ale import ale
from .effects.dale import dale
from .effects.mplot import mplot
from .effects.pdp import pdp
from .effects.result import Band, Bins, Effect, Effects
from .models import ModelError
from .report import Report, report

__version__ = "0.1.0"

__all__ = ["pdp", "mplot", "ale", "dale", "shapley", "config", "get_config", "Effect", "Effects",
           "Band", "Bins", "Attributions", "ModelError", "InvalidParameterError",
           "ModellensWarning", "report", "Report", "__version__"]
