"""ONNX external data (issue 17, weights at scale): ember.export writes large initializers
to MODEL.onnx.data straight from the parameters' memory; ember-compile maps that file
(initializers of 16 MiB or more) instead of reading it, slices sharded tables without
copying and streams the weights files."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

import ember
from ember.export import ExportError

from e2e import run_plan, tool

onnx = pytest.importorskip("onnx")

# 70,000 x 64 f32 = 17.9 MB: above the importer's 16 MiB mapping threshold.
BIG_ROWS, BIG_DIM = 70_000, 64


class Tables(nn.Module):
    def __init__(self):
        super().__init__()
        self.big = nn.EmbeddingBag(BIG_ROWS, BIG_DIM, mode="sum")
        self.small = nn.EmbeddingBag(100, 8, mode="mean")
        self.top = nn.Linear(BIG_DIM + 8, 1)

    def forward(self, ids, offsets, ids2, offsets2):
        pooled = torch.cat([self.big(ids, offsets), self.small(ids2, offsets2)], dim=1)
        return pooled, self.top(pooled)


def inputs():
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, BIG_ROWS, (20,), generator=g)
    ids[0], ids[-1] = 0, BIG_ROWS - 1  # both table edges
    offsets = torch.tensor([0, 0, 5, 11, 17])  # an empty bag
    ids2 = torch.randint(0, 100, (9,), generator=g)
    offsets2 = torch.tensor([0, 2, 2, 6, 8])
    return ids, offsets, ids2, offsets2


def model():
    torch.manual_seed(0)
    return Tables().eval()


def names(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


def test_export_writes_external_data_that_onnx_loads(tmp_path):
    m = model()
    path = tmp_path / "m.onnx"
    ember.export(m, inputs(), str(path), external_data=True)
    assert names(tmp_path) == ["m.onnx", "m.onnx.data"]
    # The .onnx holds no table bytes; the data file holds the large ones, 4096-aligned.
    assert path.stat().st_size < 100_000
    bare = onnx.load(str(path), load_external_data=False)
    external = {t.name: {e.key: e.value for e in t.external_data}
                for t in bare.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL}
    assert set(external) == {"big.weight"}  # the others are below 1 MiB
    assert external["big.weight"]["location"] == "m.onnx.data"
    assert int(external["big.weight"]["offset"]) % 4096 == 0
    assert int(external["big.weight"]["length"]) == BIG_ROWS * BIG_DIM * 4
    loaded = onnx.load(str(path))
    from onnx import numpy_helper
    weights = {t.name: numpy_helper.to_array(t) for t in loaded.graph.initializer}
    np.testing.assert_array_equal(weights["big.weight"], m.big.weight.detach().numpy())
    np.testing.assert_array_equal(weights["small.weight"], m.small.weight.detach().numpy())


class Dense(nn.Module):
    """Standard ONNX ops only (onnxruntime has no ember-domain EmbeddingBag)."""

    def __init__(self):
        super().__init__()
        self.wide = nn.Linear(640, 600)  # 1.5 MB of weight: external
        self.out = nn.Linear(600, 3)

    def forward(self, x):
        return self.out(torch.relu(self.wide(x)))


def test_onnxruntime_runs_the_external_data_model(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    torch.manual_seed(1)
    m = Dense().eval()
    x = torch.randn(5, 640)
    path = tmp_path / "m.onnx"
    ember.export(m, (x,), str(path), external_data=True)
    assert names(tmp_path) == ["m.onnx", "m.onnx.data"]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    want = [m(x).detach().numpy()]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_small_models_stay_in_one_file(tmp_path):
    ember.export(model(), inputs(), str(tmp_path / "auto.onnx"))
    ember.export(model(), inputs(), str(tmp_path / "never.onnx"), external_data=False)
    assert names(tmp_path) == ["auto.onnx", "never.onnx"]
    loaded = onnx.load(str(tmp_path / "never.onnx"))
    assert all(t.data_location != onnx.TensorProto.EXTERNAL for t in loaded.graph.initializer)


def test_zero_tables_stay_sparse_on_disk(tmp_path):
    m = model()
    with torch.no_grad():
        m.big.weight.zero_()
        m.big.weight[7] = 1.5  # one row of data in 17.9 MB of zeros
    ember.export(m, inputs(), str(tmp_path / "m.onnx"), external_data=True)
    data = tmp_path / "m.onnx.data"
    st = os.stat(data)
    assert st.st_size >= BIG_ROWS * BIG_DIM * 4
    assert st.st_blocks * 512 < st.st_size // 4, "zero chunks must be holes"
    loaded = onnx.load(str(tmp_path / "m.onnx"))
    from onnx import numpy_helper
    big = [numpy_helper.to_array(t) for t in loaded.graph.initializer if t.name == "big.weight"][0]
    np.testing.assert_array_equal(big, m.big.weight.detach().numpy())


def test_bad_threshold_and_failed_exports_write_nothing(tmp_path):
    with pytest.raises(ExportError, match="external_data_threshold"):
        ember.export(model(), inputs(), str(tmp_path / "m.onnx"), external_data=True,
                     external_data_threshold=-1)

    class Untraceable(nn.Module):
        def __init__(self):
            super().__init__()
            self.big = nn.EmbeddingBag(BIG_ROWS, BIG_DIM)

        def forward(self, ids, offsets):
            if ids.sum() > 0:  # data-dependent control flow
                return self.big(ids, offsets)
            return self.big(ids, offsets) * 2

    with pytest.raises(Exception):
        ember.export(Untraceable(), inputs()[:2], str(tmp_path / "u.onnx"), external_data=True)
    assert names(tmp_path) == []


@pytest.mark.parametrize("world_size,sharding", [(1, "auto"), (2, "column_wise"),
                                                 (2, "row_wise"), (2, "table_wise")])
def test_ember_compile_maps_external_data(tmp_path, world_size, sharding):
    compiler = os.path.abspath(tool("EMBER_COMPILE", "ember-compile"))
    m = model()
    path = tmp_path / "m.onnx"
    ember.export(m, inputs(), str(path), external_data=True)
    plan = tmp_path / "out" / "m.plan"
    plan.parent.mkdir()
    # From another directory: the data file is found beside the model.
    proc = subprocess.run([compiler, str(path), "-o", str(plan), "--world-size",
                           str(world_size), "--sharding", sharding],
                          capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    ids, offsets, ids2, offsets2 = inputs()
    run_args = ("--nproc", str(world_size)) if world_size > 1 else ()
    got = run_plan(str(plan), {"ids": ids.numpy(), "offsets": offsets.numpy(),
                               "ids2": ids2.numpy(), "offsets2": offsets2.numpy()},
                   tmp_path, run_args=run_args)
    want = [t.detach().numpy() for t in m(*inputs())]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def write_external_model(directory, length=None, offset=0, data_bytes=None):
    """A Gather over one 16 MiB + 4 KiB external initializer, written by hand."""
    from onnx import TensorProto, helper
    rows, dim = 4097, 1024
    nbytes = rows * dim * 4
    with open(os.path.join(directory, "w.data"), "wb") as f:
        f.truncate(offset + nbytes if data_bytes is None else data_bytes)
    w = TensorProto()
    w.name, w.data_type = "w", TensorProto.FLOAT
    w.dims.extend([rows, dim])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.data"), ("offset", str(offset)),
                 ("length", str(nbytes if length is None else length))):
        e = w.external_data.add()
        e.key, e.value = k, v
    node = helper.make_node("Gather", ["w", "ids"], ["output_0"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
                              [helper.make_tensor_value_info("output_0", TensorProto.FLOAT, [3, dim])],
                              [w])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8  # what ember-compile's ONNX checker knows (onnx 1.23 writes more)
    path = os.path.join(directory, "g.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


@pytest.mark.parametrize("case,message", [
    ("length", "initializer 'w': external data of 100 bytes in '.*w.data', but its type holds "
               "4195328 elements of 4 bytes"),
    ("short", r"initializer 'w': external data \[0, 16781312\) lies outside '.*w.data' "
              r"\(1000 bytes\)"),
    ("offset", r"initializer 'w': external data \[8192, 16789504\) lies outside"),
])
def test_ember_compile_refuses_bad_external_data(tmp_path, case, message):
    import re
    compiler = tool("EMBER_COMPILE", "ember-compile")
    kwargs = {"length": {"length": 100}, "short": {"data_bytes": 1000},
              "offset": {"offset": 8192, "data_bytes": 4097 * 1024 * 4}}[case]
    path = write_external_model(str(tmp_path), **kwargs)
    plan = tmp_path / "g.plan"
    proc = subprocess.run([compiler, path, "-o", str(plan)], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert re.search(message, proc.stderr), proc.stderr
    assert not plan.exists() and not (tmp_path / "g.rank0.weights").exists()


def test_mapped_gather_compiles_and_runs(tmp_path):
    compiler = tool("EMBER_COMPILE", "ember-compile")
    path = write_external_model(str(tmp_path))
    with open(tmp_path / "w.data", "r+b") as f:  # row 4096 (the last) = 2.0
        f.seek(4096 * 1024 * 4)
        f.write(np.full(1024, 2.0, np.float32).tobytes())
    plan = tmp_path / "g.plan"
    proc = subprocess.run([compiler, path, "-o", str(plan)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # The weights file keeps the source's holes.
    st = os.stat(tmp_path / "g.rank0.weights")
    assert st.st_size >= 4097 * 1024 * 4 and st.st_blocks * 512 < 1 << 20
    (out,) = run_plan(str(plan), {"ids": np.array([4096, 0, 4096])}, tmp_path)
    want = np.zeros((3, 1024), np.float32)
    want[[0, 2]] = 2.0
    np.testing.assert_array_equal(out, want)


def test_cli_export_flags(tmp_path):
    factory = tmp_path / "factory_mod.py"
    factory.write_text(
        "import torch\n"
        "from torch import nn\n"
        "class Bags(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.bag = nn.EmbeddingBag(5000, 64)\n"
        "    def forward(self, ids, offsets):\n"
        "        return self.bag(ids, offsets)\n"
        "def make():\n"
        "    return Bags(), (torch.tensor([1, 2, 3]), torch.tensor([0, 1]))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "out"
    out.mkdir()
    run = lambda *args: subprocess.run([sys.executable, "-m", "ember", "export", "factory_mod:make",
                                        *args], capture_output=True, text=True, env=env)
    proc = run(str(out / "a.onnx"), "--external-data", "always",
               "--external-data-threshold", "4096")
    assert proc.returncode == 0, proc.stderr
    proc = run(str(out / "b.onnx"), "--external-data", "never")
    assert proc.returncode == 0, proc.stderr
    proc = run(str(out / "c.onnx"), "--external-data-threshold", "-5")
    assert proc.returncode == 1 and "--external-data-threshold must be >= 0" in proc.stderr
    proc = run(str(out / "d.onnx"), "--external-data", "sometimes")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    assert names(out) == ["a.onnx", "a.onnx.data", "b.onnx"]
