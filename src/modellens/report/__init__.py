"""The report: sections built from result objects, rendered to one HTML page by Jinja2."""

from ._options import ReportOptions
from ._report import Report, report
from ._sections import SECTIONS, Section

__all__ = ["report", "Report", "ReportOptions", "Section", "SECTIONS"]
