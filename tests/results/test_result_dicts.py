"""Every public result's to_dict / from_dict: one envelope, one set of errors.

The result types are found in ``modellens.__all__`` (every public class with
``to_dict``), so a new result type fails here until it has a case below, and
its ``from_dict`` must give the same errors as the others: those of
``modellens._serialize.open_envelope``.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import re

import numpy as np
import pandas as pd
import pytest

import modellens as ml

RESULT_TYPES = sorted(name for name in ml.__all__ if inspect.isclass(getattr(ml, name))
                      and hasattr(getattr(ml, name), "to_dict"))


def f(A):
    return A[:, 0] * A[:, 1] + 2 * A[:, 2]


def f2(A):
    return np.column_stack([f(A), A[:, 0] - A[:, 2]])


@functools.cache
def _results() -> dict:
    """Small results of each kind: one per layout of its dict."""
    X = np.random.default_rng(0).uniform(-1, 1, size=(80, 3))
    effects = ml.pdp(f, X, ["x0", ("x0", "x1")], grid=3)
    return {
        "Effect": [effects["x0"], ml.dale(f, X, ["x1"], bins=3)["x1"]],
        "Effects": [effects],
        "Attributions": [ml.shapley(f, X[:3], background=X[:10])],
        "InteractionPairs": [ml.shapley(f, X[:4], background=X[:10],
                                        interactions=True).interaction_pairs()],
        "Interactions": [ml.interactions(f, X[:20], sample=None, random_state=0),
                         ml.interactions(f2, X[:20], sample=None, random_state=0)],
        "Importance": [ml.importance(f, X, f(X), n_repeats=2, random_state=0)],
        "Regions": [ml.regions(lambda A: A[:, 0] * (A[:, 1] > 0), X, "x0",
                               n_resamples=20, random_state=0)],
        "WidthSweep": [ml.lime_width_sweep(f, X[:1], training_data=X, num_samples=60,
                                           random_state=0),
                       ml.lime_width_sweep(lambda A: np.column_stack([f(A), -f(A)]), X[:1],
                                           training_data=X, num_samples=60, random_state=0)],
        "AttributionSummary": _summaries(X),
        "Shift": [ml.shift(f, X[:40], X[40:] + [0.5, 0, 0], n_pairs=20, random_state=0),
                  ml.shift(f, X[:40], X[40:], f(X[:40]), f(X[40:]) + 1, n_pairs=20,
                           random_state=0)],
        "GroupComparison": [ml.shapley(f, X[:20], background=X[:10]).compare_groups(
            X[:20, 0] > 0, n_boot=20, random_state=0)],
        "DeletionCurves": [ml.deletion_curves(_good, ml.shapley(_good, "a good film"))],
    }


def _good(texts):
    return np.array([float("good" in t.split()) for t in texts])


def _summaries(X):
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c"]), npartitions=2)
    g = lambda D: D["a"].to_numpy() * D["b"].to_numpy()  # noqa: E731
    two = lambda D: np.column_stack([g(D), D["c"].to_numpy()])  # noqa: E731
    background = pd.DataFrame(X[:10], columns=["a", "b", "c"])
    return [ml.shapley(model, frame, background=background).summary(sample=4, random_state=0)
            for model in (g, two)]


def _dicts(name):
    """(result, its dict after a JSON round trip) for every case of the type ``name``."""
    cases = _results().get(name)
    assert cases, f"{name} has to_dict: add a case for it to _results()"
    return [(r, json.loads(json.dumps(r.to_dict(), allow_nan=False))) for r in cases]


def _expects(name):
    """The start every from_dict error for a dict of the wrong kind shares."""
    return (rf"^{name}\.from_dict\(\) expects a dict made by {name}\.to_dict\(\) "
            rf"\(its \"type\" is [^)]*'{name}'[^)]*\); got ")


def test_every_result_type_has_cases():
    assert {"Attributions", "Effect", "Effects", "Importance", "InteractionPairs",
            "Interactions", "Regions"} <= set(RESULT_TYPES)
    assert set(_results()) == set(RESULT_TYPES)


@pytest.mark.parametrize("name", RESULT_TYPES)
def test_round_trip_is_lossless_and_leaves_the_dict_alone(name):
    cls = getattr(ml, name)
    for result, d in _dicts(name):
        kept = copy.deepcopy(d)
        back = cls.from_dict(d)
        assert type(back) is type(result)
        assert d == kept  # the caller's dict is not changed
        assert json.dumps(back.to_dict(), allow_nan=False) == json.dumps(d, allow_nan=False)


@pytest.mark.parametrize("name", RESULT_TYPES)
def test_a_dict_of_another_type_is_refused_naming_both(name):
    cls = getattr(ml, name)
    others = [o for o in RESULT_TYPES if o != name and not issubclass(getattr(ml, o), cls)]
    for other in others:
        _, d = _dicts(other)[0]
        with pytest.raises(ml.InvalidParameterError,
                           match=_expects(name) + rf"a dict whose \"type\" is '{other}'\.$"):
            cls.from_dict(d)
    _, d = _dicts(name)[0]
    for tag in ("Nope", None, 3):
        with pytest.raises(ml.InvalidParameterError,
                           match=_expects(name) + re.escape(f"a dict whose \"type\" is {tag!r}.")):
            cls.from_dict({**d, "type": tag})


@pytest.mark.parametrize("name", RESULT_TYPES)
def test_what_is_not_a_modellens_dict_is_refused_saying_what_it_is(name):
    cls = getattr(ml, name)
    _, d = _dicts(name)[0]
    text = json.dumps(d)
    with pytest.raises(ml.InvalidParameterError,
                       match=_expects(name) + r"a str: read the JSON text with json\.loads\(\) first\.$"):
        cls.from_dict(text)
    with pytest.raises(ml.InvalidParameterError, match=_expects(name) + r"a list\.$"):
        cls.from_dict([d])
    untyped = {k: v for k, v in d.items() if k != "type"}
    for given in ({}, untyped):
        with pytest.raises(ml.InvalidParameterError,
                           match=_expects(name) + r"a dict without a \"type\" entry"):
            cls.from_dict(given)


@pytest.mark.parametrize("name", RESULT_TYPES)
def test_a_dict_missing_an_entry_is_refused_naming_a_missing_one(name):
    cls = getattr(ml, name)
    for _, d in _dicts(name):
        for key in [k for k in d if k not in ("type", "schema")]:  # (schema: below)
            cut = {k: v for k, v in d.items() if k != key}
            with pytest.raises(ml.InvalidParameterError,
                               match=rf"^this {d['type']} dict has no '(\w+)' entry, so it is "
                                     rf"not a whole dict made by {name}\.to_dict\(\)") as err:
                cls.from_dict(cut)
            named = re.search(r"no '(\w+)' entry", str(err.value)).group(1)
            assert named not in cut


def _with_entry(key):
    """(type name, dict) of every case whose dict has the entry ``key``."""
    found = [(name, d) for name in RESULT_TYPES for _, d in _dicts(name) if key in d]
    assert found, f"no result dict has a {key!r} entry"
    return found


def test_fields_that_are_not_a_dict_are_refused():
    for name, d in _with_entry("fields"):
        with pytest.raises(ml.InvalidParameterError,
                           match=rf"'fields' of this {d['type']} dict is a list where a dict "
                                 rf"of the fields is written, so it is not a dict made by "
                                 rf"{name}\.to_dict\(\)"):
            getattr(ml, name).from_dict({**d, "fields": [1, 2]})


def test_a_missing_field_is_refused_by_its_name_or_left_to_its_default():
    refused = 0
    for name, d in _with_entry("fields"):
        for key in d["fields"]:
            cut = {**d, "fields": {k: v for k, v in d["fields"].items() if k != key}}
            try:
                getattr(ml, name).from_dict(cut)
            except ml.InvalidParameterError as exc:
                assert re.match(rf"this {d['type']} dict has no '{key}' field, so it is not a "
                                rf"whole dict made by {name}\.to_dict\(\)", str(exc)), str(exc)
                refused += 1
    assert refused >= 30  # every type has fields it cannot do without


def test_a_layout_newer_than_this_version_is_refused_with_the_remedy():
    for name, d in _with_entry("schema"):
        cls, newest = getattr(ml, name), d["schema"]
        with pytest.raises(ml.InvalidParameterError,
                           match=rf"^this {name} dict has schema {newest + 1}; this version of "
                                 rf"modellens reads schema {newest}: upgrade modellens"):
            cls.from_dict({**d, "schema": newest + 1})
        for bad in (0, "2", 2.0, True, newest - 1, None):
            with pytest.raises(ml.InvalidParameterError,
                               match=rf"^this {name} dict has schema "
                                     rf"{re.escape(repr(bad) if isinstance(bad, str) else str(bad))}, which "
                                     rf"this version of modellens does not write"):
                cls.from_dict({**d, "schema": bad})


# ------------------------------------------------------------ fields the long fuzz run bent
def _mutant(name, case=0):
    """A fresh copy of the dict of case ``case`` of the type ``name``."""
    return copy.deepcopy(_dicts(name)[case][1])


def _refused(name, d, field):
    with pytest.raises(ml.InvalidParameterError, match=rf"field '{re.escape(field)}' of this "):
        getattr(ml, name).from_dict(d)


def test_deletion_curves_that_are_not_float_arrays_are_refused_by_name():
    # a bare ValueError (numpy converting "x" to float) or TypeError (a dict in the data) before
    d = _mutant("DeletionCurves")
    d["fields"]["deletion"] = ["x", "y", "z", "w"]
    _refused("DeletionCurves", d, "deletion")
    d = _mutant("DeletionCurves")
    d["fields"]["insertion"]["data"][0] = {"a": 1}
    _refused("DeletionCurves", d, "insertion")
    d = _mutant("DeletionCurves")
    d["fields"]["insertion"] = "<f8"
    _refused("DeletionCurves", d, "insertion")


def test_deletion_curves_of_the_wrong_length_or_kind_are_refused_by_name():
    # one generic message before, naming no field
    d = _mutant("DeletionCurves")
    d["fields"]["players"].append("extra")  # p + 2 players for p + 1 points
    _refused("DeletionCurves", d, "deletion")
    d = _mutant("DeletionCurves")
    d["fields"]["players"][0] = 3
    _refused("DeletionCurves", d, "players")
    d = _mutant("DeletionCurves")
    d["fields"]["output"] = ["score"]
    _refused("DeletionCurves", d, "output")


def test_a_summary_whose_importance_disagrees_with_its_outputs_is_refused():
    # pandas' ValueError before: a (d, 1) importance of one output, a (d,) one of several
    d = _mutant("AttributionSummary")
    importance = d["fields"]["importance"]
    importance["shape"] = importance["shape"] + [1]
    _refused("AttributionSummary", d, "outputs")
    d = _mutant("AttributionSummary", 1)
    importance = d["fields"]["importance"]
    importance["shape"], importance["data"] = [3], importance["data"][:3]
    _refused("AttributionSummary", d, "outputs")


def test_a_summary_whose_sample_is_of_other_features_or_rows_is_refused():
    # rebuilt before: its plots drew the sample under the summary's names
    d = _mutant("AttributionSummary")
    d["sample"]["fields"]["feature_names"] = ["x", "y", "z"]
    _refused("AttributionSummary", d, "sample")
    d = _mutant("AttributionSummary")
    d["fields"]["rows"]["data"].pop()
    d["fields"]["rows"]["shape"] = [len(d["fields"]["rows"]["data"])]
    _refused("AttributionSummary", d, "sample")


def test_a_summary_of_more_rows_than_int64_counts_is_refused():
    # its rows, read as int64 positions, wrapped to negative ones before
    d = _mutant("AttributionSummary")
    d["fields"]["n_rows"] = 10 ** 30
    rows = d["fields"]["rows"]
    rows.update(dtype="<u8", data=[2 ** 63 + i for i in range(len(rows["data"]))])
    _refused("AttributionSummary", d, "n_rows")


def test_a_width_sweep_whose_outputs_disagree_with_its_arrays_is_refused():
    # rebuilt before, then to_frame failed in pandas
    d = _mutant("WidthSweep", 1)
    d["fields"]["outputs"] = None
    _refused("WidthSweep", d, "outputs")
    d = _mutant("WidthSweep")
    d["fields"]["outputs"], d["fields"]["output_labels"] = ["a"], [0]
    _refused("WidthSweep", d, "outputs")
    d = _mutant("WidthSweep", 1)
    d["fields"]["score"] = d["fields"]["widths"]  # one output's R^2 beside several outputs
    _refused("WidthSweep", d, "score")
    d = _mutant("WidthSweep", 1)
    del d["fields"]["outputs"]
    with pytest.raises(ml.InvalidParameterError, match="has no 'outputs' field"):
        ml.WidthSweep.from_dict(d)
