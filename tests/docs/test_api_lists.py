"""The API reference lists what the code offers."""

import re

import modellens as ml
from modellens.attribution.shapley import ALGORITHMS


def test_shapley_page_lists_every_algorithm():
    line = re.search(r"^\s*algorithm : \{(.+?)\}", ml.shapley.__doc__, flags=re.M).group(1)
    listed = {s.strip().strip('"') for s in line.split(",")}
    assert listed == set(ALGORITHMS)
