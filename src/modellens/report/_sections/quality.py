"""The quality section: R^2 / MAE / RMSE for regression; accuracy, AUC, calibration and the
confusion matrix for classes; residual plots."""

from __future__ import annotations

import warnings

import numpy as np

from ..._predict import predict
from ..._validation import InvalidParameterError, ModellensWarning
from ...plot import subplots
from .._inputs import take_rows
from .._render import figure_from
from .page import Cell, FigureGroup, Section, Table, num_cell


def quality_section(inputs, found) -> Section:
    """R^2 / MAE / RMSE for regression; accuracy, AUC, calibration (and confusion) for classes."""
    from sklearn import metrics

    sec = Section("quality", "Model quality")
    if inputs.unscored:
        warnings.warn(inputs.unscored, ModellensWarning, stacklevel=2)
        sec.notes.append(inputs.unscored)
        sec.data.update(task=None, metrics={})
        return sec
    y = inputs.y
    pred = np.asarray(inputs.prediction)
    keep = ~_isnan(y)
    y, pred = y[keep], pred[keep]
    if inputs.holdout:
        sec.notes.append(f"On {keep.sum():,} held-out rows with a known target (as stated with "
                         "holdout): an estimate of the quality on new data.")
    else:
        sec.notes.append(f"On {keep.sum():,} rows with a known target. If these rows were used "
                         "for training, these numbers are optimistic; for held-out rows say so "
                         "with holdout=True (--holdout).")
    classes = inputs.classes  # a classifier's, or a multiclass booster's class indices
    output = inputs.output_name
    if inputs.probability and classes is not None:
        classes = np.asarray(classes)
        label = inputs.explained_class
        positive = np.asarray(y == label, dtype=int)
        vs = "" if len(classes) == 2 else " (this class against the rest)"
        values = {"accuracy": float(np.mean((pred >= 0.5) == positive)),
                  "brier": float(np.mean((pred - positive) ** 2))}
        values["auc"] = float(metrics.roc_auc_score(positive, pred)) \
            if 0 < positive.sum() < positive.size else float("nan")
        names = {"accuracy": f"accuracy of {output} >= 0.5{vs}", "auc": f"ROC AUC{vs}",
                 "brier": "Brier score"}
        if len(classes) > 2:
            _multiclass(sec, inputs, keep, y, classes, values, names)
        from sklearn.calibration import calibration_curve

        if 0 < positive.sum() < positive.size:
            frac, mean = calibration_curve(positive, pred, n_bins=10, strategy="quantile")
            sec.data["calibration"] = {"mean_predicted": mean, "fraction_positive": frac}
            fig, ax = subplots(figsize=(4.2, 3.6), plain=True)
            ax.plot([0, 1], [0, 1], ls=":", color="grey", label="perfectly calibrated")
            ax.plot(mean, frac, marker="o", label="model")
            ax.set_xlabel(f"mean {output} in a decile of predictions")
            ax.set_ylabel(f"share with y = {label}")
            ax.legend(frameon=False)
            ax.set_title("Calibration")
            sec.figure_groups.append(FigureGroup("", [figure_from(fig, "Calibration curve")]))
        sec.data["task"] = "classification"
    else:
        try:
            y = np.asarray(y, dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"y holds values that are not numbers (such as {y[0]!r}) but the model's output "
                f"{output!r} is a number: pass the numeric target, or for a classifier one with "
                "predict_proba.") from None
        resid = y - pred
        values = {"r2": float(metrics.r2_score(y, pred)), "mae": float(np.mean(np.abs(resid))),
                  "rmse": float(np.sqrt(np.mean(resid ** 2)))}
        names = {"r2": "R^2", "mae": "mean absolute error", "rmse": "root mean squared error"}
        fig, ax = subplots(figsize=(4.2, 3.6), plain=True)
        show = np.random.default_rng(inputs.random_state).permutation(y.size)[:2000]
        ax.scatter(y[show], pred[show], s=6, alpha=0.5)
        lo, hi = float(min(y.min(), pred.min())), float(max(y.max(), pred.max()))
        ax.plot([lo, hi], [lo, hi], ls=":", color="grey")
        ax.set_xlabel("target")
        ax.set_ylabel(output)
        ax.set_title("Predicted against observed")
        sec.figure_groups.append(FigureGroup("", [figure_from(fig, "Predicted against observed")]))
        group, sec.data["residuals"] = _residual_figures(inputs, found, keep, resid, pred, show)
        sec.figure_groups.append(group)
        sec.data["task"] = "regression"
    sec.data["metrics"] = values
    sec.tables.insert(0, Table("", ["metric", "value"],
                               [[Cell(names[k]), num_cell(v)] for k, v in values.items()]))
    return sec


