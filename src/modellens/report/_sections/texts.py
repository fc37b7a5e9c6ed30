"""The sections of a report of texts: the data, the texts highlighted by attribution (every
class selectable), the words that matter most, deletion / insertion curves, word pairs.

Each is a function of the :class:`~modellens.report._text_report.TextInputs`,
which hold every explained text's Shapley values (``ml.shapley`` of the text,
every class from the same forward passes).  Every string from the texts or the
model (words, class labels) reaches the page as text: through the template's
autoescaping in tables, and through :func:`markupsafe.escape` (``Markup.format``)
in the highlighted texts, whose words ``attr.plot.text_html()`` escapes itself.
"""

from __future__ import annotations

import numpy as np
from markupsafe import Markup

from ...attribution import deletion_curves
from ...plot import subplots
from .._render import figure_from
from .capture import capture_warnings
from .page import Cell, FigureGroup, Section, Table, fmt, num_cell, plural

__all__ = ["TEXT_SECTIONS", "pooled_words", "pooled_pairs"]

#: Rows of the words' and the pairs' tables (and bars of the words' chart).
TOP_WORDS = 20
TOP_PAIRS = 10


def _one(inputs, attr, c=None):
    """One class's view of a text's attributions (the pooled class by default)."""
    if attr.outputs is None:
        return attr
    return attr.for_output(inputs.output_position if c is None else c)


def _class_name(inputs) -> str:
    return inputs.outputs[inputs.output_position]


def _predicted(attr) -> int:
    return int(np.argmax(np.asarray(attr.prediction, dtype=float)[0])) \
        if attr.outputs is not None else 0


def data_section(inputs) -> Section:
    """How many texts, how long, what the model's classes are."""
    sec = Section("data", "Texts and model")
    words = np.asarray(inputs.words)
    players = np.asarray(inputs.players)
    vocabulary = set()
    for i, attr in inputs.attributions.items():
        vocabulary.update(attr.feature_names)

    def spread(a):
        return f"{np.median(a):g} (from {a.min():,} to {a.max():,})"

    rows = [["texts in the data", f"{len(inputs.texts):,}"],
            ["texts explained", f"{len(inputs.attributions):,}"],
            ["words per text, median (range)", spread(words)],
            ["distinct words per text (the players), median (range)", spread(players)],
            ["distinct words over the explained texts", f"{len(vocabulary):,}"]]
    if inputs.skipped:
        rows.append(["explained texts without a word (left out)",
                     ", ".join(str(i) for i in inputs.skipped)])
    sec.tables.append(Table("The texts", ["", ""], [[Cell(a), Cell(b)] for a, b in rows]))
    counts = np.zeros(len(inputs.outputs), dtype=int)
    for attr in inputs.attributions.values():
        counts[_predicted(attr)] += 1
    several = next(iter(inputs.attributions.values())).outputs is not None
    sec.tables.append(Table(
        "The model's outputs" + (" (the class of the highest score counted)" if several
                                 else ""),
        ["output", "explained texts predicted so" if several else "explained texts"],
        [[Cell(name), num_cell(int(k))] for name, k in zip(inputs.outputs, counts)]))
    if inputs.unused_columns:
        sec.notes.append("Columns of the file that are not the texts: "
                         + ", ".join(inputs.unused_columns) + ".")
    sec.data.update(n_texts=len(inputs.texts), words=words, players=players,
                    predicted_counts=dict(zip(inputs.outputs, counts.tolist())))
    return sec


def _method_line(attr, call) -> str:
    if call.get("algorithm") == "exact":
        return "exact Shapley values (every coalition of the words)"
    std = np.asarray(attr.std, dtype=float) if attr.std is not None else np.array([np.nan])
    worst = "withheld (see the warnings)" if np.isnan(std).all() else fmt(np.nanmax(std), 3)
    return (f"KernelSHAP, {call['n_samples']:,} coalitions; largest standard error "
            f"{worst}")


def texts_section(inputs) -> Section:
    """Each explained text, its words coloured by their Shapley values; a class selector."""
    sec = Section("texts", "Texts highlighted by attribution")
    several = inputs.outputs and next(iter(inputs.attributions.values())).outputs is not None
    sec.notes.append(
        "Each word's background is its Shapley value for the class shown: red raises the "
        "class's score, blue lowers it, the stronger the colour the larger the value (scaled "
        "per text); hover a word for its value. The values of a text add up to its score "
        "minus the score of the text with every word masked.")
    sec.warnings.extend(inputs.warnings)
    parts = []
    if several and inputs.interactive:
        options = [Markup('<option value="predicted" selected>each text\'s predicted class'
                          '</option>')]
        options += [Markup('<option value="{}">{}</option>').format(c, name)
                    for c, name in enumerate(inputs.outputs)]
        parts.append(Markup('<div class="ml-controls" role="group" aria-label="Class shown">'
                            '<label>Class <select data-ml-control="text-class">{}</select>'
                            '</label></div>').format(Markup("").join(options)))
    elif several:
        sec.notes.append("Every class in turn for each text, its predicted class first.")
    for i, attr in inputs.attributions.items():
        parts.append(_text_block(inputs, i, attr, several))
    sec.blocks.append(Markup("").join(parts))
    sec.data.update(attributions=dict(inputs.attributions), calls=dict(inputs.calls),
                    explained=tuple(inputs.attributions))
    return sec


