"""The sections of the report: each a pure function of the inputs and earlier findings.

A section reads the frozen :class:`~modellens.report._inputs.Inputs` and the
findings (``Section.data``) of the sections it names in ``needs`` / ``uses``;
it calls the public methods (``ml.pdp``, ``ml.ale``, ``ml.shapley``,
``ml.lime``), draws with the renderers of :mod:`modellens.plot`, and keeps the
numbers it shows in ``Section.data``, so tests read them without parsing
pictures.
"""


from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .changed import changed_section
from .conditional import conditional_section
from .data import data_section
from .effects import effects_section
from .interaction import interaction_section, screen_pairs
from .lime import lime_section
from .page import Cell, FigureGroup, Section, Table
from .quality import quality_section
from .regions import regions_section
from .shapley import shapley_options, shapley_section

__all__ = ["Section", "Table", "Cell", "FigureGroup", "SECTIONS", "SectionSpec", "screen_pairs",
           "shapley_options"]


@dataclass(frozen=True)
class SectionSpec:
    """One section: ``build(inputs, found) -> Section | None``.

    ``needs``: keys of sections whose findings (their ``Section.data``) it
    reads; they are built first, even when not on the page.  ``uses``:
    findings it reads when those sections are built anyway.  ``when``:
    whether the section applies to these inputs.
    """

    key: str
    build: Callable[..., Any]
    needs: tuple = ()
    uses: tuple = ()
    when: Callable[..., Any] | None = None

    def applies(self, inputs) -> bool:
        return True if self.when is None else bool(self.when(inputs))


#: The sections in page order; a new method adds one entry here.
SECTIONS = [
    SectionSpec("data", data_section),
    SectionSpec("quality", quality_section, uses=("effects",),
                when=lambda inputs: inputs.y is not None),
    SectionSpec("changed", changed_section,
                when=lambda inputs: inputs.reference is not None),
    SectionSpec("effects", effects_section, uses=("data",),
                when=lambda inputs: bool(inputs.features)),
    SectionSpec("interaction", interaction_section, needs=("effects",),
                when=lambda inputs: len(inputs.features) > 1),
    SectionSpec("regions", regions_section, needs=("effects",),
                when=lambda inputs: len(inputs.features) > 1),
    SectionSpec("shapley", shapley_section, uses=("effects",)),
    SectionSpec("conditional", conditional_section, needs=("data",)),
    SectionSpec("lime", lime_section),
]
