"""Matplotlib pictures of modellens results."""

from ._common import plain_figure, plain_figures, subplots
from .effects import plot_effect, plot_effects
from .interactions import plot_interactions

__all__ = ["plain_figure", "plain_figures", "subplots", "plot_effect", "plot_effects", "plot_interactions"]
