"""Matplotlib pictures of modellens results."""

from .effects import plot_effect, plot_effects

__all__ = ["plot_effect", "plot_effects"]
