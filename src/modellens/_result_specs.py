"""What every field of each public result's dict must hold (see :mod:`._result_checks`).

One function per result, called by its ``from_dict`` on the decoded fields
before anything is built.  Dimension names: ``n`` rows, ``d`` features,
``k`` outputs, ``g`` (``g1``, ``g2``) grid points, ``r`` ICE curves, ``p``
pairs, ``s`` repeats or sampled rows.
"""

from __future__ import annotations

import numpy as np

from ._result_checks import (Spec, array, check_fields, count, either, flag, mapping, number,
                             seq, text, texts)
from ._serialize import short

__all__ = ["check_attributions", "check_attribution_summary", "check_effect",
           "check_importance", "check_width_sweep",
           "check_interaction_pairs", "check_interactions", "check_region_tree",
           "MAX_REGION_DEPTH", "check_shift", "check_group_comparison",
           "check_deletion_curves", "check_summary_sample"]

_F = "f"
_NUM = "fiub"
_ANY = "biufMmUO"

_ATTRIBUTIONS = {
    "values": array(_F, "n d", "n d k"),
    "base_values": array(_F, "n", "n k"),
    "codes": array(_NUM + "O", "n d"),
    "feature_names": texts("d"),
    "method": text(),
    "output": text(),
    "prediction": array(_F, "n", "n k", optional=True),
    "column_labels": seq("d", optional=True),
    "value_function": text(optional=True),
    "interactions": array(_F, "n d d", "n d d k", optional=True),
    "columns": seq("d", item=mapping()),
    "outputs": texts("k", optional=True),
    "output_labels": seq("k", optional=True),
    "row_labels": array(_ANY, "n", optional=True),
    "surrogate": mapping(optional=True),
    "sampling": mapping(optional=True),
    "media": mapping(optional=True),
    "extra": mapping(optional=True),
}

_COLUMN = {"name": text(), "kind": text(choices=("numeric", "categorical")),
           "levels": array(_ANY, "*", optional=True), "ordered": flag()}

_BLOCKS = {
    "sampling": {"std": array(_F, "n d", "n d k", optional=True),
                 "dof": array(_F, "n", "n k", "n d", "n d k", optional=True),
                 "n_permutations": count(optional=True), "n_samples": count(optional=True),
                 "model_rows": array("iu", "n", optional=True, nonnegative=True),
                 "max_evals": count(optional=True),
                 "converged": array("b", "n", "n k", optional=True),
                 "tol": number(optional=True), "tol_abs": number(optional=True),
                 "interactions_std": array(_F, "n d d", "n d d k", optional=True)},
    "surrogate": {name: array(_F, "n", "n k", optional=True)
                  for name in ("intercept", "score", "score_holdout", "local_prediction")}
                 | {"conditions": seq("n", optional=True), "num_samples": count(optional=True),
                    "kernel_width": number(optional=True)},
    "media": {"kind": text(), "text": text(optional=True),
              "spans": array("iu", "* 2", optional=True, nonnegative=True),
              "image": array(_NUM, "* *", "* * *", optional=True),
              "segments": array("iu", "* *", optional=True, nonnegative=True)},
}


_BLOCK_FIELDS = {
    "sampling": ("std", "dof", "n_permutations", "n_samples", "model_rows", "converged", "tol",
                 "tol_abs", "max_evals", "interactions_std"),
    "surrogate": ("intercept", "score", "score_holdout", "local_prediction", "interpretable",
                  "conditions", "kernel_width", "num_samples", "discretize",
                  "feature_selection", "sampling", "stability"),
    "media": ("kind", "text", "spans", "image", "segments"),
}


def check_attributions(opened, values: dict) -> None:
    """An Attributions dict's fields: the core, each column, each block."""
    dims = check_fields(opened, values, _ATTRIBUTIONS)
    _check_output_axes(opened, values, "values", 2,
                       {"base_values": -1, "prediction": -1, "interactions": 1})
    for i, column in enumerate(values["columns"]):
        _known_keys(opened, column, ("name", "kind", "levels", "ordered", "dtype"),
                    f"columns[{i}]")
        check_fields(opened, column, _COLUMN, {}, prefix=f"columns[{i}].",
                     required=("name", "kind"))
        _check_codes(opened, values["codes"][:, i], column, i)
    for name, specs in _BLOCKS.items():
        if values.get(name) is not None:
            _known_keys(opened, values[name], _BLOCK_FIELDS[name], name)
            check_fields(opened, values[name], specs, dims, prefix=f"{name}.",
                         required=("kind",) if name == "media" else ())


