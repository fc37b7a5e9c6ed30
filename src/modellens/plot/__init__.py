"""Matplotlib pictures of modellens results."""

from .effects import plot_effect, plot_effects
from .interactions import plot_interactions

__all__ = ["plot_effect", "plot_effects", "plot_interactions"]
