"""``modellens compare``: the Shapley values of model_b - model_a on a data file, as a table.

The command line's file reading stays in :mod:`modellens.cli` (lane of its
loaders); this module adds the subcommand and is handed those loaders.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace
from typing import Any

__all__ = ["add_compare"]


def add_compare(sub, io: SimpleNamespace) -> None:
    """The ``compare`` command; ``io`` holds the CLI's ``existing_file``, ``count``,
    ``read_data``, ``load_model``, ``features_of``, ``say`` and ``CLIError``."""
    cmp = sub.add_parser(
        "compare", help="which features make two models predict differently",
        description="Explain the difference of two fitted models (model_b - model_a) on a "
                    "data file: the Shapley values of the difference, exact for two tree "
                    "ensembles, paired sampling otherwise. Prints each feature's mean "
                    "absolute and mean value, largest first, and the p-value (Holm) of "
                    "Student's t test of 'its mean value is 0'.")
    cmp.add_argument("--model", required=True, type=io.existing_file, metavar="FILE",
                     help="model_a, the reference model (as 'modellens report --model')")
    cmp.add_argument("--model-b", required=True, type=io.existing_file, metavar="FILE",
                     help="model_b, the model compared with it")
    cmp.add_argument("--data", required=True, type=io.existing_file, metavar="FILE",
                     help="the rows: a .csv or .parquet file")
    cmp.add_argument("--rows", type=io.count(1, "--rows"), default=200, metavar="N",
                     help="rows explained, the first N (default: %(default)s)")
    cmp.add_argument("--background", type=io.count(1, "--background"), default=100,
                     metavar="N", help="background rows drawn from the data "
                                       "(default: %(default)s)")
    cmp.add_argument("--out", type=Path, metavar="FILE",
                     help="also write every row's values (attr.to_frame()) to this .csv file")
    cmp.add_argument("--seed", type=io.count(0, "--seed"), default=0,
                     help="random seed (default: %(default)s)")
    cmp.add_argument("--trust-model-file", action="store_true",
                     help="load pickle / joblib files (they can run code: trusted files only)")
    cmp.set_defaults(func=lambda args: _compare(args, io))


def _compare(args: argparse.Namespace, io: SimpleNamespace) -> int:
    import numpy as np

    import modellens as ml

    model_a = io.load_model(args.model, trust=args.trust_model_file)
    model_b = io.load_model(args.model_b, trust=args.trust_model_file)
    frame = io.read_data(args.data, model_a)
    frame.columns = [str(c) for c in frame.columns]
    X, _ = io.features_of(model_a, frame, None)
    X_b, _ = io.features_of(model_b, frame, None)
    if list(X.columns) != list(X_b.columns):
        raise io.CLIError(f"the two models take other columns ({list(X.columns)} and "
                          f"{list(X_b.columns)}); compare models of the same features.")
    rng = np.random.default_rng(args.seed)
    background = X.iloc[np.sort(rng.choice(len(X), min(args.background, len(X)),
                                           replace=False))]
    diff: Any = ml.compare(model_a, model_b, X.iloc[:args.rows], background=background,
                      random_state=args.seed)
    if diff.outputs is not None:
        diff = diff.for_output(diff.output_labels[-1])
    values = np.asarray(diff.values)
    order = np.argsort(-np.abs(values).mean(axis=0), kind="stable")
    # each feature's test of "its mean value over the rows' population is 0" (Holm)
    p = diff.mean_test()["p_value"].to_numpy() if len(values) > 1 else np.full(values.shape[1],
                                                                              np.nan)
    io.say(f"{diff.output} on {len(values)} rows ({diff.diagnostics['compare']}; "
           f"mean difference {np.mean(diff.prediction):.4g})")
    io.say(f"{'feature':<30} {'mean |value|':>14} {'mean value':>12} {'p (Holm)':>10}")
    for j in order:
        io.say(f"{diff.feature_names[j][:30]:<30} {np.abs(values[:, j]).mean():>14.4g} "
               f"{values[:, j].mean():>12.4g} {p[j]:>10.3g}")
    if args.out is not None:
        diff.to_frame().to_csv(args.out, index=False)
        io.say(f"wrote {args.out}")
    return 0
