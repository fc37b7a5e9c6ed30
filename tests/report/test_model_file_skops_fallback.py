"""The load of a skops file where skops' private functions are not those modellens knows.

``skops_private`` hands over skops' private ``get_tree`` and ``read_schema`` only where
they take the arguments of the skops versions tested (0.15, 0.16); otherwise
``load_model`` takes skops' public functions, every step on the bytes of its one
opening of the file (none reopens the path), with the same checks.
"""

import numpy as np
import pytest

from modellens.files import FileError, load_model
from modellens.files import _models

sio = pytest.importorskip("skops.io")
from test_model_file_skops_ids import _gradient_boosting_file, _rewrite, _states  # noqa: E402


@pytest.fixture
def public_only(monkeypatch):
    """skops' private functions unknown; its public ones spied: what each read."""
    calls = []
    real = sio.get_untrusted_types
    monkeypatch.setattr(_models, "skops_private", lambda: None)
    monkeypatch.setattr(sio, "get_untrusted_types",
                        lambda **how: calls.append(how.get("file")) or real(**how))
    monkeypatch.setattr(sio, "load", lambda *a, **k: pytest.fail("the path was opened again"))
    return calls


def test_the_public_functions_load_and_refuse_as_the_private_ones(tmp_path, public_only):
    data = _gradient_boosting_file()
    path = tmp_path / "gb.skops"
    path.write_bytes(data)
    X = np.random.default_rng(1).normal(size=(20, 3))
    expected = sio.loads(data, trusted=sio.get_untrusted_types(data=data)).predict(X)
    public_only.clear()
    np.testing.assert_array_equal(load_model(path).predict(X), expected)
    assert public_only == [None]  # read from the bytes of the opening, not the path

    def new_position(schema, files):
        pos = _states(schema)[-1]["content"]["content"]["state"]["content"]["pos"]
        pos["content"] = str(int(pos["content"]) + 1)

    path.write_bytes(_rewrite(data, new_position))
    with pytest.raises(FileError, match="two objects of one id"):
        load_model(path)
