"""A torch module is evaluated where it lives: the device path equals the plain one.

The device path of :mod:`modellens.models._torch` (cast on the host, one
transfer per chunk, answers back as float64) is taken for every device but the
CPU.  Here it is forced on the CPU (``_on_host`` replaced) and must give the
plain path's numbers bit for bit for every method; on a CUDA machine the
module moved to the GPU must give the CPU's numbers to float32 tolerance.
"""

import dataclasses

import numpy as np
import pytest

import modellens as ml
from modellens.engine._tuner import ChunkSizer

torch = pytest.importorskip("torch")
_torch = pytest.importorskip("modellens.models._torch")

N, D = 60, 4


def _net(dtype=torch.float32, outputs=1):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(D, 16), torch.nn.Tanh(),
                               torch.nn.Linear(16, outputs)).to(dtype).eval()


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(3).normal(size=(N, D))


# every method, small enough to run twice in a test; chunk_size cuts several chunks
METHODS = {
    "pdp": lambda m, X: ml.pdp(m, X, grid=5, ice=True, chunk_size=64),
    "ale": lambda m, X: ml.ale(m, X, bins=5, chunk_size=64),
    "dale": lambda m, X: ml.dale(m, X, bins=5, chunk_size=64),
    "kernel": lambda m, X: ml.shapley(m, X[:3], background=X[:10], algorithm="kernel",
                                      n_samples=64, random_state=0, chunk_size=64),
    "permutation": lambda m, X: ml.shapley(m, X[:3], background=X[:10],
                                           algorithm="permutation", n_permutations=10,
                                           random_state=0, chunk_size=64),
    "lime": lambda m, X: ml.lime(m, X[:3], training_data=X, num_samples=200,
                                 random_state=0, chunk_size=64),
}


def _arrays(result):
    """Every float array a result holds, by name (effects: per feature)."""
    if isinstance(result, ml.Effects):
        return {f"{name}.{k}": v for name in result for k, v in _arrays(result[name]).items()}
    out = {}
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            out[f.name] = value
    assert out, f"no arrays found in {type(result).__name__}"
    return out


@pytest.fixture
def device_path(monkeypatch):
    """Take the device path on the CPU; yields a list that grows with each chunk sent."""
    sent = []
    to_model = _torch._to_model

    def spy(torch_, rows, dtype, device, **kw):
        sent.append(rows.shape[0])
        return to_model(torch_, rows, dtype, device, **kw)

    monkeypatch.setattr(_torch, "_on_host", lambda device: False)
    monkeypatch.setattr(_torch, "_to_model", spy)
    return sent


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_device_path_on_the_cpu_equals_the_plain_path_bit_for_bit(method, dtype, X, request):
    net = _net(getattr(torch, dtype))
    plain = _arrays(METHODS[method](net, X))
    sent = request.getfixturevalue("device_path")
    moved = _arrays(METHODS[method](net, X))
    assert sent, "the device path was not taken"
    assert max(sent) <= 64  # chunks, not the whole plan at once
    assert plain.keys() == moved.keys()
    for name in plain:
        np.testing.assert_array_equal(moved[name], plain[name], err_msg=name)


def test_device_path_gradients_of_several_outputs_equal_the_plain_path(X, device_path):
    net = _net(torch.float32, outputs=3)
    device_path.clear()
    moved = ml.dale(net, X, bins=4, chunk_size=32)
    assert len(device_path) >= 2
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_torch, "_on_host", lambda device: True)
        plain = ml.dale(net, X, bins=4, chunk_size=32)
    assert moved.outputs == plain.outputs == ["output[0]", "output[1]", "output[2]"]
    for name in plain:
        np.testing.assert_array_equal(moved[name].local_effects, plain[name].local_effects)
        np.testing.assert_array_equal(moved[name].values, plain[name].values)


