"""What changed: two models (``compare``), two datasets (``shift``), with tests of change.

Other packages use it through this face only.
"""

from ._compare import METHODS, compare
from ._shift import shift
from .result import Shift

__all__ = ["compare", "shift", "Shift", "METHODS"]