def _text_block(inputs, i, attr, several) -> Markup:
    top = _predicted(attr)
    score = float(np.asarray(attr.prediction, dtype=float)[0].reshape(-1)[top])
    what = f"predicted {inputs.outputs[top]} ({score:.3g})" if several else \
        f"{inputs.outputs[top]} = {score:.4g}"
    head = Markup('<h3 id="text-{}">Text {}: {}</h3><p class="note">{}</p>').format(
        i, i, what, _method_line(attr, inputs.calls[i]))
    order = [top] + [c for c in range(len(inputs.outputs)) if c != top] if several else [0]
    blocks = []
    for c in order:
        hidden = several and inputs.interactive and c != top
        label = Markup('<p class="note">class {}{}</p>').format(
            inputs.outputs[c], " (predicted)" if c == top else "") \
            if several and not inputs.interactive else Markup("")
        highlighted = attr.plot.text_html(output=c) if attr.outputs is not None \
            else attr.plot.text_html()
        # text_html escapes every string of the text and the model (html.escape)
        blocks.append(Markup('<div data-ml-text-output="{}"{}{}>{}{}</div>').format(
            c, Markup(' data-ml-predicted=""') if c == top else Markup(""),
            Markup(" hidden") if hidden else Markup(""), label, Markup(highlighted)))
    return Markup('<article class="ml-text">{}{}</article>').format(
        head, Markup("").join(blocks))


def pooled_words(inputs, c=None) -> dict:
    """Word -> ``(texts, mean |phi|, its standard error over the texts, mean phi)``, for
    class ``c`` (the pooled class by default), most important first."""
    seen: dict = {}
    for attr in inputs.attributions.values():
        one = _one(inputs, attr, c)
        for word, v in zip(one.feature_names, np.asarray(one.values[0], dtype=float)):
            seen.setdefault(word, []).append(v)
    out = {}
    for word, v in seen.items():
        a = np.abs(np.asarray(v))
        err = a.std(ddof=1) / np.sqrt(a.size) if a.size > 1 else np.nan
        out[word] = (a.size, float(a.mean()), float(err), float(np.mean(v)))
    return dict(sorted(out.items(), key=lambda kv: (-kv[1][1], kv[0])))


def words_section(inputs) -> Section:
    """The words of highest mean |Shapley value| over the explained texts."""
    sec = Section("words", f"Words that matter most ({_class_name(inputs)})")
    words = pooled_words(inputs)
    top = list(words.items())[:TOP_WORDS]
    sec.notes.append(
        f"Mean |Shapley value| for {_class_name(inputs)} of each word over the explained texts "
        "that hold it (count), with its standard error over those texts (n/a for a word in "
        "one text); the mean signed value says which way it moves the score. A word in few "
        "texts can rank high on little evidence: read the count.")
    sec.tables.append(Table(
        f"The {len(top)} words of highest mean |Shapley value|",
        ["word", "texts", "mean |value|", "standard error", "mean value"],
        [[Cell(w), num_cell(k), num_cell(m), num_cell(e, 2), num_cell(s)]
         for w, (k, m, e, s) in top]))
    if top:
        shown = top[:15][::-1]
        fig, ax = subplots(figsize=(6, 0.3 * len(shown) + 1.2), plain=True)
        ax.barh(np.arange(len(shown)), [m for _, (_, m, _, _) in shown],
                xerr=[0 if np.isnan(e) else 1.96 * e for _, (_, _, e, _) in shown],
                color="#d6404e")
        ax.set_yticks(np.arange(len(shown)), [w for w, _ in shown])
        ax.set_xlabel(f"mean |Shapley value| ({_class_name(inputs)}), 95% bars")
        sec.figure_groups.append(FigureGroup("", [figure_from(fig, "Words that matter most")]))
    sec.data.update(words=words, output=_class_name(inputs))
    return sec


