"""Effect tables and bands: ICE, bands and cell statistics in to_frame; huge outputs give a NaN band with a warning."""

import warnings

import numpy as np

import modellens as ml
from modellens import ModellensWarning


def test_to_frame_holds_ice_bands_and_cell_statistics():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 3))
    f = lambda A: A[:, 0] * A[:, 1] + A[:, 2]  # noqa: E731
    pd_ = ml.pdp(f, X, ["x0", ("x0", "x1")], grid=4, ice=True, sample=10, random_state=0)
    table = pd_["x0"].to_frame(ice=True)
    curves = table[table["ice_row"].notna()]
    assert len(curves) == 10 * 4 and set(curves["ice_row"]) == set(pd_["x0"].ice_rows)
    row = pd_["x0"].ice_rows[3]
    np.testing.assert_allclose(curves[curves["ice_row"] == row]["value"], pd_["x0"].ice[3])
    assert table["ice_row"].isna().sum() == 4
    two = pd_[("x0", "x1")].to_frame(ice=True)
    assert len(two) == 16 + 10 * 16
    assert len(ml.Effects.to_frame(pd_, ice=True)) == len(table) + len(two)
    ale = ml.ale(f, X, ["x0", ("x0", "x1")], bins=3)
    one = ale["x0"].to_frame()
    np.testing.assert_array_equal(one["lower"], ale["x0"].band.lower)
    np.testing.assert_array_equal(one["upper"], ale["x0"].band.upper)
    pair = ale[("x0", "x1")]
    cells = pair.to_frame()
    g1, g2 = len(pair.grid[0]), len(pair.grid[1])
    counts = cells["count"].to_numpy().reshape(g1, g2)
    assert np.isnan(counts[0]).all() and np.isnan(counts[:, 0]).all()
    np.testing.assert_array_equal(counts[1:, 1:], pair.bins.counts)
    np.testing.assert_array_equal(cells["empty_cell"].to_numpy().reshape(g1, g2)[1:, 1:],
                                  pair.empty_cells)


def test_huge_outputs_give_a_nan_band_with_a_warning_not_numpy_noise():
    X = np.random.default_rng(8).normal(size=(300, 2))
    f = lambda A: 1e300 * A[:, 0] + A[:, 1]  # noqa: E731
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eff = ml.ale(f, X, bins=5)
    kinds = {type(w.message) for w in caught}
    assert kinds == {ModellensWarning}, [str(w.message) for w in caught]
    assert np.isnan(eff["x0"].band.lower).all() and np.isfinite(eff["x0"].values).all()
    assert np.isfinite(eff["x0"].std).all()
    assert np.isfinite(eff["x1"].band.lower).all()  # the other feature is unaffected
