"""modellens: model-agnostic explanations of trained models."""

from ._config import config, get_config
from ._validation import (InvalidParameterError, MissingValuesWarning, ModellensWarning,
                          NotATreeModelError, UnknownLevelsWarning)
from .attribution import Attributions, shapley
from .attribution import (AttributionSummary, DistributedAttributions, ImageMasker, TextMasker,
                          WidthSweep, lime, lime_image, lime_text, lime_width_sweep)
from .attribution import DeletionCurves, GroupComparison, InteractionPairs, deletion_curves
from .change import Shift, compare, shift
from .effects.ale import ale
from .effects.dale import dale
from .effects.importance import importance
from .effects.importance_result import Importance
from .effects.interactions import interactions
from .effects.interactions_result import Interactions
from .effects.mplot import mplot
from .effects.pdp import pdp
from .effects.regions import regions
from .effects.regions_result import Regions
from .effects.result import Band, Bins, Effect, Effects
from .files import load_model, read_data
from .models import ModelError
from ._predict import predict
from .report import Report, ReportOptions, report
from ._warm import Warming, warm_up

from ._version import __version__

__all__ = ["pdp", "mplot", "ale", "dale", "shapley", "config", "get_config", "Effect", "Effects",
           "Band", "Bins", "Attributions", "ModelError", "InvalidParameterError",
           "ModellensWarning", "__version__", "lime", "lime_text", "lime_image",
           "lime_width_sweep", "WidthSweep", "TextMasker", "ImageMasker", "report", "Report",
           "ReportOptions",
           "interactions", "Interactions", "DistributedAttributions", "AttributionSummary",
           "predict", "warm_up", "Warming", "NotATreeModelError", "regions", "Regions",
           "importance", "Importance", "InteractionPairs", "MissingValuesWarning",
           "UnknownLevelsWarning", "load_model", "read_data", "compare", "shift", "Shift",
           "GroupComparison", "deletion_curves", "DeletionCurves"]
