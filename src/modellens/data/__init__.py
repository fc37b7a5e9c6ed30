"""The data seam: numpy, pandas, polars or pyarrow in, one float matrix plus a schema inside.

Every method works on ``Dataset.values``, a float64 matrix in which a
categorical column holds its level codes (``NaN`` for missing).  The schema
(names, kinds, levels, original dtypes) lets the model adapter turn any block of
such rows back into exactly the form the model was fit on.

The package's face: ``_tables`` (polars and pyarrow read as pandas),
``_columns`` (a column's schema and its encoding), ``_dataset`` (the matrix and
its schema), ``_rows`` (features and rows as the user names them) and
``_pairing`` (rows encoded with other rows under one schema).
"""

from .._validation import is_integer
from ._columns import CATEGORICAL, NUMERIC, Column
from ._dataset import Dataset, resolve_features
from ._pairing import check_levels, encode_with, unknown_levels
from ._rows import feature_position, row_as_frame, row_labels, sample_rows
from ._tables import as_pandas, as_pandas_pair, as_pandas_series

__all__ = ["Dataset", "Column", "resolve_features", "is_integer", "feature_position",
           "sample_rows", "encode_with", "row_as_frame", "row_labels", "as_pandas", "as_pandas_pair",
           "as_pandas_series", "unknown_levels", "check_levels", "NUMERIC", "CATEGORICAL"]
