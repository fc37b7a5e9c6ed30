"""The parts of a page every section builds from: the section, its tables and figure
groups, number formatting, and the wording shared by the sections of a model of several
outputs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Cell:
    text: str
    cls: str = ""


@dataclass
class Table:
    caption: str
    columns: list
    rows: list  # of lists of Cell


@dataclass
class FigureGroup:
    title: str
    figures: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


@dataclass
class Section:
    """One part of the page.

    Attributes
    ----------
    key : str
        Anchor on the page and key in ``Report.sections``.
    title : str
    data : dict
        The numbers and results the section shows (result objects included).
    notes, warnings : list of str
    tables : list of Table
    figure_groups : list of FigureGroup
    blocks : list of markupsafe.Markup
        Parts of the page written as markup by the section, every string in them
        escaped there (the highlighted texts of a report of texts).
    seconds : float
        Time the section took to compute and draw.
    """

    key: str
    title: str
    data: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    figure_groups: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    seconds: float = float("nan")
    #: the rows the methods left out for missing values (per feature, and what of), said
    #: in one notice among ``warnings``
    left_out: dict = field(default_factory=dict, repr=False)

    @property
    def figures(self) -> list:
        return [f for g in self.figure_groups for f in g.figures]


def fmt(x, digits=4) -> str:
    if x is None:
        return ""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if np.isnan(x):
        return "n/a"
    return f"{x:.{digits}g}"


def num_cell(x, digits=4) -> Cell:
    return Cell(fmt(x, digits), "num")


#: A numeric feature with at most this many distinct values is drawn as points.
FEW_VALUES = 10


def plural(n: int, noun: str) -> str:
    """``"1 level"``, ``"2 levels"``, ``"1,024 levels"``."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def each_output(effect, k=None) -> list:
    """The single-output effects of ``effect`` (itself when it has one output; ``k``
    Nones for a missing one)."""
    if effect is None:
        return [None] * (k or 1)
    outputs = getattr(effect, "outputs", None)
    if not outputs or len(outputs) < 2:
        return [effect]
    return [effect.for_output(i) for i in range(len(outputs))]


def explained_output(effect, inputs):
    """The output the single-output parts of the page explain."""
    return effect.for_output(inputs.output_position) if inputs.outputs else effect


def titled(title, inputs) -> str:
    """A section's heading, naming the output it explains when the model has several."""
    return f"{title} ({inputs.output_name})" if inputs.outputs else title


def why_this(inputs) -> str:
    return ("the class of highest mean predicted probability" if inputs.probability
            else "the first output")


def say_every(sec, inputs, what) -> None:
    """A model of several outputs, a section that computes every one: which one its pictures
    show, and where the others are."""
    if not inputs.outputs:
        return
    sec.notes.append(f"{what} are computed for every output of the {len(inputs.outputs)} in "
                     f"one pass; the pictures below show {inputs.output_name} "
                     f"({why_this(inputs)}), the explorer's class selector each of them; pass "
                     "target= (--class on the command line) to draw another here.")


def chosen_rows(inputs):
    """Rows of the explained set drawn as waterfalls: the user's, else the data's high / low /
    median prediction (``inputs.picks``, explained first)."""
    if inputs.rows:
        return [(inputs.explain_index.index(r), f"row {r}") for r in inputs.rows]
    return [(inputs.explain_index.index(r), f"row {r}, {why}") for r, why in inputs.picks]