def faithfulness_section(inputs) -> Section:
    """Deletion and insertion curves of each explained text (its predicted class)."""
    sec = Section("faithfulness", "Deletion and insertion curves")
    sec.notes.append(
        "For each text, its words are removed (deletion) or put back (insertion) in the order "
        "of their Shapley values for its predicted class, largest first, with the same "
        "masking rule, and the model scores each step. A faithful explanation makes the "
        "deletion curve fall fast (small area) and the insertion curve rise fast (large "
        "area); areas are over the fraction of words moved, from 0 to 1.")
    curves = {}
    with capture_warnings(sec):
        for i, attr in inputs.attributions.items():
            curves[i] = deletion_curves(inputs.model, attr, progress=inputs.progress,
                                        target=None if attr.outputs is not None
                                        else inputs.target)
    sec.tables.append(Table(
        "Areas of each text's curves",
        ["text", "class", "words", "deletion area", "insertion area"],
        [[Cell(f"text {i}"), Cell(c.output), num_cell(len(c.players)),
          num_cell(c.deletion_area, 3), num_cell(c.insertion_area, 3)]
         for i, c in curves.items()]))
    dele = np.array([c.deletion_area for c in curves.values()])
    ins = np.array([c.insertion_area for c in curves.values()])
    sec.notes.append(f"Mean over {plural(len(curves), 'text')}: deletion area "
                     f"{fmt(dele.mean(), 3)}, insertion area {fmt(ins.mean(), 3)}.")
    grid = np.linspace(0, 1, 21)
    fig, ax = subplots(figsize=(5, 3.2), plain=True)
    for name, key in (("deletion", "deletion"), ("insertion", "insertion")):
        mean = np.mean([np.interp(grid, c.fraction, getattr(c, key)) for c in curves.values()],
                       axis=0)
        ax.plot(grid, mean, marker=".", label=f"{name} (mean area "
                f"{(dele if key == 'deletion' else ins).mean():.3g})")
    ax.set_xlabel("fraction of words removed / put back (largest value first)")
    ax.set_ylabel("score of the predicted class")
    ax.legend(frameon=False)
    sec.figure_groups.append(FigureGroup("", [figure_from(
        fig, "Mean deletion and insertion curves", caption="Mean over the explained texts, "
        "each text's curve read at the same fractions.")]))
    sec.data.update(curves=curves, deletion_area=dele, insertion_area=ins)
    return sec


def pooled_pairs(inputs, c=None) -> dict:
    """Word pair -> ``(texts, mean |interaction value|, mean value)`` over the texts whose
    values came with interactions (exact), strongest first."""
    seen: dict = {}
    for attr in inputs.attributions.values():
        one = _one(inputs, attr, c)
        if one.interactions is None:
            continue
        M = np.asarray(one.interactions, dtype=float)[0]
        names = one.feature_names
        a, b = np.triu_indices(len(names), k=1)
        for j, k in zip(a, b):
            key = tuple(sorted((names[j], names[k])))
            seen.setdefault(key, []).append(M[j, k])
    out = {key: (len(v), float(np.mean(np.abs(v))), float(np.mean(v)))
           for key, v in seen.items()}
    return dict(sorted(out.items(), key=lambda kv: (-kv[1][1], kv[0])))


def pairs_section(inputs) -> Section:
    """The strongest word pairs, from the texts whose coalitions were all evaluated."""
    with_pairs = [i for i, a in inputs.attributions.items() if a.interactions is not None]
    sec = Section("pairs", f"Words acting together ({_class_name(inputs)})")
    if not with_pairs:
        sec.notes.append("No text was explained exactly (each has too many distinct words for "
                         "the budget), so no pair values come from the same forward passes; "
                         "ml.shapley(model, text, interactions=True) gives them for one text.")
        return sec
    pairs = pooled_pairs(inputs)
    top = list(pairs.items())[:TOP_PAIRS]
    sec.notes.append(
        f"SHAP interaction values (half the Shapley interaction index) of word pairs, from the "
        f"same coalitions as the values of the {plural(len(with_pairs), 'text')} explained "
        "exactly: mean |value| over the texts holding both words, and the mean signed value "
        "(positive: the pair adds more together than apart).")
    sec.tables.append(Table(
        f"The {len(top)} strongest pairs", ["word", "word", "texts", "mean |value|",
                                            "mean value"],
        [[Cell(a), Cell(b), num_cell(k), num_cell(m), num_cell(s)]
         for (a, b), (k, m, s) in top]))
    sec.data.update(pairs=pairs, texts=with_pairs, output=_class_name(inputs))
    return sec


#: The sections of a report of texts, in page order: (key, build(inputs) -> Section).
TEXT_SECTIONS = [("data", data_section), ("texts", texts_section), ("words", words_section),
                 ("faithfulness", faithfulness_section), ("pairs", pairs_section)]
