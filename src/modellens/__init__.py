"""modellens: model-agnostic explanations of trained models."""

from .attribution import Attributions, shapley
from .effects.ale import ale
from .effects.dale import dale
from .effects.mplot import mplot
from .effects.pdp import pdp
from .effects.result import Effect, Effects
from .model import ModelError

__version__ = "0.1.0"

__all__ = ["pdp", "mplot", "ale", "dale", "shapley", "Effect", "Effects", "Attributions", "ModelError",
           "__version__"]