def _check_output_axes(opened, values: dict, lead: str, axes: int,
                       others: dict[str, int] | None = None) -> None:
    """The arrays of a result agree with its ``outputs`` on whether there are several.

    The specs let each array have an outputs axis or not (``"n d"`` or
    ``"n d k"``); they must all choose alike, and as ``outputs`` says, or the
    result would index an axis that is not there.

    Parameters
    ----------
    opened : Envelope
        The dict, for the error.
    values : dict
        Its decoded, spec-checked fields.
    lead : str
        The array whose last axis is the outputs when there are several.
    axes : int
        Its number of axes with one output.
    others : dict of str to int, optional
        Further arrays, each with its number of axes relative to ``lead``'s
        (an absent or None one is skipped).
    """
    ndim = values[lead].ndim
    if ndim > axes and "outputs" not in values:  # left out: read as one output
        raise opened.missing("outputs")
    if (ndim > axes) != (values.get("outputs") is not None):
        raise opened.error("outputs", f"does not agree with {lead!r} (a name per entry of its "
                                      f"last axis when it has {axes + 1} axes, None when it "
                                      f"has {axes})")
    for name, relative in (others or {}).items():
        value = values.get(name)
        if value is not None and value.ndim != ndim + relative:
            raise opened.error(name, f"has {value.ndim} axes where {ndim + relative} agree "
                                     f"with {lead!r}")


def _check_codes(opened, codes, column: dict, i: int) -> None:
    """A categorical column's codes index its levels (NaN: missing)."""
    if column["kind"] != "categorical" or codes.dtype.kind not in "fiu":
        return
    levels = column.get("levels")
    n_levels = 0 if levels is None else len(levels)
    given = codes[~np.isnan(codes)] if codes.dtype.kind == "f" else codes
    if given.size and not (np.all(given == np.floor(given)) and given.min() >= 0
                           and given.max() < n_levels):
        raise opened.error("codes", f"holds in column {i} codes that are not positions in its "
                                    f"{n_levels} levels")


def _grid_axis(i: str) -> Spec:
    return array(_ANY, f"g{i}")


_EFFECT = {
    "method": text(), "output": text(), "centered": flag(), "extra": mapping(),
    "outputs": texts("k", optional=True), "output_labels": seq("k", optional=True),
}


def check_effect(opened, values: dict) -> None:
    """An Effect dict's fields: one feature or a pair, and every array on its grid."""
    pair = isinstance(values.get("feature"), tuple)
    axes = ("1", "2") if pair else ("",)
    grid = " ".join(f"g{i}" for i in axes)
    bins = " ".join(f"g{i}~" for i in axes)  # per grid point or per bin, axis by axis
    k = " k" if values.get("outputs") is not None else ""
    specs = {"feature": seq("two", kinds=(tuple,), item=text()) if pair else text(), **_EFFECT,
             "kind": (seq(kinds=(tuple,), item=text(choices=("numeric", "categorical")))
                      if pair else text(choices=("numeric", "categorical"))),
             "grid": _grid_axis(""),
             "values": array(_F, grid + k),
             "ice": array(_F, "r " + grid + k, optional=True),
             "ice_rows": array("iu", "r", optional=True, nonnegative=True),
             "ice_labels": array(_ANY, "r", optional=True),
             "std": array(_F, bins + k, optional=True),
             "counts": array(_NUM, bins, bins + k, optional=True, nonnegative=True),
             "local_effects": array(_F, "*", "* k", optional=True),
             "feature_digest": count(optional=True),
             "empty_cells": array("b", bins, optional=True),
             "band": mapping(optional=True), "bins": mapping(optional=True)}
    dims: dict = {"two": 2}
    if pair:
        grids = values.get("grid")
        if not isinstance(grids, tuple) or len(grids) != 2:
            raise opened.error("grid", "is not a pair of arrays, as a 2-D effect's is")
        for i, axis in zip(axes, grids):
            check_fields(opened, {"grid": axis}, {"grid": _grid_axis(i)}, dims)
        specs.pop("grid")
    check_fields(opened, values, specs, dims)
    _check_effect_parts(opened, values, dims, grid + k, bins + k)


def _known_keys(opened, value: dict, allowed, where: str) -> None:
    unknown = set(value) - set(allowed)
    if unknown:
        raise opened.error(where, f"has keys {sorted(map(str, unknown))[:5]} it does not have")