#: Features whose residual plots the quality section draws (the most important ones).
RESIDUAL_FEATURES = 3


def _residual_figures(inputs, found, keep, resid, pred, show) -> tuple:
    """Residuals against the prediction and against the most important features.

    A pattern (a trend, a funnel, a curve against a feature) is what the
    model misses; the features are those the effects section ranks first
    (else the first columns).  ``show`` subsamples the drawn points.
    Returns the figures and what they show.
    """
    ds = inputs.dataset
    effects = found.get("effects") or {}
    names = [f for f in effects.get("order", []) if f in ds.feature_names] or \
        [ds.columns[j].name for j in inputs.features]
    names = names[:RESIDUAL_FEATURES]
    group = FigureGroup("Residuals (target minus prediction)")
    panels = [("prediction", pred, None)] + \
        [(name, ds.values[keep, ds.index_of(name)], ds.columns[ds.index_of(name)])
         for name in names]
    for name, x, col in panels:
        fig, ax = subplots(figsize=(4.2, 3.3), plain=True)
        xs = np.asarray(x, dtype=float)[show]
        if col is not None and col.is_categorical:
            jitter = np.random.default_rng(inputs.random_state).uniform(-0.2, 0.2, xs.size)
            ax.scatter(xs + jitter, resid[show], s=6, alpha=0.5)
            present = np.unique(xs[~np.isnan(xs)]).astype(int)[:20]
            ax.set_xticks(present, [str(col.levels[k]) for k in present], rotation=45,
                          ha="right")
        else:
            ax.scatter(xs, resid[show], s=6, alpha=0.5)
        ax.axhline(0, color="grey", ls=":")
        ax.set_xlabel(inputs.output_name if name == "prediction" else name)
        ax.set_ylabel("residual")
        ax.set_title(f"Residuals against {name}")
        group.figures.append(figure_from(fig, f"Residuals against {name}"))
    return group, {"prediction": pred, "residual": resid, "features": names}


def _multiclass(sec, inputs, keep, y, classes, values, names):
    """Overall accuracy and the confusion matrix of the most probable class of each row."""
    from sklearn.metrics import confusion_matrix

    # the labels: the class of the highest probability (ml.predict of every class, the
    # first on ties, as scikit-learn's predict), on the rows with a target
    if inputs.all_predictions is not None:
        probability, labels = inputs.all_predictions[keep], list(inputs.output_labels)
    else:  # one class was explained: every class in one more call
        every = predict(inputs.model, take_rows(inputs.X, np.flatnonzero(keep)),
                        progress=False)
        probability = every.to_numpy(dtype=np.float64)
        labels = every.attrs.get("explained_class")
        if labels is None or any(label is None for label in labels):
            labels = list(classes)  # a booster's columns: its class indices
    predicted = np.asarray(labels, dtype=np.asarray(classes).dtype)[
        np.argmax(probability, axis=1)]
    values["overall_accuracy"] = float(np.mean(predicted == y))
    names["overall_accuracy"] = (f"overall accuracy ({len(classes)} classes, most probable "
                                 "class)")
    if np.allclose(probability.sum(axis=1), 1.0, atol=1e-6):  # a distribution over classes
        from sklearn.metrics import log_loss

        order = [list(labels).index(c) for c in classes]
        values["log_loss"] = float(log_loss(y, probability[:, order], labels=list(classes)))
        names["log_loss"] = "log-loss (cross-entropy of the class probabilities)"
    matrix = confusion_matrix(y, predicted, labels=classes)
    sec.data["confusion"] = matrix
    if len(classes) <= 20:
        sec.tables.append(Table(
            "Confusion matrix (rows: true class, columns: predicted class)",
            ["true \\ predicted"] + [str(c) for c in classes],
            [[Cell(str(c))] + [num_cell(v) for v in row] for c, row in zip(classes, matrix)]))


def _isnan(y):
    try:
        return np.isnan(np.asarray(y, dtype=float))
    except (TypeError, ValueError):
        import pandas as pd

        return np.asarray(pd.isna(y))
