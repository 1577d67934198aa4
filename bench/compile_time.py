"""Compile time of ember-compile on a model with many nn.EmbeddingBag tables.

usage: compile_time.py --build DIR [--tables 500] [--rows 1000] [--dim 16]
                       [--repeat 3] [--workdir DIR] [--max-batch N] [--reuse]

Builds a model with TABLES nn.EmbeddingBag(mode="sum") tables (each with its
own ids/offsets inputs), their pooled outputs concatenated and fed to a
Linear + Sigmoid, exports it with torch.onnx.export (one Loop per bag, as
torch 1.13 emits them) during the run, then times DIR/bin/ember-compile on
it REPEAT times (wall clock, the whole process: ONNX load + checker, import,
passes, plan emission, weights file). Prints the export time, every compile
time and the median, the plan's instruction count, and checks that the plan
runs (ember-run, batch 4) and matches torch eager (rtol 1e-5). Finally
prints ember-compile's own phase times (--mlir-timing: import incl. the ONNX
checker, each pass, plan emission). --reuse keeps WORKDIR/model.onnx from an
earlier run with the same options (torch 1.13's export of 500 bags takes
minutes: its time grows about quadratically with the number of Loops).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as e:  # pragma: no cover
    print("SKIP: needs numpy and torch:", e)
    sys.exit(77)


class ManyBags(nn.Module):
    def __init__(self, tables, rows, dim):
        super().__init__()
        self.tables = nn.ModuleList(
            nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(tables))
        self.top = nn.Linear(tables * dim, 1)

    def forward(self, *args):
        pooled = [t(args[2 * i], args[2 * i + 1])
                  for i, t in enumerate(self.tables)]
        return torch.sigmoid(self.top(torch.cat(pooled, dim=1)))


def make_inputs(tables, rows, batch, gen):
    inputs = []
    for _ in range(tables):
        lengths = torch.randint(0, 4, (batch,), generator=gen)
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64),
                             torch.cumsum(lengths, 0)[:-1]])
        ids = torch.randint(0, rows, (int(lengths.sum()),), generator=gen)
        inputs += [ids, offsets]
    return inputs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--tables", type=int, default=500)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-batch", type=int, default=0)
    parser.add_argument("--workdir")
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="ember-compile-time-")
    os.makedirs(work, exist_ok=True)
    compiler = os.path.join(args.build, "bin", "ember-compile")
    runner = os.path.join(args.build, "bin", "ember-run")

    torch.manual_seed(0)
    model = ManyBags(args.tables, args.rows, args.dim).eval()
    names = []
    dynamic = {"prob": {0: "batch"}}
    for t in range(args.tables):
        names += ["ids%d" % t, "offsets%d" % t]
        dynamic["ids%d" % t] = {0: "n%d" % t}
        dynamic["offsets%d" % t] = {0: "batch"}
    gen = torch.Generator().manual_seed(1)
    example = make_inputs(args.tables, args.rows, 2, gen)
    onnx_path = os.path.join(work, "model.onnx")
    start = time.perf_counter()
    reused = args.reuse and os.path.isfile(onnx_path)
    if not reused:
        with torch.no_grad():
            torch.onnx.export(model, tuple(example), onnx_path,
                              input_names=names, output_names=["prob"],
                              opset_version=17, dynamic_axes=dynamic)
    export_s = time.perf_counter() - start
    print("model: %d EmbeddingBag tables (%d x %d), ONNX %.1f MiB, %s"
          % (args.tables, args.rows, args.dim,
             os.path.getsize(onnx_path) / 2**20,
             "reused" if reused else "torch.onnx.export %.1f s" % export_s))

    plan = os.path.join(work, "model.plan")
    cmd = [compiler, onnx_path, "-o", plan, "--memory-stats"]
    if args.max_batch:
        cmd += ["--max-batch", str(args.max_batch)]
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            print("FAIL: ember-compile failed:\n" + proc.stderr)
            return 1
    print(proc.stderr.strip())
    print("ember-compile: %s s; median %.3f s"
          % (", ".join("%.3f" % t for t in times), statistics.median(times)))

    # The plan must run and agree with torch.
    inputs = make_inputs(args.tables, args.rows, 4, gen)
    with torch.no_grad():
        expected = model(*inputs).numpy()
    run_cmd = [runner, plan, "--output-dir", os.path.join(work, "out")]
    for name, value in zip(names, inputs):
        path = os.path.join(work, name + ".npy")
        np.save(path, value.numpy())
        run_cmd += ["--input", "%s=%s" % (name, path)]
    proc = subprocess.run(run_cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        print("FAIL: ember-run failed:\n" + proc.stderr)
        return 1
    got = np.load(os.path.join(work, "out", "prob.npy"))
    if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        print("FAIL: the plan's output differs from torch eager")
        return 1
    print("plan output matches torch eager (batch 4, %d predictions)"
          % got.size)
    proc = subprocess.run(cmd + ["--mlir-timing"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    print("\n".join(l for l in proc.stderr.splitlines()
                    if "(" in l and "%" in l))
    return 0


if __name__ == "__main__":
    sys.exit(main())
