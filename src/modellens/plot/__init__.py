"""Matplotlib pictures of modellens results."""

from ._common import plain_figure
from .effects import plot_effect, plot_effects
from .interactions import plot_interactions

__all__ = ["plain_figure", "plot_effect", "plot_effects", "plot_interactions"]