def _check_effect_parts(opened, values, dims, on_grid, on_bins):
    band = values.get("band")
    if band is not None:
        _known_keys(opened, band, ("lower", "upper", "level", "label"), "band")
        check_fields(opened, band, {"lower": array(_F, on_grid), "upper": array(_F, on_grid),
                                    "level": number(optional=True), "label": text(optional=True)},
                     dims, prefix="band.", required=("lower", "upper", "level", "label"))
    parts = values.get("bins")
    if parts is not None:
        _known_keys(opened, parts, ("counts", "std", "effects", "mean_derivative"), "bins")
        no_k = on_bins.removesuffix(" k")
        check_fields(opened, parts, {name: array(_NUM, on_bins, no_k, optional=True)
                                     for name in ("counts", "std", "effects",
                                                  "mean_derivative")}, dims, prefix="bins.",
                     required=("counts", "std"))
    feature_values = values.get("feature_values")
    if feature_values is not None:
        check_fields(opened, values, {"feature_values": either(array(_ANY, "*"))}, {})


def check_importance(opened, values: dict) -> None:
    check_fields(opened, values, {"feature_names": texts("d"),
                                  "importances": array(_F, "d s"),
                                  "baseline": number(), "scoring": text(), "n_rows": count()})


def check_width_sweep(opened, values: dict) -> None:
    check_fields(opened, values, {"widths": array(_F, "w"),
                                  "values": array(_F, "w d", "w d k"),
                                  "score": array(_F, "w", "w k"),
                                  "score_holdout": array(_F, "w", "w k"),
                                  "feature_names": texts("d"), "default_width": number(),
                                  "outputs": texts("k", optional=True),
                                  "output_labels": seq("k", optional=True),
                                  "output": text(optional=True)})
    _check_output_axes(opened, values, "values", 2, {"score": -1, "score_holdout": -1})


def check_attribution_summary(opened, values: dict) -> None:
    check_fields(opened, values, {"feature_names": texts("d"),
                                  "outputs": texts("k", optional=True),
                                  "importance": array(_F, "d", "d k"),
                                  "method": text(), "output": text(optional=True),
                                  "rows": array("iu", "s", nonnegative=True),
                                  "n_rows": count()})
    _check_output_axes(opened, values, "importance", 1)
    n_rows = int(values["n_rows"])
    if n_rows > np.iinfo(np.int64).max:  # the rows are read as int64 positions
        raise opened.error("n_rows", f"is {n_rows}, more rows than a table can hold")
    rows = values["rows"]
    if rows.size and int(rows.max()) >= n_rows:
        raise opened.error("rows", f"holds row {int(rows.max())} of a table of {n_rows} rows")


def check_summary_sample(opened, values: dict, sample) -> None:
    """An AttributionSummary's sample is its sampled rows of its features and outputs.

    ``sample`` is the Attributions read from the dict's ``"sample"`` entry;
    ``values`` the summary's checked fields.  A sample of other features,
    outputs or rows would draw plots that the summary's names mislabel.
    """
    outputs = values.get("outputs")
    expected = {"feature_names": list(values["feature_names"]),
                "outputs": None if outputs is None else list(outputs),
                "rows": len(values["rows"])}
    held = {"feature_names": list(sample.feature_names),
            "outputs": None if sample.outputs is None else list(sample.outputs),
            "rows": len(sample.values)}
    for name, want in expected.items():
        if held[name] != want:
            raise opened.error("sample", f"holds {name} {short(held[name], 60)} where the "
                                         f"summary has {short(want, 60)}")


def check_interaction_pairs(opened, values: dict) -> None:
    per_pair = ("p",)
    check_fields(opened, values, {"feature_1": texts("p"), "feature_2": texts("p"),
                                  "mean_abs": array(_F, *per_pair),
                                  "mean": array(_F, *per_pair),
                                  "std": array(_F, *per_pair, optional=True),
                                  "output": text(), "n_rows": count()})


def check_interactions(opened, values: dict) -> None:
    dims = check_fields(opened, values, {
        "features": seq("d", item=lambda v, dims: None),
        "overall": array(_F, "d"), "overall_unnormalized": array(_F, "d"),
        "overall_std": array(_F, "d", optional=True), "pairwise": mapping(),
        "sample_size": count(), "rows": array("iu", "s", optional=True, nonnegative=True),
        "method": text(), "output": text(), "n_groups": count(),
        "n_model_rows": count(optional=True), "notes": texts(),
        "blocks_from_trees": flag(optional=True)})
    if "n_model_rows" in values and values["n_model_rows"] is None:  # absent in old dicts only
        raise opened.error("n_model_rows", "is None, not a count of model rows")
    check_fields(opened, values["pairwise"], {
        "feature_1": seq("p"), "feature_2": seq("p"), "h2": array(_F, "p"),
        "h2_unnormalized": array(_F, "p"), "std": array(_F, "p", optional=True)},
        dims, prefix="pairwise.", required=_PAIRWISE)


