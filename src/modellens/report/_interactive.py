"""The interactive part of the report: the sections' results as one JSON document, and its scripts.

The explorer on top of the page redraws its charts in the browser with
Plotly (plotly.js, embedded from the ``plotly`` package: nothing is fetched
when the page is opened) from numbers the sections already computed: PD
and ALE curves, the ICE curves and Shapley values of the explained rows,
LIME weights, the interaction screen and the regions.  The document holds
results, never the data beyond the explained rows, so its size is bounded
by ``features x grid`` and the explained rows, whatever the number of rows
of the data.

Every number is rounded to :data:`DIGITS` significant digits (the charts'
resolution is far coarser) and every string goes into the page through the
JSON encoder with ``<``, ``>`` and ``&`` escaped, so a column name cannot
close the script that holds it; the script shows names as text only.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np

__all__ = ["MAX_ICE", "explorer_context", "explorer_payload", "explorer_scripts"]

#: Significant digits of the numbers in the page.
DIGITS = 5
#: ICE curves per feature in the page: those of the explained rows (which link to their
#: Shapley values), at most this many.
MAX_ICE = 200


def _round(values):
    """Nested lists of floats with ``DIGITS`` significant digits, None for NaN / inf."""
    a = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(np.isfinite(a) & (a != 0),
                         10.0 ** (DIGITS - 1 - np.floor(np.log10(np.abs(np.where(a == 0, 1, a))))),
                         1.0)
        rounded = np.round(a * scale) / scale
    if np.isfinite(a).all():
        return rounded.tolist()
    # NaN / inf as None in one pass over the array (not a walk of the nested lists)
    out = np.asarray(rounded).astype(object)
    out[~np.isfinite(a)] = None
    return out.tolist()


def _labels(grid) -> list:
    """Grid positions: numbers as numbers, category labels as text."""
    g = np.asarray(grid)
    if g.dtype.kind in "biuf":
        return _round(g)
    return [str(v) for v in g.tolist()]


def _per_output(effect, n_outputs):
    """Single-output views of ``effect``, one per output (the effect itself when it has one)."""
    if effect.outputs is None:
        return [effect] * n_outputs
    return [effect.for_output(k) for k in range(n_outputs)]


def _effect_block(pd_effect, ale_effect, n_outputs, ice_take):
    pds = _per_output(pd_effect, n_outputs)
    block: dict = {"kind": "categorical" if pd_effect.kind == "categorical" else "numeric",
             "pd": {"x": _labels(pd_effect.grid), "y": [_round(e.values) for e in pds]},
             "ice": None, "ale": None}
    if ice_take is not None and pd_effect.ice is not None and len(ice_take):
        block["ice"] = [_round(np.asarray(e.ice, dtype=float)[ice_take]) for e in pds]
    if ale_effect is not None and not ale_effect.is_2d:
        ales = _per_output(ale_effect, n_outputs)
        block["ale"] = {"x": _labels(ale_effect.grid), "y": [_round(e.values) for e in ales],
                        "lo": [None if e.band is None else _round(e.band.lower) for e in ales],
                        "hi": [None if e.band is None else _round(e.band.upper) for e in ales],
                        "band": None if ales[0].band is None else ales[0].band.label}
    return block


def _shown(x) -> str:
    """A data value as the page prints it."""
    if x is None:
        return "missing"
    if isinstance(x, (float, np.floating)):
        return "missing" if np.isnan(x) else f"{float(x):.5g}"
    return str(x)


def explorer_payload(sections: dict) -> dict | None:
    """The numbers the explorer draws, read from the sections' results (JSON-safe).

    Returns None when the report has neither effects nor Shapley values (nothing
    to explore).
    """
    effects = sections.get("effects")
    shap_sec = sections.get("shapley")
    if effects is None and shap_sec is None:
        return None
    attr: Any
    attr = shap_sec.data["attributions"] if shap_sec is not None else None
    payload: dict = {"features": [], "effects": {}, "rows": None, "pairs": None,
                     "regions": None}
    if effects is not None:
        first = next(iter(effects.data["pdp"].values()))
        outputs = list(first.outputs) if first.outputs is not None else [str(first.output)]
    else:
        outputs = [str(attr.output)]
    payload["outputs"] = [str(o) for o in outputs]
    # the output of the sections that explain one (Shapley, LIME, interaction, regions)
    one = str(attr.output) if attr is not None else str(outputs[0])
    payload["explained"] = outputs.index(one) if one in outputs else None
    explained_rows = list(shap_sec.data["explained_rows"]) if shap_sec is not None else []
    if effects is not None:
        _effects_part(payload, effects.data, explained_rows, len(outputs))
    if attr is not None and shap_sec is not None:
        payload["rows"] = _rows_part(shap_sec, sections.get("lime"), explained_rows,
                                     payload["outputs"])
    inter = sections.get("interaction")
    if inter is not None:
        payload["pairs"] = _pairs_part(inter, payload["outputs"])
    reg = sections.get("regions")
    if reg is not None and "regions" in reg.data:
        payload["regions"] = _regions_part(reg, payload["outputs"])
    payload["changed"] = _changed_part(sections.get("changed"))
    return payload


def _effects_part(payload, d, explained_rows, n_outputs) -> None:
    """The shown features' PD, ICE (of the explained rows in the sample) and ALE."""
    sample_rows = d.get("sample_rows")
    ice_rows, ice_take = [], None
    if sample_rows is not None and explained_rows:
        sample_rows = np.asarray(sample_rows)
        where = np.searchsorted(sample_rows, explained_rows)
        inside = [(r, int(w)) for r, w in zip(explained_rows, where)
                  if w < sample_rows.size and sample_rows[w] == r][:MAX_ICE]
        ice_rows = [r for r, _ in inside]
        ice_take = np.asarray([w for _, w in inside], dtype=int)
    payload["ice_rows"] = [int(r) for r in ice_rows]
    payload["features"] = [str(f) for f in d["shown"]]
    for name in d["shown"]:
        payload["effects"][str(name)] = dict(
            _effect_block(d["pdp"][name], d["ale"].get(name), n_outputs, ice_take),
            importance=_round([d["importance"][name]])[0])