def test_float32_module_equals_its_float64_twin_to_float32_tolerance(X):
    """The rows reach the module in its own dtype: a float32 net is not fed float64."""
    net32, net64 = _net(torch.float32), _net(torch.float64)
    for method in ("pdp", "dale", "kernel"):
        a, b = _arrays(METHODS[method](net32, X)), _arrays(METHODS[method](net64, X))
        for name in a:
            np.testing.assert_allclose(a[name], b[name], rtol=2e-5, atol=2e-6, err_msg=name)


def test_answers_come_back_as_float64_numpy_from_the_device_path(X, device_path):
    net = _net(torch.float32)
    out = _torch.torch_predict(net, X, _torch.torch_spec(net))
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    expected = net(torch.tensor(X, dtype=torch.float32)).detach().numpy().astype(np.float64)
    np.testing.assert_array_equal(out, expected)
    grad = _torch.torch_gradient(net, X, spec=_torch.torch_spec(net))
    assert grad.dtype == np.float64 and grad.shape == X.shape
    assert device_path == [N, N]  # one transfer per call: the whole chunk at once


def test_one_backward_pass_gives_every_rows_gradient(X):
    """DALE's derivatives: one forward and one backward pass per chunk, not one per row."""
    net = _net(torch.float64)
    calls = []
    net.register_forward_hook(lambda mod, inp, out: calls.append(inp[0].shape[0]))
    grad = _torch.torch_gradient(net, X)
    assert calls == [N]
    x = torch.tensor(X, requires_grad=True)
    expected = np.stack([torch.autograd.grad(net(x[i:i + 1]).sum(), x)[0][i].numpy()
                         for i in range(N)])
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-15)


def test_chunk_rows_on_a_gpu_come_from_its_free_memory(monkeypatch):
    net = _net(torch.float32)  # units: 4 inputs + 16 + 16 + 1 + 1 leading dims
    per_row = 4 * 4 * (D + 16 + 16 + 1 + 1)
    cuda = (torch.float32, torch.device("cuda", 0))
    asked = []

    def free(torch_, device):
        asked.append(device)
        return free.bytes, 80 * 2**30

    monkeypatch.setattr(_torch, "_free_bytes", free)
    free.bytes = 8 * 2**30
    rows = _torch.torch_max_rows(net, cuda, D)
    assert asked == [torch.device("cuda", 0)]
    assert rows == int(_torch.DEVICE_MEMORY_SHARE * free.bytes) // per_row
    assert rows > _torch.TORCH_MAX_ROWS  # a large GPU takes larger chunks than the CPU cap
    free.bytes = 2**20  # a nearly full GPU: small chunks rather than running out of memory
    small = _torch.torch_max_rows(net, cuda, D)
    assert 1 <= small < 1024 and small * per_row <= _torch.DEVICE_MEMORY_SHARE * free.bytes
    # the engine honours it below its own cap on the host rows
    assert ChunkSizer(D, None, 10**6, max_rows=small).cap == small
    # on the CPU: the fixed cap, and no device memory is asked for
    asked.clear()
    assert _torch.torch_max_rows(net, _torch.torch_spec(net), D) == _torch.TORCH_MAX_ROWS
    assert asked == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("method", list(METHODS))
def test_a_module_on_the_gpu_equals_its_cpu_run(method, X):
    cpu = _arrays(METHODS[method](_net(torch.float32), X))
    gpu_net = _net(torch.float32).to("cuda")
    gpu = _arrays(METHODS[method](gpu_net, X))
    assert next(gpu_net.parameters()).device.type == "cuda"  # explained where it lives
    for name in cpu:
        scale = max(1.0, float(np.max(np.abs(cpu[name]))))
        np.testing.assert_allclose(gpu[name], cpu[name], rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=name)


@pytest.mark.parametrize("method", ["pdp", "dale"])
def test_a_chunk_that_does_not_fit_the_device_names_chunk_size(method, X):
    class Full(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(D, 1)

        def forward(self, x):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with pytest.raises(ml.ModelError, match=r"chunk of \d+ rows .*smaller chunk_size="):
        METHODS[method](Full().eval(), X)
