"""One export, every batch: a plain nn.Module with dense inputs and nn.EmbeddingBags (1-D ids
with offsets, and a 2-D [B, L] input), shape code on the batch (``x.size(0)``, ``view``,
a slice write, ``x[-1]``), exported once at batch 2 and run by ember-run at batches 1, 3 and 8
against eager PyTorch. Also the clean errors: a model that bakes the batch in at trace time,
and inputs whose batches disagree."""

import numpy as np
import pytest
import torch
import torch.nn as nn

onnx = pytest.importorskip("onnx")

import ember  # noqa: E402
from e2e import export_and_compile, run_plan  # noqa: E402


class DenseAndBags(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(7)
        self.bottom = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
        self.bag = nn.EmbeddingBag(30, 4, mode="mean")
        self.bag2d = nn.EmbeddingBag(20, 4, mode="sum")
        self.top = nn.Linear(8 + 4 + 4, 3)

    def forward(self, dense, ids, offsets, fixed_ids):
        b = dense.size(0)
        x = self.bottom(dense).view(b, 2, 4).reshape(b, -1)       # shapes from x.size(0)
        pooled = torch.cat([x, self.bag(ids, offsets), self.bag2d(fixed_ids)], 1)
        pooled[:, 1] = 1.0                                        # a slice write
        out = torch.sigmoid(self.top(pooled))
        return out, out[-1]                                       # and the last sample


def _inputs(batch, seed):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, 4, (batch,), generator=g)
    lengths[0] = 0  # an empty bag
    ids = torch.randint(0, 30, (int(lengths.sum()),), generator=g)
    if ids.numel():
        ids[-1] = 29  # the table's edge
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]])
    return (torch.randn(batch, 5, generator=g), ids, offsets,
            torch.randint(0, 20, (batch, 3), generator=g))


NAMES = ["dense", "ids", "offsets", "fixed_ids"]


def test_signature_has_a_symbolic_batch():
    m = ember.to_onnx(DenseAndBags().eval(), _inputs(2, 0))
    dims = {v.name: [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim]
            for v in list(m.graph.input) + list(m.graph.output)}
    assert dims == {"dense": ["B", 5], "ids": ["N_ids"], "offsets": ["B"],
                    "fixed_ids": ["B", 3], "output_0": ["B", 3], "output_1": [3]}
    static = ember.to_onnx(DenseAndBags().eval(), _inputs(2, 0), dynamic_batch=False)
    assert [d.dim_value for d in static.graph.input[0].type.tensor_type.shape.dim] == [2, 5]


def test_one_export_runs_at_every_batch(tmp_path):
    model = DenseAndBags().eval()
    plan = export_and_compile(model, _inputs(2, 0), tmp_path, "m", compile_args=("--max-batch", "8"))
    for batch in (1, 3, 8):
        run = _inputs(batch, batch)
        got = run_plan(plan, {n: t.numpy() for n, t in zip(NAMES, run)}, tmp_path, "m")
        with torch.no_grad():
            want = [t.numpy() for t in model(*run)]
        assert [g.shape for g in got] == [w.shape for w in want]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    proc = run_plan(plan, {n: t.numpy() for n, t in zip(NAMES, _inputs(9, 9))}, tmp_path, "m",
                    expect_ok=False)
    assert proc.returncode == 1 and "above the plan's bound of 8" in proc.stderr, proc.stderr
    # Dense rows and bags of different batches: an input error naming them.
    bad = dict(zip(NAMES, [t.numpy() for t in _inputs(3, 1)]))
    bad["dense"] = np.random.randn(4, 5).astype(np.float32)
    proc = run_plan(plan, bad, tmp_path, "m", expect_ok=False)
    assert proc.returncode == 1 and "'B' is" in proc.stderr and "dense" in proc.stderr, proc.stderr


class BakesTheBatchViaInt(nn.Module):
    def forward(self, x):
        return x.view(int(x.size(0)), -1) + 1.0


@pytest.mark.parametrize("model", [BakesTheBatchViaInt()])
def test_a_model_that_bakes_the_batch_in_is_refused(model, tmp_path):
    path = tmp_path / "m.onnx"
    with pytest.raises(ember.ExportError, match=r"int\(\) of 'size' depends on the batch size "
                                                r"\(at .*x\.view\(int\(x\.size\(0\)\), -1\).*"
                                                r"dynamic_batch=False"):
        ember.export(model, (torch.randn(3, 4),), str(path))
    assert not path.exists()
    ember.export(model, (torch.randn(3, 4),), str(path), dynamic_batch=False)
    assert path.exists()


class BatchSizedFills(nn.Module):
    """Fills of a batch-sized shape that no tensor of the model has: new_ones(B, 3) next to an
    [B, 6] input, torch.full((B, 2), 0.5), torch.zeros(B, 4) + a slice of the input."""

    def forward(self, x):
        ones = x.new_ones(x.size(0), 3)
        half = torch.full((x.shape[0], 2), 0.5)
        zeros = torch.zeros(x.shape[0], 4) + x[:, :4]
        return torch.cat([x, ones, half, zeros], 1)


@pytest.mark.parametrize("batch", [1, 4, 7])
def test_batch_sized_fills_run_at_every_batch(batch, tmp_path):
    """Exported once at batch 3: each fill's shape is built at run time from the batch
    (shape of the input, one Concat) and filled by constant_of_shape."""
    model = BatchSizedFills().eval()
    plan = export_and_compile(model, (torch.randn(3, 6),), tmp_path)
    x = torch.randn(batch, 6, generator=torch.Generator().manual_seed(batch))
    (got,) = run_plan(plan, {"x": x.numpy()}, tmp_path)
    with torch.no_grad():
        want = model(x).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