def _rows_part(shap_sec, lime_sec, explained_rows, outputs) -> dict:
    """The explained rows: their values, Shapley values (of every class) and LIME fits."""
    attr = shap_sec.data["attributions"]
    rows: dict = {"positions": [int(r) for r in explained_rows],
                  "features": [str(f) for f in attr.feature_names],
                  "values": [[_shown(v) for v in row] for row in attr.data.tolist()],
                  "numbers": _round(attr.numeric_data()),
                  "kinds": list(attr.kinds),
                  "shap": _round(attr.values), "base": _round(attr.base_values),
                  "method": attr.method, "output": str(attr.output),
                  "drawn": [int(r) for r in shap_sec.data["rows"]]}
    rows["prediction"] = _round(np.asarray(attr.values).sum(axis=1)
                                + np.asarray(attr.base_values))
    every = _every(shap_sec, outputs)
    if every is not None:
        # Shapley values of every class: the class selector redraws them too
        parts = [every.for_output(k) for k in range(len(every.outputs))]
        rows["by_output"] = {
            "shap": [_round(a.values) for a in parts],
            "base": [_round(a.base_values) for a in parts],
            "prediction": [_round(np.asarray(a.values).sum(axis=1)
                                  + np.asarray(a.base_values)) for a in parts]}
    rows["scatter"] = _scatter(shap_sec, len(explained_rows), outputs)
    if lime_sec is not None and "attributions" in lime_sec.data:
        rows["lime"] = _lime_part(lime_sec, outputs)
    return rows


def _lime_part(lime_sec, outputs) -> dict:
    """The LIME surrogates of the explained rows (of every class when the section has them)."""
    la = lime_sec.data["attributions"]
    conditions = la.surrogate.conditions if la.surrogate is not None else None
    lime = {"positions": [int(r) for r in lime_sec.data["rows"]],
            "names": [[str(c) for c in conds] for conds in conditions] if conditions
            else [[str(f) for f in la.feature_names]] * len(la),
            "weights": _round(la.values), "intercept": _round(la.intercept),
            "score": _round(lime_sec.data["score"]), "output": str(la.output)}
    every_lime = _every(lime_sec, outputs)
    if every_lime is not None:
        # every class's surrogate, fit on the same samples
        parts = [every_lime.for_output(k) for k in range(len(every_lime.outputs))]
        lime["by_output"] = {
            "weights": [_round(a.values) for a in parts],
            "intercept": [_round(a.intercept) for a in parts],
            "score": [_round(a.score) for a in parts]}
    return lime


def _pairs_part(inter, outputs) -> dict:
    """The ranked pairs and each pair's heatmap, per output when the section has them."""
    every = inter.data.get("every_output")
    if every is not None and [str(o) for o in every["interactions"].outputs] != outputs:
        every = None
    if every is not None:  # each pair's heatmap and each output's ranking, per output
        by_output = every["ranked"]
        pair_effects = {p: _per_output(e, len(by_output))
                        for p, e in every["pair_effects"].items()}
    else:
        by_output = [inter.data["ranked"]]
        pair_effects = {p: [e] for p, e in (inter.data.get("pair_effects") or {
            inter.data["pair"]: inter.data["effect"]}).items()}
    heat = {}
    for (a, b), parts in pair_effects.items():
        heat[f"{a}\u0000{b}"] = {
            "x": _labels(parts[0].grid[0]), "y": _labels(parts[0].grid[1]),
            "z": [_round(np.asarray(e.values, dtype=float).T) for e in parts]}
    return {"ranked": [[[str(a), str(b), _round([h2u])[0], _round([h2])[0]]
                        for (a, b), h2u, h2 in ranked] for ranked in by_output],
            "chosen": [[str(v) for v in ranked[0][0]] for ranked in by_output],
            "effects": heat, "by_output": every is not None}


