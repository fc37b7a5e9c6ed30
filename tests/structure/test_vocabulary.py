"""The frozen public vocabulary (issue 46): every public signature uses the names of one page.

``docs/vocabulary.md`` lists every keyword of the public functions and of the public
methods of the results, with its one meaning; a name kept to some functions says
*only in*.  A renamed keyword stays as an alias for one minor version, with a
``FutureWarning`` (checked here, one call per alias).
"""

import inspect
import pathlib
import re
import warnings

import numpy as np
import pytest

import modellens as ml
from modellens.plot.attributions import AttributionPlots

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "vocabulary.md"

#: Signatures not checked yet, and who brings them in ("function": lane).
NOT_YET = {
    "report": "report (its options object; its keywords join the page then)",
}

#: Uses of a name outside its *only in* functions still to rename ((function, name): lane).
#: The renames are decided (see the page's Renamed table); the lane applies them.
REMAINING = {
    ("regions", "method"): "effects",
    ("regions", "n_permutations"): "effects",
}


def vocabulary(text: str):
    """``(names, only, renamed)`` of the page: every name, the names kept to some
    functions, and the renamed table's rows ``(old, new, [functions])``."""
    names, only, renamed = set(), {}, []
    lines: list = []
    for line in text.splitlines():  # a bullet's wrapped lines are the bullet's
        if line.startswith("  ") and lines and lines[-1].startswith("- "):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    for line in lines:
        if line.startswith("- "):
            head, _, rest = line[2:].partition(":")
            found = re.findall(r"`(\w+)`", head)
            names |= set(found)
            if "*only in*" in rest:
                where = re.findall(r"`(\w+)`", rest.split("*only in*", 1)[1])
                for name in found:
                    only[name] = set(where)
        elif line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            old, new = cells[0].strip("`"), cells[1].strip("`")
            renamed.append((old, new, re.findall(r"`(\w+)`", cells[2])))
    return names, only, renamed


NAMES, ONLY, RENAMED = vocabulary(PAGE.read_text(encoding="utf-8"))


def _result_classes():
    return [getattr(ml, n) for n in ml.__all__ if inspect.isclass(getattr(ml, n))
            and not issubclass(getattr(ml, n), (Exception, Warning))]


def signatures():
    """``{"function" or "Class.method": [parameter names]}`` of the public surface.

    Constructors are left out: the results are built by the library (their fields are
    documented as attributes), and the maskers' options are the page's own names.
    """
    out = {}
    for name in ml.__all__:
        obj = getattr(ml, name)
        if inspect.isfunction(obj) and name not in NOT_YET:
            out[name] = list(inspect.signature(obj).parameters)
    for cls in _result_classes() + [AttributionPlots]:
        for attr, member in inspect.getmembers(cls):
            static = inspect.getattr_static(cls, attr)
            if attr.startswith("_") and attr != "__call__" or isinstance(static, property):
                continue
            if callable(member) and not inspect.isclass(member):
                try:
                    params = list(inspect.signature(member).parameters)
                except (TypeError, ValueError):
                    continue
                out[f"{cls.__name__}.{attr}"] = [p for p in params if p not in ("self", "cls")]
    return out


def test_the_page_is_read():
    assert {"X", "model", "sample", "n_jobs", "sample_weight", "effect", "n_resamples"} <= NAMES
    assert ONLY["n_permutations"] == {"shapley"} and ONLY["method"] == {"pdp", "interactions", "compare"}
    assert ("x", "X", ["lime_width_sweep"]) in RENAMED


def test_every_public_signature_uses_the_vocabulary():
    unknown = {f"{where}({p})" for where, params in signatures().items() for p in params
               if p not in NAMES}
    assert not unknown, f"names not on docs/vocabulary.md: {sorted(unknown)}"


def test_names_kept_to_some_functions_stay_there():
    found = set()
    for where, params in signatures().items():
        function = where.split(".")[0]
        for p in params:
            if p in ONLY and function not in ONLY[p] and "." not in where:
                found.add((function, p))
    assert found == set(REMAINING), (
        f"new: {sorted(found - set(REMAINING))}; "
        f"done, drop from REMAINING: {sorted(set(REMAINING) - found)}")


def test_no_old_name_is_in_a_signature():
    sigs = signatures()
    for old, new, functions in RENAMED:
        for f in functions:
            if (f, old) in REMAINING:
                continue
            assert old not in sigs[f] and new in sigs[f], (f, old, new)


def _alias_calls():
    train = np.random.default_rng(0).normal(size=(60, 2))
    f = lambda A: A @ [1.0, 2.0]  # noqa: E731
    score = lambda texts: np.array([t.count("a") for t in texts], float)  # noqa: E731
    image = np.random.default_rng(1).random((8, 8, 3))
    pixels = lambda images: np.asarray(images, float).reshape(len(images), -1).mean(1)  # noqa: E731
    seg = np.arange(64).reshape(8, 8) // 16
    return {
        ("lime_width_sweep", "x"): (
            lambda **k: ml.lime_width_sweep(f, training_data=train, num_samples=50,
                                            random_state=0, **k), train[:1]),
        ("lime_text", "predict_fn"): (
            lambda **k: ml.lime_text(text="a b a c", num_samples=20, random_state=0, **k),
            score),
        ("lime_image", "predict_fn"): (
            lambda **k: ml.lime_image(image=image, segmentation=seg, num_samples=20,
                                      random_state=0, **k), pixels),
    }


ALIASES = [(f, old, new) for old, new, functions in RENAMED for f in functions
           if (f, old) not in REMAINING]


@pytest.mark.parametrize("function, old, new", ALIASES)
def test_each_alias_works_with_its_deprecation_warning(function, old, new):
    call, value = _alias_calls()[(function, old)]
    assert getattr(getattr(ml, function), "__renamed__", {}).get(old) == new
    with pytest.warns(FutureWarning, match=rf"{function}\({old}=\.\.\.\) is deprecated .*"
                                           rf"use {new}= instead"):
        by_old = call(**{old: value})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        by_new = call(**{new: value})
    np.testing.assert_array_equal(np.asarray(by_old.values), np.asarray(by_new.values))
    with pytest.raises(ml.InvalidParameterError, match=f"pass {new}= only"):
        call(**{old: value, new: value})


def test_every_alias_of_the_code_is_on_the_page():
    listed = {(f, old, new) for old, new, functions in RENAMED for f in functions}
    found = {(name, old, new) for name in ml.__all__
             for old, new in getattr(getattr(ml, name), "__renamed__", {}).items()}
    assert found <= listed, found - listed
