"""Compares ember-run's output and latency with torch eager on the same inputs.

usage: compare.py WORKDIR [--threads T] [--repeat N] [--warmup K] [--seed S]
                  [--device cpu|cuda[:N]] [--compile MODE]
reads WORKDIR/inputs.npz, WORKDIR/expected.npy (written by export.py),
WORKDIR/arch.json (the model), WORKDIR/out/prob.npy and WORKDIR/latency.json (written by ember-run
--output-dir WORKDIR/out --report-json WORKDIR/latency.json); checks the
outputs (rtol 1e-5, atol 1e-6), times torch eager (torch.no_grad, median of
N runs after K warmups, T threads; 0 = one per core like ember-run) and
prints the ratio of the medians. Exits 1 when the outputs differ.
With --device cuda, torch runs on the GPU and each timed run includes what
ember-run's does: the inputs copied to the device and the output back.
--compile MODE also times torch.compile(model, mode=MODE) the same way
(its compilation happens in the warmup runs and is not timed).
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export import INPUT_NAMES, build_model  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("workdir")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--compile", metavar="MODE", default=None,
                        help="also time torch.compile(model, mode=MODE), e.g. "
                        "default, reduce-overhead or max-autotune")
    args = parser.parse_args()
    device = torch.device(args.device)
    work = args.workdir

    got = np.load(os.path.join(work, "out", "prob.npy"))
    want = np.load(os.path.join(work, "expected.npy"))
    if got.shape != want.shape:
        print("FAIL: ember output %s, torch %s" % (got.shape, want.shape))
        return 1
    diff = float(np.max(np.abs(got - want))) if want.size else 0.0
    ok = np.allclose(got, want, rtol=1e-5, atol=1e-6)
    print("outputs %s: max abs difference %.3g over %d predictions"
          % ("match" if ok else "DIFFER", diff, want.size))
    print("ember predictions[:8] =",
          np.array2string(got.reshape(-1)[:8], precision=4))
    print("torch predictions[:8] =",
          np.array2string(want.reshape(-1)[:8], precision=4))
    if not ok:
        return 1

    threads = args.threads if args.threads > 0 else os.cpu_count()
    torch.set_num_threads(threads)
    arch = {"arch": "dlrm", "low_rank": 0, "seed": args.seed}
    arch_file = os.path.join(work, "arch.json")
    if os.path.exists(arch_file):
        with open(arch_file) as f:
            arch.update(json.load(f))
    model = build_model(arch["seed"], arch["arch"], arch["low_rank"])
    model = model.to(device)
    if device.type == "cuda":
        # fp32 GEMMs as Ember's (no TF32).
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    with np.load(os.path.join(work, "inputs.npz")) as npz:
        inputs = [torch.from_numpy(npz[n]) for n in INPUT_NAMES]
    def median_ms(fn):
        times = []
        with torch.no_grad():
            for i in range(args.warmup + args.repeat):
                start = time.perf_counter()
                if device.type == "cuda":
                    out = fn(*[t.to(device, non_blocking=False) for t in inputs])
                    out.cpu()  # synchronizes
                else:
                    fn(*inputs)
                if i >= args.warmup:
                    times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)

    torch_ms = median_ms(model)
    with open(os.path.join(work, "latency.json")) as f:
        ember_ms = json.load(f)["latency_ms"]["median"]
    batch = want.shape[0]
    where = ("%d thread(s)" % threads if device.type == "cpu"
             else "%s, %s" % (device, torch.cuda.get_device_name(device)))
    print("median latency, batch %d, %s: ember %.3f ms, torch eager "
          "%.3f ms; ember/torch = %.2f"
          % (batch, where, ember_ms, torch_ms, ember_ms / torch_ms))
    if args.compile:
        compiled = torch.compile(model, mode=args.compile, dynamic=False)
        compiled_ms = median_ms(compiled)
        print("median latency, batch %d, %s: ember %.3f ms, torch.compile "
              "(mode %s) %.3f ms; ember/torch.compile = %.2f"
              % (batch, where, ember_ms, args.compile, compiled_ms,
                 ember_ms / compiled_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
