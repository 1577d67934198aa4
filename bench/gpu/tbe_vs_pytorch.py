#!/usr/bin/python3
"""Ember's CUDA TBE forward against PyTorch's F.embedding_bag, same GPU, same inputs.

    python3 bench/gpu/tbe_vs_pytorch.py --build build/release            # FBGEMM shape
    python3 bench/gpu/tbe_vs_pytorch.py --build build/release --dim 128 --format fp32

It draws T x B x L uniform random int64 ids with a fixed seed (table-major:
the B bags of table 0 first, each of L ids), writes them to a temporary file,
fills T tables of R x D on the GPU with a fixed pattern (the one
ember_tbe_bench --table-pattern uses, exact in float16), times
torch.nn.functional.embedding_bag(mode="sum") over the T tables (one call per
table, PyTorch has no table-batched lookup; the concatenation into one
[B, T * D] output is not timed), then runs ember_tbe_bench on the very same
ids and table values (one launch for all tables; output float16 for float16
tables, as PyTorch's, float32 otherwise), checks that both outputs agree and
prints both times, the ratio PyTorch / Ember (> 1: Ember is faster), the
useful bandwidth of each (rows read + output written) and the device memcpy
bandwidth ember_tbe_bench measured next to it.

Exit status: 0 on success, 1 when a tool fails or the outputs differ, 2
without a GPU ("no GPU: ...").
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build/release", help="Ember build directory")
    p.add_argument("--tables", type=int, default=2)
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--dim", type=int, default=192)
    p.add_argument("--batch", type=int, default=65536)
    p.add_argument("--bag", type=int, default=32, help="ids per bag")
    p.add_argument("--format", default="fp16", choices=["fp16", "fp32"])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=2026)
    return p.parse_args()


def pattern_table(torch, t, rows, dim, dtype, device):
    """Row r, column d of table t: ((131 r + 7 d + 977 t) mod 2003 - 1001) / 1024."""
    w = torch.empty((rows, dim), dtype=dtype, device=device)
    cols = torch.arange(dim, device=device, dtype=torch.int64)[None, :] * 7 + t * 977
    step = max(1, (1 << 24) // dim)
    for start in range(0, rows, step):
        end = min(rows, start + step)
        r = torch.arange(start, end, device=device, dtype=torch.int64)[:, None] * 131
        w[start:end] = (((r + cols) % 2003 - 1001).to(torch.float32) / 1024.0).to(dtype)
    return w


def main():
    args = parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"no GPU: PyTorch is not importable ({e})")
        return 2
    if not torch.cuda.is_available():
        print("no GPU: torch.cuda.is_available() is False")
        return 2
    bench = os.path.join(args.build, "bin", "ember_tbe_bench")
    if not os.access(bench, os.X_OK):
        print(f"error: {bench} not found: build the target ember_tbe_bench "
              "(a CUDA build) first", file=sys.stderr)
        return 1

    T, R, D, B, L = args.tables, args.rows, args.dim, args.batch, args.bag
    dtype = torch.float16 if args.format == "fp16" else torch.float32
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(args.seed)
    ids = torch.randint(0, R, (T, B, L), generator=gen, dtype=torch.int64)

    with tempfile.TemporaryDirectory() as tmp:
        ids_path = os.path.join(tmp, "ids.bin")
        out_path = os.path.join(tmp, "ember_out.bin")
        ids.numpy().tofile(ids_path)

        # PyTorch: one embedding_bag per table.
        weights = [pattern_table(torch, t, R, D, dtype, dev) for t in range(T)]
        ids_dev = [ids[t].reshape(-1).to(dev) for t in range(T)]
        offsets = torch.arange(0, B * L, L, dtype=torch.int64, device=dev)

        def forward():
            return [F.embedding_bag(ids_dev[t], weights[t], offsets, mode="sum")
                    for t in range(T)]

        for _ in range(args.warmup):
            forward()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.iters):
            forward()
        stop.record()
        torch.cuda.synchronize()
        torch_ms = start.elapsed_time(stop) / args.iters
        torch_out = torch.cat(forward(), dim=1).float().cpu().numpy()
        del weights, ids_dev, offsets
        torch.cuda.empty_cache()

        cmd = [bench, "--tables", str(T), "--rows", str(R), "--dim", str(D),
               "--batch", str(B), "--bag", str(L), "--format", args.format,
               "--output", args.format, "--iters", str(args.iters),
               "--warmup", str(args.warmup), "--ids-file", ids_path,
               "--table-pattern", "--output-file", out_path]
        run = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(run.stdout)
        if run.returncode == 2:
            return 2
        if run.returncode != 0:
            print(f"error: {' '.join(cmd)} failed:\n{run.stderr}", file=sys.stderr)
            return 1
        m = re.search(r"time_ms=([0-9.]+) useful_GBps=([0-9.]+) memcpy_GBps=([0-9.]+)",
                      run.stdout)
        if not m:
            print("error: cannot parse ember_tbe_bench's output", file=sys.stderr)
            return 1
        ember_ms, ember_gbps, memcpy_gbps = (float(x) for x in m.groups())
        ember_out = np.fromfile(out_path, dtype=np.float32).reshape(B, T * D)

    diff = np.abs(ember_out - torch_out)
    tol = (2e-2 if args.format == "fp16" else 1e-4) * np.maximum(1.0, np.abs(torch_out))
    bad = int((diff > tol).sum())
    row_bytes = D * (2 if args.format == "fp16" else 4)
    useful = T * B * L * row_bytes + B * T * D * (2 if args.format == "fp16" else 4)
    torch_gbps = useful / (torch_ms * 1e-3) / 1e9
    print(f"shape: tables={T} rows={R} dim={D} batch={B} bag={L} format={args.format}")
    print(f"pytorch F.embedding_bag x{T}: {torch_ms:.4f} ms  useful {torch_gbps:.1f} GB/s")
    print(f"ember TBE forward (1 launch): {ember_ms:.4f} ms  useful {ember_gbps:.1f} GB/s"
          f"  ({ember_gbps / memcpy_gbps:.3f} of memcpy {memcpy_gbps:.1f} GB/s)")
    print(f"ratio pytorch/ember: {torch_ms / ember_ms:.2f}")
    print(f"outputs: max |diff| {diff.max():.3g}, {bad} elements outside tolerance")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