def _regions_part(reg, outputs) -> dict:
    """Each feature's region tree (nodes and children) and its regions' curves."""
    result = reg.data["regions"]
    n_out = len(result.outputs) if getattr(result, "outputs", None) and \
        [str(o) for o in result.outputs] == outputs else 1
    trees = {}
    for name in reg.data["features"]:
        tree = result[name]
        nodes: list[dict] = []
        ids: dict[int, int] = {}
        for node in tree.nodes():
            ids[id(node)] = len(nodes)
            nodes.append({"region": str(node.region), "depth": int(node.depth),
                          "rows": int(node.rows), "leaf": bool(node.is_leaf),
                          "split": None if node.split is None else node.split.sentence(),
                          "children": []})
        for node in tree.nodes():
            for child in (node.left, node.right):
                if child is not None:
                    nodes[ids[id(node)]]["children"].append(ids[id(child)])
        curves = {}
        if not tree.is_leaf:
            for region, e in result.effects(name).items():
                # every output's curve in the region (one for a model of one)
                parts = _per_output(e, n_out) if n_out > 1 else [e]
                curves[str(region)] = {"x": _labels(e.grid),
                                       "y": [_round(p.values) for p in parts]}
        trees[str(name)] = {"nodes": nodes, "curves": curves}
    return {"by_output": n_out > 1, "trees": trees}


def _changed_part(sec) -> dict | None:
    """The "What changed" section (lane compare, issue 44): each feature's contribution to
    the change of the mean prediction with its 95% interval and Holm p-value, largest first,
    and each most-moved feature's PD on the reference and the current rows."""
    if sec is None or sec.data.get("prediction") is None:
        return None
    s = sec.data["prediction"]
    names = [str(n) for n in s.feature_names]
    c, sd = np.asarray(s.contribution, dtype=float), np.asarray(s.std, dtype=float)
    order = np.argsort(-np.abs(c), kind="stable")
    half = 1.959963984540054 * sd
    curves = {str(f): {"kind": "categorical" if before.kind == "categorical" else "numeric",
                       "x": _labels(before.grid), "before": _round(before.values),
                       "after": _round(after.values)}
              for f, (before, after) in sec.data["before_after"].items()}
    return {"names": [names[j] for j in order], "contribution": _round(c[order]),
            "lo": _round((c - half)[order]), "hi": _round((c + half)[order]),
            "p": _round(np.asarray(s.p_value, dtype=float)[order]), "output": str(s.output),
            "total": _round([s.total_change])[0], "curves": curves,
            "features": [str(f) for f in sec.data["order"] if str(f) in curves]}


def _every(section, outputs):
    """A section's results of every output, when they are those of the page's class selector."""
    every = section.data.get("every_output")
    if every is None or [str(o) for o in (every.outputs or [])] != outputs:
        return None
    return every


def _scatter(shap_sec, n_explained, outputs):
    """The rows beyond the explained ones whose Shapley values the beeswarm and dependence
    charts show (a tree ensemble's), column by column, in their random order; None without.

    ``numbers`` holds each feature's values (level codes for a categorical one, which
    ``labels`` names), ``shap`` every output's values (one output where the section has
    one): ``shap[output][feature][row]``.
    """
    scatter = shap_sec.data.get("scatter")
    if scatter is None or len(scatter) <= n_explained:
        return None
    more = scatter[np.arange(n_explained, len(scatter))]
    several = bool(more.outputs) and [str(o) for o in more.outputs] == outputs
    parts = [more.for_output(k) for k in range(len(outputs))] if several else [
        more.for_output(str(shap_sec.data["attributions"].output)) if more.outputs else more]
    codes = more.numeric_data()
    values = more.data
    labels = {str(j): [_shown(v) for v in values[:, j].tolist()]
              for j, kind in enumerate(more.kinds) if kind == "categorical"}
    return {"positions": [int(r) for r in shap_sec.data["scatter_rows"][n_explained:]],
            "numbers": _round(codes.T), "labels": labels,
            "shap": [_round(np.asarray(p.values, dtype=float).T) for p in parts],
            "by_output": several}


def _script_text(text: str) -> str:
    """Script text checked to sit inside a <script> element: nothing in it can close it."""
    import re

    if re.search(r"</script|<!--", text, re.IGNORECASE):
        raise RuntimeError("an embedded script contains '</script' or '<!--'; it cannot be "
                           "put into the page as it is (reinstall the plotly package)")
    return text


def payload_json(payload: dict) -> str:
    """The payload as JSON that can sit in a <script> element (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def explorer_scripts() -> tuple[str, str]:
    """(plotly.js, the page's own wiring script), both to embed in the page."""
    from plotly.offline import get_plotlyjs

    ours = resources.files("modellens.report").joinpath("templates", "explore.js")
    return _script_text(get_plotlyjs()), _script_text(ours.read_text(encoding="utf-8"))


def explorer_context(sections: dict) -> dict | None:
    """What the page template needs for the explorer: the scripts and the data, as markup."""
    payload = explorer_payload(sections)
    if payload is None:
        return None
    from markupsafe import Markup

    plotly_js, ours = explorer_scripts()
    # each is checked (or escaped) not to close its <script> element: see above
    return {"plotly": Markup(plotly_js), "data": Markup(payload_json(payload)),
            "script": Markup(ours)}
