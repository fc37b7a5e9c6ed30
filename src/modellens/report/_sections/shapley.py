"""The Shapley section: importance bar, beeswarm, dependence charts, and each drawn row's
waterfall beside its ceteris-paribus curves."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..._validation import NotATreeModelError
from ...attribution import shapley
from ...effects.pdp import pdp
from ...effects.result import Effects
from ...plot import subplots
from .._inputs import take_rows
from .._render import figure_from
from .capture import capture_warnings
from .page import FigureGroup, Section, chosen_rows, explained_output, say_every, titled


def shapley_section(inputs, found) -> Section:
    """Shapley importance bar, beeswarm and waterfalls of chosen rows."""
    sec = Section("shapley", titled("Shapley values", inputs))
    say_every(sec, inputs, "Shapley values")
    several = bool(inputs.outputs)
    # a model of several outputs: every output from the same model rows (or tree walk); the
    # section draws the explained one, the numbers of target=it
    common = dict(background=inputs.X_background, random_state=inputs.random_state,
                  progress=inputs.progress, target=None if several else inputs.target)
    scatter = None
    options = shapley_options(inputs)
    with capture_warnings(sec):
        if options["algorithm"] != "exact":
            scatter = _tree_shapley(sec, inputs, common)
        if scatter is not None:
            # the explained rows lead the scatter rows: their values, row for row
            explained = scatter[np.arange(len(inputs.explain_index))]
        else:
            explained = shapley(inputs.model, inputs.X_explain, **options, **common)
    every = explained if several else None
    attr = explained.for_output(inputs.output_position) if several else explained
    # the bar, beeswarm and dependence charts: every row TreeSHAP explained
    cloud = attr if scatter is None else (
        scatter.for_output(inputs.output_position) if several else scatter)
    rows = chosen_rows(inputs)
    n_rows, n_named = len(attr), len(rows)
    sec.notes.append(
        f"{_method_name(attr.method)} Shapley values of {n_rows:,} rows ({n_named} drawn as "
        f"waterfalls below and {n_rows - n_named:,} sampled) against a background of "
        f"{inputs.background_index.size:,} rows (interventional: absent features take the "
        "background's values). Each row's values add up to its prediction minus the mean "
        f"prediction over the background, on the scale of {attr.output}."
        + ("" if len(cloud) == n_rows else
           f" TreeSHAP costs little per row, so the importance bar, the beeswarm and the "
           f"dependence charts show {len(cloud):,} rows: these and {len(cloud) - n_rows:,} more "
           "of the sampled rows."))
    importance = dict(zip(cloud.feature_names, cloud.mean_abs()))
    effects = found.get("effects")
    if effects:
        pd_top = [f for f in effects["order"] if f in importance][:3]
        shap_top = sorted(importance, key=lambda f: -importance[f])[:3]
        if pd_top != shap_top:
            sec.notes.append(
                f"The rankings differ (PD: {', '.join(pd_top)}; Shapley: "
                f"{', '.join(shap_top)}): PD importance is the spread of the average curve, "
                "mean |Shapley value| the size of each row's share, which also counts "
                "interactions and effects that cancel out on average.")
    sec.figure_groups.append(FigureGroup("Importance and distribution", [
        figure_from(cloud.plot.bar().figure, "mean |Shapley value| per feature"),
        figure_from(cloud.plot.beeswarm(random_state=inputs.random_state).figure,
                    "Shapley values of every explained row")]))
    # a column of at most one value has no curve to draw
    ds = inputs.dataset
    top = [f for f in sorted(importance, key=lambda f: -importance[f])
           if ds.n_unique(ds.index_of(f)) >= 2][:DEPENDENCE_FEATURES]
    sec.figure_groups.append(FigureGroup("Dependence of the most important features", [
        figure_from(cloud.plot.dependence(name, random_state=inputs.random_state).figure,
                    f"Shapley values of {name} against its value") for name in top]))
    positions = [inputs.explain_index[i] for i, _ in rows]
    # ceteris paribus: each drawn row's own ICE curves, the other features held at its values
    profiles = _shared_profiles(inputs, effects, positions, top)
    if profiles is None:
        with capture_warnings(sec):
            profiles = pdp(inputs.model, take_rows(inputs.X, positions), top, ice=True,
                           grid={name: inputs.grids.get(inputs.dataset.index_of(name),
                                                        inputs.grid) for name in top},
                           progress=inputs.progress, target=inputs.target)
    group = FigureGroup("Rows: waterfall, and the row's own curves (ceteris paribus)")
    for k, (i, why) in enumerate(rows):
        group.figures.append(_waterfall(attr, i, inputs.explain_index[i], why))
        group.figures.append(_ceteris_paribus(profiles, k, positions[k], why))
    sec.figure_groups.append(group)
    sec.data.update(attributions=attr, rows=positions,
                    explained_rows=list(inputs.explain_index),
                    background_rows=inputs.background_index, importance=importance,
                    dependence_features=top, ceteris_paribus=profiles, every_output=every,
                    scatter=scatter,
                    scatter_rows=list(inputs.scatter_index) if scatter is not None else None)
    return sec


def _tree_shapley(sec, inputs, common):
    """TreeSHAP of the scatter rows (the explained ones first), of every output of a model of
    several; None, with the reason on the page, when it does not apply or explains another
    scale than the page's.

    One explained row is asked first: a model whose trees answer on another scale (a
    boosted classifier's log-odds) costs its TreeSHAP only.  A row's values are its own,
    whichever rows are asked with it, so that row's values lead the others' (it is not
    explained twice).
    """
    from ... import ModelError  # the face's name: the report imports nothing of models/

    try:
        probe = shapley(inputs.model, take_rows(inputs.X, inputs.explain_index[:1]),
                        algorithm="tree", **common)
    except NotATreeModelError as exc:
        if exc.reason is not None:  # trees it cannot read: say why
            sec.notes.append(f"TreeSHAP does not apply to this model ({exc.reason}); the "
                             "values below come from the model-agnostic algorithm named next.")
        return None
    except ModelError as exc:
        sec.notes.append(f"TreeSHAP does not apply to this model ({exc}); the values below "
                         "come from the model-agnostic algorithm named next.")
        return None
    given = [str(o) for o in probe.outputs] if probe.outputs else [str(probe.output)]
    if given != (list(inputs.outputs) or [inputs.output_name]):
        # the trees add up to another scale (a boosted classifier's log-odds): one page,
        # one scale
        sec.notes.append(f"TreeSHAP would explain the trees' {probe.output}; the values "
                         f"below explain {inputs.output_name}, like every section of this "
                         "page.")
        return None
    # each row's values are its own: the explained rows' and the others, in one call (the
    # scatter rows start with the explained ones, the probe's row first)
    rows = inputs.scatter_index if len(inputs.scatter_index) > len(inputs.explain_index) \
        else inputs.explain_index
    if len(rows) == 1:
        return probe
    rest = shapley(inputs.model, take_rows(inputs.X, rows[1:]), algorithm="tree", **common)
    if any(getattr(rest, block) is not None for block in ("sampling", "surrogate", "media")):
        # (TreeSHAP has no per-row block to join; should one come, all rows in one call)
        return shapley(inputs.model, take_rows(inputs.X, rows), algorithm="tree", **common)
    return _join_rows(probe, rest)


#: The fields of an Attributions that hold one entry per row (TreeSHAP's results).
_ROW_FIELDS = ("values", "base_values", "codes", "prediction", "interactions", "row_labels")


def _join_rows(first, rest):
    """``first``'s rows, then ``rest``'s, as one TreeSHAP result of the same call on all of
    them (the other fields are the same in both).

    Each call's route checked the trees on that call's own rows (the probe's one, then the
    others), so the joined result's model rows are both checks' rows (the report needs the
    probe's answer, the scale the trees explain, before it asks the others).
    """
    joined: dict = {}
    for name in _ROW_FIELDS:
        a, b = getattr(first, name), getattr(rest, name)
        joined[name] = None if a is None else np.concatenate([np.asarray(a), np.asarray(b)])
    # (the model rows the trees' checks asked: those of both calls' routes)
    counted = [r.diagnostics.get("n_model_rows") for r in (first, rest)]
    if all(isinstance(c, (int, np.integer)) for c in counted):
        joined["diagnostics"] = {**rest.diagnostics,
                                 "n_model_rows": sum(int(c) for c in counted if c is not None)}
    return replace(rest, **joined)


#: Features with a Shapley dependence plot and a ceteris-paribus curve per drawn row.
DEPENDENCE_FEATURES = 3


def _shared_profiles(inputs, effects, positions, top):
    """The drawn rows' ICE curves of the ``top`` features, read from the effects section.

    Its partial dependence already evaluated the model at every sampled row
    and grid point; when the sample holds the drawn rows and the features
    have their grids there, those rows of its ICE curves are the ceteris
    paribus profiles, and no model row is evaluated twice.  None otherwise
    (the section then runs PD on the drawn rows).
    """
    if not effects:
        return None
    at = {int(p): k for k, p in enumerate(inputs.sample_index)}
    if any(int(p) not in at for p in positions):
        return None
    take = [at[int(p)] for p in positions]
    shared = {}
    for name in top:
        effect = effects["pdp"].get(name)
        if effect is None or effect.ice is None or \
                inputs.dataset.index_of(name) not in inputs.grids:
            return None
        one = explained_output(effect, inputs)
        ice = np.asarray(one.ice)[take]
        values = one.feature_values
        if values is not None and len(values) == len(at):
            values = np.asarray(values)[take]
        shared[name] = replace(one, values=ice.mean(axis=0), ice=ice, feature_values=values,
                               ice_rows=None)
    return Effects(list(shared.values()))


def _ceteris_paribus(profiles, k, position, why):
    """Row ``k``'s ICE curves of the top features: the prediction as one feature moves."""
    fig, axes = subplots(1, len(profiles), figsize=(2.6 * len(profiles), 2.8), plain=True,
                         squeeze=False, sharey=True)
    for ax, effect in zip(axes[0], profiles.values()):
        curve = np.asarray(effect.ice, dtype=float)[k]
        grid = np.asarray(effect.grid)
        if effect.kind == "categorical":
            ax.plot(np.arange(grid.size), curve, "o")
            ax.set_xticks(np.arange(grid.size), [str(g) for g in grid], rotation=45,
                          ha="right", fontsize=7)
        else:
            ax.plot(grid.astype(float), curve)
        ax.set_xlabel(str(effect.feature))
    axes[0][0].set_ylabel(str(next(iter(profiles.values())).output))
    fig.suptitle(f"row {position}: its prediction as one feature moves", fontsize=9)
    return figure_from(fig, f"Ceteris paribus of row {position}: {why}")


def _waterfall(attr, i, position, why):
    """Row ``i`` of ``attr`` as a waterfall titled with its position in the user's data."""
    ax = attr.plot.waterfall(i)
    # "row i: f(x) = ..." numbers the explained rows; the page names the user's row
    ax.set_title(f"row {position}: {ax.get_title().partition(': ')[2]}")
    return figure_from(ax.figure, f"{attr.method} waterfall: {why}", caption=why)


def shapley_options(inputs) -> dict:
    """Exact Shapley values when they fit the budget of model rows, else antithetic sampling.

    Exact enumeration costs ``rows * 2**d * background`` model rows and
    permutation sampling about ``rows * n_permutations * d * background``; the
    number of orders is chosen to fill ``inputs.shapley_budget`` (at least 10,
    so that every value has a standard error).  Exact values within the budget
    are also taken for tree models: they equal interventional TreeSHAP and
    need no compiled kernels.
    """
    from ...attribution.shapley import MAX_EXACT_FEATURES

    d = inputs.dataset.n_features
    per_row = len(inputs.explain_index) * inputs.background_index.size
    if d <= MAX_EXACT_FEATURES and per_row * 2 ** d <= inputs.shapley_budget:
        return {"algorithm": "exact"}
    n_perm = int(np.clip(inputs.shapley_budget // max(per_row * d, 1), 10, 100))
    return {"algorithm": "permutation", "n_permutations": n_perm + n_perm % 2}


def _method_name(method: str) -> str:
    return {"shapley-exact": "Exact", "shapley-permutation": "Permutation-sampled",
            "shapley-kernel": "KernelSHAP", "shapley-tree": "TreeSHAP"}.get(method, method)
