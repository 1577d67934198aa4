"""Weights at real scale (issue 17): a model whose embedding tables hold more than 8 GB,
compiled for 1 and 4 ranks and run, with ember-compile's peak RSS measured.

usage: weights_at_scale_test.py EMBER_COMPILE EMBER_RUN WORKDIR [--gb G]

The model is ember.export's ONNX of three nn.EmbeddingBag tables (exported small, then
its two large tables are pointed at one sparse external data file: all zeros but a few
known rows, so the file costs no disk and no time to make):
  big_rows  16,777,216 x 64 f32 (4.29 GB)  row_wise on 4 ranks
  big_cols   8,388,608 x 128 f32 (4.29 GB) column_wise on 4 ranks
  small          1,000 x 16 f32 (in the .onnx)  table_wise
ember-compile --world-size 1 and 4 (ember-compile maps the data file; the weights files
are streamed from it), ember-run and ember-run --nproc 4 on one batch that reads the known
rows and zero rows; outputs equal a numpy reference. Peak RSS of each ember-compile
(wait4) must stay below 1 GiB + the largest table shard. Every file it makes lives in
WORKDIR, removed at the end whether it passed or not. Exits 77 (skip) without torch/onnx
or with less than 2 x the model's size free on WORKDIR's file system (sparse files need
little, but a file system without holes would need it all).
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

try:
    import numpy as np
    import onnx
    import torch
    from torch import nn
except ImportError as e:  # pragma: no cover
    print("SKIP: needs numpy, onnx and torch:", e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "compiler", "frontends", "torch"))
import ember  # noqa: E402

BIG = [("big_rows", 1 << 24, 64), ("big_cols", 1 << 23, 128)]
SMALL_ROWS, SMALL_DIM = 1000, 16
GIB = 1 << 30


class Model(nn.Module):
    def __init__(self, rows):
        super().__init__()
        self.big_rows = nn.EmbeddingBag(rows[0], BIG[0][2], mode="sum")
        self.big_cols = nn.EmbeddingBag(rows[1], BIG[1][2], mode="sum")
        self.small = nn.EmbeddingBag(SMALL_ROWS, SMALL_DIM, mode="sum")

    def forward(self, ids0, off0, ids1, off1, ids2, off2):
        return torch.cat([self.big_rows(ids0, off0), self.big_cols(ids1, off1),
                          self.small(ids2, off2)], dim=1)


def known_rows(rows):
    """Rows with data: the first, some in the middle, the last (the table edges and the
    row-wise shard boundaries)."""
    return sorted({0, 1, rows // 4 - 1, rows // 4, rows // 2 + 3, rows - 1})


def build(work, gb_scale):
    """The .onnx and its sparse data file; returns (onnx path, tables as {name: (rows,
    dim, {row: values})}, small table, inputs)."""
    rows = [max(64, int(r * gb_scale)) for _, r, _ in BIG]
    torch.manual_seed(0)
    template = Model([64, 64]).eval()
    example = (torch.tensor([1, 2]), torch.tensor([0, 1]), torch.tensor([3]),
               torch.tensor([0, 1]), torch.tensor([4, 5]), torch.tensor([0, 1]))
    path = os.path.join(work, "big.onnx")
    ember.export(template, example, path, external_data=False)
    model = onnx.load(path)
    data_name = "big.onnx.data"
    rng = np.random.default_rng(7)
    tables = {}
    offset = 0
    with open(os.path.join(work, data_name), "wb") as f:
        for (name, _, dim), n in zip(BIG, rows):
            proto = [t for t in model.graph.initializer if t.name == f"{name}.weight"][0]
            values = {}
            for r in known_rows(n):
                values[r] = rng.standard_normal(dim).astype(np.float32)
                f.seek(offset + r * dim * 4)
                f.write(values[r].tobytes())
            del proto.dims[:]
            proto.dims.extend([n, dim])
            proto.ClearField("raw_data")
            proto.data_location = onnx.TensorProto.EXTERNAL
            for k, v in (("location", data_name), ("offset", str(offset)),
                         ("length", str(n * dim * 4))):
                e = proto.external_data.add()
                e.key, e.value = k, v
            tables[name] = (n, dim, values)
            offset += n * dim * 4
        f.truncate(offset)
    # Each bag's node is named after its table: the name --table-sharding takes.
    for node in model.graph.node:
        for name in [n for n, _, _ in BIG] + ["small"]:
            if f"{name}.weight" in node.input:
                node.name = name
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    small = template.small.weight.detach().numpy()
    # Bags: known rows, zero rows, an empty bag.
    inputs = {}
    for t, (name, _, _) in enumerate(BIG):
        n = tables[name][0]
        known = known_rows(n)
        ids = np.array(known + [2, n // 3, n - 2], dtype=np.int64)
        inputs[f"ids{t}"] = ids
        inputs[f"off{t}"] = np.array([0, 2, 2, 5], dtype=np.int64)
    inputs["ids2"] = np.array([0, 999, 5, 6], dtype=np.int64)
    inputs["off2"] = np.array([0, 1, 1, 3], dtype=np.int64)
    return path, tables, small, inputs, offset


def reference(tables, small, inputs):
    out = []
    for t, (name, _, _) in enumerate(BIG):
        n, dim, values = tables[name]
        ids, off = inputs[f"ids{t}"], inputs[f"off{t}"]
        ends = list(off[1:]) + [len(ids)]
        out.append(np.stack([sum((values.get(int(i), np.zeros(dim, np.float32))
                                  for i in ids[b:e]), np.zeros(dim, np.float32))
                             for b, e in zip(off, ends)]))
    ids, off = inputs["ids2"], inputs["off2"]
    ends = list(off[1:]) + [len(ids)]
    out.append(np.stack([small[ids[b:e]].sum(0) if e > b else np.zeros(SMALL_DIM, np.float32)
                         for b, e in zip(off, ends)]))
    return np.concatenate(out, axis=1)


GNU_TIME = "/usr/bin/time"


def compile_measured(cmd, timeout=600):
    """Runs ember-compile; returns (returncode, stderr, its peak RSS in bytes, seconds).
    The peak comes from GNU time (%M: the child's own ru_maxrss; a child forked straight
    from this Python would count Python's pages too), else from polling the child's VmHWM
    in /proc (the high-water mark since its exec)."""
    print("$", " ".join(cmd), flush=True)
    start = time.monotonic()
    if os.access(GNU_TIME, os.X_OK):
        proc = subprocess.run([GNU_TIME, "-f", "EMBER_MAXRSS_KB=%M"] + cmd,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=timeout)
        lines = proc.stderr.splitlines()
        rss = [int(l.split("=")[1]) * 1024 for l in lines if l.startswith("EMBER_MAXRSS_KB=")]
        err = "\n".join(l for l in lines if not l.startswith("EMBER_MAXRSS_KB="))
        return proc.returncode, err, rss[-1] if rss else 0, time.monotonic() - start
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) * 1024)
        except OSError:
            pass
        if time.monotonic() - start > timeout:
            proc.kill()
        time.sleep(0.02)
    err = proc.stderr.read()
    return proc.returncode, err, peak, time.monotonic() - start


def check_outputs(out_dir, want):
    got = np.load(os.path.join(out_dir, "output_0.npy"))
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
        raise AssertionError(f"outputs in {out_dir} differ from the reference: "
                             f"max |diff| {np.abs(got - want).max() if got.shape == want.shape else got.shape}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("compiler")
    parser.add_argument("runner")
    parser.add_argument("work")
    parser.add_argument("--gb", type=float, default=1.0,
                        help="scale of the large tables (1: 8.6 GB in all)")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    try:
        return run(args)
    finally:
        shutil.rmtree(args.work, ignore_errors=True)


def run(args):
    path, tables, small, inputs, total = build(args.work, args.gb)
    free = shutil.disk_usage(args.work).free
    if free < 2 * total:
        print(f"SKIP: {free / GIB:.1f} GiB free on {args.work}, the model is {total / GIB:.1f} "
              "GiB (a file system without holes would need twice that)")
        return 77
    print(f"model: {total / 1e9:.2f} GB of tables in {path}.data "
          f"({os.stat(path + '.data').st_blocks * 512 / 1e6:.1f} MB on disk)")
    npz = os.path.join(args.work, "inputs.npz")
    np.savez(npz, **inputs)
    want = reference(tables, small, inputs)
    largest_table = max(n * dim * 4 for n, dim, _ in tables.values())
    cases = [
        (1, [], largest_table),
        (4, ["--table-sharding", "big_rows=row_wise", "--table-sharding",
             "big_cols=column_wise", "--table-sharding", "small=table_wise"],
         max(tables["big_rows"][0] * tables["big_rows"][1] * 4 // 4,
             tables["big_cols"][0] * tables["big_cols"][1] * 4 // 4)),
    ]
    for world, sharding, largest_shard in cases:
        plan = os.path.join(args.work, f"w{world}", "big.plan")
        os.makedirs(os.path.dirname(plan))
        cmd = [args.compiler, path, "-o", plan, "--world-size", str(world)] + sharding
        rc, err, rss, seconds = compile_measured(cmd)
        if rc != 0:
            raise AssertionError(f"ember-compile failed ({rc}):\n{err}")
        written = sum(os.stat(os.path.join(os.path.dirname(plan), f)).st_size
                      for f in os.listdir(os.path.dirname(plan)) if f.endswith(".weights"))
        limit = GIB + largest_shard
        print(f"{world} rank(s): ember-compile {seconds:.1f} s, peak RSS {rss / 2**20:.0f} MiB "
              f"(limit {limit / 2**20:.0f} MiB), weights {written / 1e9:.2f} GB "
              f"({written / 1e9 / seconds:.2f} GB/s)", flush=True)
        if rss >= limit:
            raise AssertionError(f"ember-compile's peak RSS {rss} >= 1 GiB + the largest "
                                 f"shard ({limit})")
        if written < total:
            raise AssertionError(f"the weights files hold {written} bytes, less than the "
                                 f"tables' {total}")
        out_dir = os.path.join(args.work, f"w{world}", "out")
        cmd = [args.runner, plan, "--inputs", npz, "--output-dir", out_dir, "--timeout", "300"]
        if world > 1:
            cmd += ["--nproc", str(world)]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise AssertionError(f"ember-run failed ({proc.returncode}):\n{proc.stderr}")
        print(f"{world} rank(s): ember-run {time.monotonic() - start:.1f} s", flush=True)
        check_outputs(out_dir, want)
        shutil.rmtree(os.path.dirname(plan))
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