#: The columns of an Interactions dict's pairwise table (as effects/interactions_result writes them).
_PAIRWISE = ("feature_1", "feature_2", "h2", "h2_unnormalized", "std")

#: The deepest split tree a Regions dict may hold (the search's ``max_depth`` is
#: bounded by the rows each region needs; no run grows anywhere near this).
MAX_REGION_DEPTH = 64

_NODE = {"region": text(), "conditions": seq(kinds=(list, tuple), item=text()),
         "depth": count(), "rows": count(), "split": mapping(optional=True),
         "left": mapping(optional=True), "right": mapping(optional=True),
         "candidate": mapping(optional=True), "reason": text(optional=True)}
_SPLIT = {"feature": text(), "threshold": number(optional=True),
          "levels": seq(optional=True, kinds=(list, tuple)),
          **{name: number() for name in ("heterogeneity_before", "heterogeneity_after",
                                          "gain", "p_value", "stability", "heldout_gain")},
          "rows_left": count(), "rows_right": count(),
          "flags": seq(item=text(), kinds=(list, tuple))}


def check_region_tree(opened, node, where: str = "trees") -> None:
    """A split tree, node by node (iteratively, so a deep one is refused, not a crash)."""
    stack = [(node, where, 0)]
    while stack:
        node, where, depth = stack.pop()
        if depth > MAX_REGION_DEPTH:
            raise opened.error(where, f"nests more than {MAX_REGION_DEPTH} regions deep")
        if not isinstance(node, dict):
            raise opened.error(where, f"is a {type(node).__name__}, not a region node")
        _known_keys(opened, node, _NODE, where)
        check_fields(opened, node, _NODE, {}, prefix=where + ".",
                     required=("region", "conditions", "depth", "rows"))
        for key in ("split", "candidate"):
            if node.get(key) is not None:
                split = node[key]
                if set(split) != set(_SPLIT):
                    raise opened.error(f"{where}.{key}", "does not hold a split's fields")
                check_fields(opened, split, _SPLIT, {}, prefix=f"{where}.{key}.")
                if (split["threshold"] is None) == (split["levels"] is None):
                    # a numeric split has a threshold, a categorical one its left levels
                    raise opened.error(f"{where}.{key}", "holds both a threshold and "
                                       "levels, or neither: a split has one of them")
        children = [node.get("left"), node.get("right")]
        if (node.get("split") is None) != (children == [None, None]) or None in children \
                and children != [None, None]:
            raise opened.error(where, "has a split without both sides, or sides without a split")
        for key, child in zip(("left", "right"), children):
            if child is not None:
                stack.append((child, f"{where}.{key}", depth + 1))



def check_shift(opened, values: dict) -> None:
    check_fields(opened, values, {
        "feature_names": texts("p"), "contribution": array(_F, "p"), "std": array(_F, "p"),
        "p_value": array(_F, "p"), "p_value_unadjusted": array(_F, "p"),
        "total_change": number(), "unexplained": number(), "unexplained_std": number(),
        "reference_value": number(), "current_value": number(), "metric": text(),
        "output": text(), "n_pairs": count(), "correction": text(choices=("holm",))})


def check_deletion_curves(opened, values: dict) -> None:
    """Both curves hold one point per count of players moved, ``k = 0 .. p``."""
    dims = check_fields(opened, values, {"players": texts("p"), "deletion": array(_F, "q"),
                                         "insertion": array(_F, "q"), "output": text()})
    if dims["q"] != dims["p"] + 1:
        raise opened.error("deletion", f"has {dims['q']} points where {dims['p']} players "
                                       f"take {dims['p'] + 1} (one per k = 0 .. p)")


def check_group_comparison(opened, values: dict) -> None:
    per_feature = {k: array(_F, "d") for k in ("mean_a", "mean_b", "difference", "ci_low",
                                               "ci_high", "std", "p_value",
                                               "p_value_unadjusted")}
    check_fields(opened, values, {"feature_names": texts("d"), **per_feature,
                                  "n_a": count(), "n_b": count(), "confidence": number(finite=True),
                                  "output": text()})
