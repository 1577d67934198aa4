"""ember.export -> ember-compile -> ember-run equals eager PyTorch for models that write into
parts of tensors: item assignment into slices, in-place ops on views of part of a tensor
(``z[:, 6:8] += 1``, ``z[1:, 0:1].mul_(3)``), next to full-range slices. The compiler
functionalizes these writes (ScatterND with box indices -> slices + concat)."""

import os

import numpy as np
import pytest
import torch
import torch.nn as nn

pytest.importorskip("onnx")

import ember  # noqa: E402
from e2e import compile_and_run  # noqa: E402


def _run_at_batch(model, example, batch, tmp_path):
    """Exports ``model`` at ``example``, runs the plan on random inputs of ``batch`` samples
    (x [B, 4], bags of 0-2 ids) and compares every output with eager PyTorch."""
    g = torch.Generator().manual_seed(batch)
    lengths = torch.randint(0, 3, (batch,), generator=g)
    ids = torch.randint(0, 10, (int(lengths.sum()),), generator=g)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]])
    run = (torch.randn(batch, 4, generator=g), ids, offsets)
    got = compile_and_run(model, example, {n: t.numpy() for n, t in
                                           zip(["x", "ids", "offsets"], run)}, tmp_path)
    with torch.no_grad():
        want = model(*run)
    assert [g.shape for g in got] == [tuple(w.shape) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)


class PartialSliceWrites(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.lin = nn.Linear(4, 6)
        self.bag = nn.EmbeddingBag(10, 2, mode="sum")

    def forward(self, x, ids, offsets):
        z = torch.cat([self.lin(x), self.bag(ids, offsets)], 1)  # [B, 8]
        z[:, 2:5] = z[:, 0:3] * 2.0      # item assignment into a slice
        z[:, 6:8] += 1.0                 # in-place op on a view of part of z
        z[1:, 0:1].mul_(3.0)             # ... with a slice on the batch too
        y = z[:, :]                      # a full-range view (dropped)
        return torch.relu(y), z[:, 6:]


def test_partial_slice_writes(tmp_path):
    model = PartialSliceWrites().eval()
    example = (torch.randn(3, 4), torch.tensor([1, 2, 9]), torch.tensor([0, 1, 1]))
    # A static export (dynamic_batch=False) at the example's batch.
    run = (torch.randn(3, 4), torch.tensor([9, 0, 0, 4]), torch.tensor([0, 0, 3]))
    arrays = {n: t.numpy() for n, t in zip(["x", "ids", "offsets"], run)}
    got = compile_and_run(model, example, arrays, tmp_path, dynamic_batch=False)
    with torch.no_grad():
        want = model(*run)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("batch", [1, 2, 5])
def test_partial_slice_writes_with_a_symbolic_batch(batch, tmp_path):
    """The writes into part of the batch (``z[1:, 0:1].mul_(3)``) with the batch symbolic:
    the slice bounds the importer clamps to the run-time dim (min(B, 1), max(B - 1, 0))
    become the slice kernel's own clamped starts/ends; exported once at batch 3, run at
    batch 1 (z[1:] empty), 2 and 5."""
    model = PartialSliceWrites().eval()
    example = (torch.randn(3, 4), torch.tensor([1, 2, 9]), torch.tensor([0, 1, 1]))
    _run_at_batch(model, example, batch, tmp_path)


class BatchWideSliceWrites(nn.Module):
    """Slice writes that keep the whole batch (``z[:, a:b]``), and a read of the last sample."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.lin = nn.Linear(4, 6)
        self.bag = nn.EmbeddingBag(10, 2, mode="sum")

    def forward(self, x, ids, offsets):
        z = torch.cat([self.lin(x), self.bag(ids, offsets)], 1)  # [B, 8]
        z[:, 2:5] = z[:, 0:3] * 2.0
        z[:, 6:8] += 1.0
        z[:, 0] = 0.5
        return torch.relu(z), z[:, 6:]


@pytest.mark.parametrize("batch", [1, 3, 6])
def test_slice_writes_with_a_symbolic_batch(batch, tmp_path):
    """Exported once at batch 2, the plan runs at other batches."""
    model = BatchWideSliceWrites().eval()
    example = (torch.randn(2, 4), torch.tensor([1, 2, 9]), torch.tensor([0, 1]))
    _run_at_batch(model, example, batch, tmp_path)


class WriteThroughViewOfView(nn.Module):
    def forward(self, x):
        y = x * 1.0
        y[:, 1:5][:, 0:2] += 1.0  # a view of part of a view: not exported yet
        return y


def test_write_through_view_of_view_is_a_clear_error(tmp_path):
    path = str(tmp_path / "m.onnx")
    with pytest.raises(ember.ExportError) as info:
        ember.export(WriteThroughViewOfView(), (torch.randn(2, 6),), path)
    assert "view of part of a view" in str(info.value)
    assert not os.path.exists(path)
