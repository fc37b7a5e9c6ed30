"""Local attributions: Shapley values (exact, permutation sampling, KernelSHAP)."""

from .result import Attributions
from .shapley import shapley

__all__ = ["Attributions", "shapley"]
