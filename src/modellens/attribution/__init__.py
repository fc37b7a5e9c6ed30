"""Local attributions: Shapley values (exact, permutation sampling, KernelSHAP) and LIME."""

from ._cohorts import GroupComparison, holm
from ._blocks import MediaBlock, SamplingBlock, SurrogateBlock
from ._masking import ImageMasker, TextMasker
from .faithfulness import DeletionCurves, deletion_curves
from .distributed import AttributionSummary, DistributedAttributions
from .interaction_pairs import InteractionPairs
from .lime import WidthSweep, lime, lime_width_sweep
from .media import lime_image, lime_text
from .result import Attributions
from .shapley import shapley

__all__ = ["Attributions", "shapley", "lime", "lime_text", "lime_image", "lime_width_sweep",
           "WidthSweep", "TextMasker", "ImageMasker", "SurrogateBlock", "SamplingBlock",
           "MediaBlock", "DistributedAttributions", "AttributionSummary", "InteractionPairs",
           "GroupComparison", "holm", "DeletionCurves", "deletion_curves"]
