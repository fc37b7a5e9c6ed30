"""Files: data and model files read safely and as the model expects them, files written whole.

The report takes objects; reading files is the command line's job, and a
user's through the two public functions :func:`~modellens.load_model` and
:func:`~modellens.read_data`.  The rest of this face is what the command line
and the report's ``save`` need: the checks of a frame against the model's
record of its inputs, and writing a file whole or not at all.
"""

from ..models import lightgbm_names, model_feature_names
from ._data import check_frame, conform, read_data, read_table, sample_table
from ._errors import FileError
from ._models import SAFE_TYPES, load_model
from ._write import same_file, write_atomic

__all__ = ["load_model", "read_data", "FileError", "SAFE_TYPES", "read_table", "sample_table",
           "conform", "check_frame", "write_atomic", "same_file", "model_feature_names",
           "lightgbm_names"]
