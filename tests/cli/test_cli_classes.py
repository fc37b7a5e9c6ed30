"""A multiclass model on the command line: every class without --class."""

import numpy as np


def test_cli_multiclass_model_without_class_draws_every_class(tmp_path, capsys):
    # no --class: the page draws every class's effects and names the one its Shapley and
    # LIME sections explain
    import pandas as pd
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    from modellens.cli import main

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(90, 2)), columns=["a", "b"])
    y = rng.choice(["red", "green", "blue"], 90)
    model = LogisticRegression().fit(X, y)
    sio.dump(model, tmp_path / "m.skops")
    X.assign(y=y).to_csv(tmp_path / "d.csv", index=False)
    code = main(["report", "--data", str(tmp_path / "d.csv"), "--model",
                 str(tmp_path / "m.skops"), "--target", "y", "--out", str(tmp_path / "r.html"),
                 "--explain", "4", "--grid", "5"])
    err = capsys.readouterr().err
    assert code == 0, err
    page = (tmp_path / "r.html").read_text(encoding="utf-8").replace("&#x27;", "'")
    assert all(f"P(y = {c})" in page for c in ("red", "green", "blue"))
    chosen = model.classes_[np.argmax(model.predict_proba(X).mean(axis=0))]
    assert f"Shapley values (P(y = {chosen}))" in page
