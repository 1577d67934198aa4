#!/usr/bin/env python3
"""The predicted timeline of a DLRM-DCNv2-sized model on 8, 64 and 512 simulated H100s.

usage: timeline_at_scale.py [--ember-compile PATH] [--work DIR] [--ranks 8,64,512]
                            [--batch-per-rank B] [--keep] [--markdown]

The model (MLPerf DLRM-DCNv2's shapes): 26 nn.EmbeddingBag(sum) tables of dim 128 with
MLPerf's Criteo 1TB cardinalities capped at 40M rows (5 tables of 40M, 105 GB of f32
weights in all) and its multi-hot sizes as the ids per bag (1 to 100); bottom MLP
13-512-256-128; 3 DCN-v2 cross layers of rank 512 over the 27 x 128 = 3456 features;
top MLP 1024-1024-512-256-1. ember.export writes it with tiny tables at a static batch
(every id list has its real length, B x L), then the tables are pointed at one sparse
external data file of their real size (holes: no disk, no time; ember-compile maps it
and never reads it for --emit timeline).

For each world size: `ember-compile --emit timeline --target cuda --ranks-per-node 8`
(the planner's H100 topology: HBM 3.35 TB/s, NVLink 450 GB/s, 400 Gb/s per GPU) with the
communication stream (the CUDA default) and without it (--comm-stream=false), summed up
by scripts/ember-trace-summary.py; the table gives per configuration the predicted step,
comm and exposed comm (the largest over the ranks), and ember-compile's time and peak
RSS (--max-rss-gb fails the run above a bound: the tables must never be read). Needs
torch and onnx (Debian's python3-torch is enough); exits 77 without them.
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "compiler", "frontends", "torch"))

# MLPerf DLRM-DCNv2 (Criteo 1TB multi-hot): rows capped at 40M, and ids per bag.
CARDINALITIES = [40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000,
                 3067956, 405282, 10, 2209, 11938, 155, 4, 976, 14, 40000000, 40000000,
                 40000000, 590152, 12973, 108, 36]
MULTI_HOT = [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3,
             1, 1]
DIM = 128
NUM_DENSE = 13
BOTTOM = [NUM_DENSE, 512, 256, DIM]
TOP = [1024, 1024, 512, 256, 1]
CROSS_LAYERS, CROSS_RANK = 3, 512


def build_model(work, batch):
    """The .onnx (static batch `batch`) and its sparse data file; returns the path."""
    import numpy as np  # noqa: F401 (onnx needs it)
    import onnx
    import torch
    from torch import nn
    import ember

    def mlp(sizes, final_sigmoid=False):
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            last = i == len(sizes) - 2
            layers.append(nn.Sigmoid() if last and final_sigmoid else nn.ReLU())
        return nn.Sequential(*layers)

    width = DIM * (len(CARDINALITIES) + 1)

    class DCNv2(nn.Module):
        def __init__(self):
            super().__init__()
            self.tables = nn.ModuleList(nn.EmbeddingBag(8, DIM, mode="sum")
                                        for _ in CARDINALITIES)
            self.bottom = mlp(BOTTOM)
            self.cross_v = nn.ModuleList(nn.Linear(width, CROSS_RANK, bias=False)
                                         for _ in range(CROSS_LAYERS))
            self.cross_u = nn.ModuleList(nn.Linear(CROSS_RANK, width)
                                         for _ in range(CROSS_LAYERS))
            self.top = mlp([width] + TOP, final_sigmoid=True)

        def dcn(self, dense, sparse):
            x = self.bottom(dense)
            pooled = [self.tables[t](sparse[2 * t], sparse[2 * t + 1])
                      for t in range(len(CARDINALITIES))]
            x0 = torch.cat([x] + pooled, dim=1)
            xl = x0
            for i in range(CROSS_LAYERS):
                xl = x0 * self.cross_u[i](self.cross_v[i](xl)) + xl
            return self.top(xl)

    # torch.fx traces named arguments only: forward(dense, ids0, offsets0, ...).
    names = []
    for t in range(len(CARDINALITIES)):
        names += ["ids%d" % t, "offsets%d" % t]
    scope = {}
    exec("def forward(self, dense, %s):\n    return self.dcn(dense, [%s])\n"
         % (", ".join(names), ", ".join(names)), scope)
    DCNv2.forward = scope["forward"]

    torch.manual_seed(0)
    model = DCNv2().eval()
    example = [torch.zeros(batch, NUM_DENSE)]
    for hot in MULTI_HOT:
        example.append(torch.zeros(batch * hot, dtype=torch.int64))
        example.append(torch.arange(0, batch * hot, hot, dtype=torch.int64))
    path = os.path.join(work, "dcnv2.onnx")
    ember.export(model, tuple(example), path, dynamic_batch=False, external_data=False)
    proto = onnx.load(path)
    data_name = "dcnv2.onnx.data"
    offset = 0
    for t, rows in enumerate(CARDINALITIES):
        tensor = [i for i in proto.graph.initializer if i.name == f"tables.{t}.weight"][0]
        del tensor.dims[:]
        tensor.dims.extend([rows, DIM])
        tensor.ClearField("raw_data")
        tensor.data_location = onnx.TensorProto.EXTERNAL
        for key, value in (("location", data_name), ("offset", str(offset)),
                           ("length", str(rows * DIM * 4))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        offset += rows * DIM * 4
    with open(os.path.join(work, data_name), "wb") as f:
        f.truncate(offset)  # all holes
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())
    return path, offset


def compile_timeline(compiler, model, out, ranks, batch, comm_stream):
    """Runs ember-compile --emit timeline; returns (seconds, peak RSS bytes)."""
    cmd = [compiler, model, "-o", out, "--emit", "timeline", "--target", "cuda",
           "--world-size", str(ranks), "--ranks-per-node", "8",
           "--batch-per-rank", str(batch), "--skip-onnx-checker", "--quiet",
           "--comm-stream=%s" % ("true" if comm_stream else "false")]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    err = proc.stderr.read()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd), code, err))
    return seconds, usage.ru_maxrss * 1024


def summarize(trace):
    """The summary script's per-rank figures, largest over the ranks (us)."""
    script = os.path.join(ROOT, "scripts", "ember-trace-summary.py")
    out = subprocess.run([sys.executable, script, trace, "--json"], check=True,
                         capture_output=True, text=True).stdout
    ranks = json.loads(out)["ranks"]
    return {key: max(r[key] for r in ranks)
            for key in ("compute_us", "comm_us", "exposed_comm_us", "step_us")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ember-compile",
                        default=os.path.join(ROOT, "build", "release", "bin",
                                             "ember-compile"))
    parser.add_argument("--work", help="directory for the model and traces "
                                       "(default: a temporary one, removed)")
    parser.add_argument("--ranks", default="8,64,512")
    parser.add_argument("--batch-per-rank", type=int, default=8192)
    parser.add_argument("--keep", action="store_true",
                        help="keep the work directory")
    parser.add_argument("--max-rss-gb", type=float,
                        help="fail (exit 1) when an ember-compile's peak RSS exceeds "
                             "this: the tables (104.5 GB) must never be read")
    parser.add_argument("--build-model-only", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_model_only:
        # In a process of its own, so that ember-compile, forked from this
        # small one, reports its own peak RSS and not torch's.
        path, data_bytes = build_model(args.work, args.batch_per_rank)
        print(json.dumps({"model": path, "data_bytes": data_bytes}))
        return 0
    try:
        world_sizes = [int(r) for r in args.ranks.split(",")]
    except ValueError:
        parser.error("--ranks takes a comma-separated list of integers")
    if any(w < 1 for w in world_sizes) or args.batch_per_rank < 1:
        parser.error("world sizes and the batch must be positive")
    if args.max_rss_gb is not None and not args.max_rss_gb > 0:
        parser.error("--max-rss-gb must be positive")
    if not os.access(args.ember_compile, os.X_OK):
        parser.error("no ember-compile at %s" % args.ember_compile)
    missing = [m for m in ("onnx", "torch") if importlib.util.find_spec(m) is None]
    if missing:
        print("SKIP: needs torch and onnx (missing: %s)" % ", ".join(missing))
        return 77
    work = args.work or tempfile.mkdtemp(prefix="ember-timeline-scale-")
    os.makedirs(work, exist_ok=True)
    try:
        built = subprocess.run([sys.executable, os.path.abspath(__file__),
                                "--build-model-only", "--work", work,
                                "--batch-per-rank", str(args.batch_per_rank)],
                               check=True, stdout=subprocess.PIPE, text=True)
        built = json.loads(built.stdout.strip().splitlines()[-1])
        model, data_bytes = built["model"], built["data_bytes"]
        print("model: 26 tables (%.1f GB of f32 weights, sparse), batch %d per rank, "
              "ids per bag %s" % (data_bytes / 1e9, args.batch_per_rank, MULTI_HOT))
        print("| ranks | comm stream | step ms | comm ms | exposed comm ms | compute ms "
              "| ember-compile s | peak RSS GB |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        for ranks in world_sizes:
            for streams in (False, True):
                trace = os.path.join(work, "timeline_%d_%s.json"
                                     % (ranks, "streams" if streams else "order"))
                seconds, rss = compile_timeline(args.ember_compile, model, trace, ranks,
                                                args.batch_per_rank, streams)
                f = summarize(trace)
                print("| %d | %s | %.3f | %.3f | %.3f | %.3f | %.1f | %.2f |"
                      % (ranks, "on" if streams else "off", f["step_us"] / 1e3,
                         f["comm_us"] / 1e3, f["exposed_comm_us"] / 1e3,
                         f["compute_us"] / 1e3, seconds, rss / 1e9), flush=True)
                if args.max_rss_gb is not None and rss / 1e9 > args.max_rss_gb:
                    print("FAIL: ember-compile's peak RSS %.2f GB exceeds --max-rss-gb %g"
                          % (rss / 1e9, args.max_rss_gb))
                    return 1
    finally:
        if args.keep:
            print("work directory kept:", work)
        elif not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
