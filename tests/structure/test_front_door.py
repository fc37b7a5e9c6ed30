"""Every public function that takes a model opens its request through the one front door.

``engine.open_request`` validates the options, encodes ``X`` and any reference
table with one schema, wraps the model and routes in memory / out of core /
partition by partition.  These tests call every public function (and every
method variant that once had a door of its own) and watch, with a profiler
hook, whether ``open_request`` ran: a function that encodes its data or
resolves its options by itself fails here.
"""

import inspect
import sys
import threading
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor

import modellens as ml
from modellens.engine import _front

#: Public functions that take a model but build on other public functions (which
#: open the requests) and never read the model themselves.
BUILT_ON_THE_OTHERS = {"report": "builds its sections from the public functions' results"}


def f(A):
    return A[:, 0] * A[:, 1] + A[:, 2]


def text_score(texts):
    return np.array([t.count("good") - t.count("bad") for t in texts], dtype=float)


def image_score(images):
    return np.asarray(images, dtype=float).reshape(len(images), -1).mean(axis=1)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    tree = GradientBoostingRegressor(n_estimators=3, max_depth=2, random_state=0).fit(X, f(X))
    return X, tree


@contextmanager
def doors_opened():
    """The number of calls of ``open_request``, in any thread, while the block runs."""
    code, seen = _front.open_request.__code__, []

    def watch(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen.append(frame.f_code)

    before, before_threads = sys.getprofile(), threading.getprofile()
    sys.setprofile(watch)
    threading.setprofile(watch)
    try:
        yield seen
    finally:
        sys.setprofile(before)
        threading.setprofile(before_threads)


def _calls(X, tree):
    image = np.random.default_rng(1).random((8, 8, 3))
    quiet = dict(progress=False)
    return {
        "pdp": [lambda: ml.pdp(f, X, [0], grid=4, **quiet),
                lambda: ml.pdp(tree, X, [0], method="tree")],
        "mplot": [lambda: ml.mplot(f, X, [0], **quiet)],
        "ale": [lambda: ml.ale(f, X, [0], **quiet)],
        "dale": [lambda: ml.dale(f, X, [0], **quiet)],
        "shapley": [lambda: ml.shapley(f, X[:2], background=X[:5], **quiet),
                    lambda: ml.shapley(f, X[:2], background=X[:5], algorithm="kernel",
                                       n_samples=8, random_state=0, **quiet),
                    lambda: ml.shapley(tree, X[:2], algorithm="tree"),
                    lambda: ml.shapley(text_score, "good or bad", **quiet)],
        "lime": [lambda: ml.lime(f, X[:2], training_data=X, num_samples=50, random_state=0,
                                 **quiet)],
        "lime_text": [lambda: ml.lime_text(text_score, "good or bad", num_samples=20,
                                           random_state=0, **quiet)],
        "deletion_curves": [lambda: ml.deletion_curves(
            text_score, ml.shapley(text_score, "good or bad"), **quiet)],
        "lime_image": [lambda: ml.lime_image(image_score, image, segmentation=np.arange(64)
                                             .reshape(8, 8) // 16, num_samples=20,
                                             random_state=0, **quiet)],
        "lime_width_sweep": [lambda: ml.lime_width_sweep(f, X[:1], training_data=X,
                                                         num_samples=50, random_state=0)],
        "interactions": [lambda: ml.interactions(f, X, sample=10, random_state=0, **quiet),
                         lambda: ml.interactions(tree, X, method="tree", sample=10,
                                                 random_state=0)],
        "predict": [lambda: ml.predict(f, X)],
        "importance": [lambda: ml.importance(f, X, f(np.asarray(X, dtype=float)), n_repeats=2,
                                             random_state=0, **quiet)],
        "regions": [lambda: ml.regions(f, X, [0], n_resamples=5, random_state=0, **quiet),
                    lambda: ml.regions(f, X, [0], effect="pdp", n_resamples=5,
                                       random_state=0, **quiet)],
        "shift": [lambda: ml.shift(f, X[:30], X[30:], n_pairs=5, random_state=0, **quiet)],
    }


def _takes_a_model(obj) -> bool:
    if not inspect.isfunction(obj):
        return False
    first = next(iter(inspect.signature(obj).parameters), None)
    return first in ("model", "predict_fn")


def test_every_public_function_of_a_model_is_called_here(data):
    public = {name for name in ml.__all__ if _takes_a_model(getattr(ml, name))}
    assert public - set(BUILT_ON_THE_OTHERS) == set(_calls(*data)), \
        "a public function that takes a model: add its calls to _calls"


@pytest.mark.parametrize("name, k", [(name, k) for name, calls in _calls(np.zeros((1, 3)), None)
                                     .items() for k in range(len(calls))])
def test_every_public_call_opens_its_request_through_the_front_door(data, name, k):
    call = _calls(*data)[name][k]
    with doors_opened() as seen:
        call()
    assert seen, f"ml.{name} (call {k}) did not open its request with engine.open_request"


def test_dask_data_pass_the_front_door_too(data):
    dd = pytest.importorskip("dask.dataframe")
    X, tree = data
    frame = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c"]), npartitions=2)
    g = lambda D: D["a"].to_numpy() * D["b"].to_numpy()  # noqa: E731
    for call in (lambda: ml.pdp(g, frame, ["a"], grid=3, progress=False),
                 lambda: ml.shapley(g, frame, background=frame.head(5), progress=False),
                 lambda: ml.lime(g, frame, training_data=frame.head(20), num_samples=30,
                                 random_state=0, progress=False),
                 lambda: ml.predict(g, frame)):
        with doors_opened() as seen:
            call()
        assert seen


def test_background_and_training_data_share_the_schema_of_x():
    """The door encodes X and the reference table together: a level only the reference has
    gets a code, and both reach the model with X's dtypes."""
    X = pd.DataFrame({"a": [1.0, 2.0], "c": ["u", "u"]})
    background = pd.DataFrame({"a": [0.0, 3.0, 4.0], "c": ["v", "u", "w"]})
    request = _front.open_request(lambda D: D["a"].to_numpy(), X, reference=background)
    assert request.n_explained == 2 and request.explained.shape == (2, 2)
    levels = list(request.dataset.columns[1].levels)
    assert set(levels) == {"u", "v", "w"}
    codes = request.reference[:, 1].astype(int)
    assert [levels[c] for c in codes] == ["v", "u", "w"]
    with pytest.raises(ml.InvalidParameterError, match="training_data columns"):
        _front.open_request(lambda D: D, X, reference=background.rename(columns={"a": "z"}),
                            reference_name="training_data")
