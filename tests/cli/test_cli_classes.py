"""The command line names the class option when a multiclass model needs one."""

import numpy as np


def test_cli_multiclass_model_without_class_names_the_option(tmp_path, capsys):
    # the CLI user cannot pass target=: the error names --class and the labels to choose from
    import pandas as pd
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    from modellens.cli import main

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(90, 2)), columns=["a", "b"])
    y = rng.choice(["red", "green", "blue"], 90)
    sio.dump(LogisticRegression().fit(X, y), tmp_path / "m.skops")
    X.assign(y=y).to_csv(tmp_path / "d.csv", index=False)
    code = main(["report", "--data", str(tmp_path / "d.csv"), "--model",
                 str(tmp_path / "m.skops"), "--target", "y", "--out", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "--class" in err and "target=" not in err and "'green'" in err
