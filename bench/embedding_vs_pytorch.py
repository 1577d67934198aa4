#!/usr/bin/python3
"""Ember's CPU embedding_bag against PyTorch's F.embedding_bag, same inputs.

Run with /usr/bin/python3 (torch 1.13 CPU, numpy):

    /usr/bin/python3 bench/embedding_vs_pytorch.py --build build/r2a

It writes one float32 table, int64 ids and offsets (fixed seed) to a
temporary directory, times torch.nn.functional.embedding_bag on them with
torch.set_num_threads(1) and (2), runs bench/embedding_driver.cpp's
ember_embedding_driver on the very same files with 1 and 2 threads (both
read a 64 MiB buffer before every timed run, so rows never come from the
previous run's caches), checks that both produce the same pooled output,
measures the machine's streaming-read bandwidth with bench_stream_read next
to each measurement, and prints per thread count:
PyTorch and Ember times, the speed-up, Ember's useful bandwidth (rows read +
output written) and its share of the streaming-read bandwidth.

Exit status: 0 on success, 1 when a tool fails or the outputs differ.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build/release", help="Ember build directory")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--batch", type=int, default=2048)
    p.add_argument("--pooling-factor", type=int, default=20, help="ids per bag")
    p.add_argument("--mode", default="sum", choices=["sum", "mean", "max"])
    p.add_argument("--threads", default="1,2")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--hugepages", action="store_true",
                   help="also run Ember with the table in transparent huge pages")
    return p.parse_args()


def tool(build, name):
    path = os.path.join(build, "bin", name)
    if not os.access(path, os.X_OK):
        sys.exit(f"embedding_vs_pytorch: {path} not found: build the target {name} first")
    return path


FLUSH_MIB = 64  # read before every timed run: twice this machine's 32 MiB L3


def time_torch(weight, ids, offsets, mode, threads, iters):
    torch.set_num_threads(threads)
    out = F.embedding_bag(ids, weight, offsets, mode=mode, include_last_offset=True)
    flush = np.ones(FLUSH_MIB << 17, dtype=np.uint64)
    times = []
    for _ in range(iters):
        flush.sum()  # evicts the previous run's rows (not timed)
        start = time.perf_counter()
        out = F.embedding_bag(ids, weight, offsets, mode=mode, include_last_offset=True)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[0], times[len(times) // 2], out.numpy()


def run_ember(driver, files, args, threads, hugepages):
    cmd = [driver, "--table", files["table"], "--rows", str(args.rows), "--dim", str(args.dim),
           "--dtype", "float32", "--indices", files["ids"], "--offsets", files["offsets"],
           "--pooling", args.mode, "--threads", str(threads), "--iters", str(args.iters),
           "--out", files["out"], "--hugepages", "1" if hugepages else "0",
           "--flush-mib", str(FLUSH_MIB)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"embedding_vs_pytorch: {' '.join(cmd)} failed:\n{r.stderr}")
    m = re.search(r"best_s=([0-9.]+) median_s=([0-9.]+)", r.stdout)
    if not m:
        sys.exit(f"embedding_vs_pytorch: unexpected driver output: {r.stdout}")
    out = np.fromfile(files["out"], dtype=np.float32).reshape(args.batch, args.dim)
    return float(m.group(1)), float(m.group(2)), out


def stream_read(build, threads, passes):
    """Streaming-read bandwidth (GB/s) with exactly `threads` threads."""
    r = subprocess.run([tool(build, "bench_stream_read"), "--mib", "1024", "--threads",
                        str(threads), "--passes", str(passes)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"embedding_vs_pytorch: bench_stream_read failed:\n{r.stderr}")
    found = dict(re.findall(r"threads=(\d+) mib=\d+ best_gbps=([0-9.]+)", r.stdout))
    if str(threads) not in found:
        sys.exit(f"embedding_vs_pytorch: unexpected bench_stream_read output: {r.stdout}")
    return float(found[str(threads)])


def main():
    args = parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    driver = tool(args.build, "ember_embedding_driver")
    rng = np.random.default_rng(args.seed)
    n = args.batch * args.pooling_factor
    table = rng.uniform(-1.0, 1.0, size=(args.rows, args.dim)).astype(np.float32)
    ids = rng.integers(0, args.rows, size=n, dtype=np.int64)
    offsets = np.arange(0, n + 1, args.pooling_factor, dtype=np.int64)
    useful_bytes = n * args.dim * 4 + args.batch * args.dim * 4

    with tempfile.TemporaryDirectory(prefix="ember_bench_") as tmp:
        files = {k: os.path.join(tmp, k + ".bin") for k in ("table", "ids", "offsets", "out")}
        table.tofile(files["table"])
        ids.tofile(files["ids"])
        offsets.tofile(files["offsets"])
        weight = torch.from_numpy(table)
        tids, toffsets = torch.from_numpy(ids), torch.from_numpy(offsets)

        print(f"embedding_bag mode={args.mode} rows={args.rows} dim={args.dim} "
              f"batch={args.batch} L={args.pooling_factor} float32, torch {torch.__version__}")
        print(f"{'threads':>7} {'torch ms':>9} {'ember ms':>9} {'speed-up':>8} "
              f"{'ember GB/s':>10} {'stream GB/s':>11} {'% stream':>8}  ember table memory")
        ok = True
        for t in threads:
            t_best, _, t_out = time_torch(weight, tids, toffsets, args.mode, t, args.iters)
            # Measured next to the lookups: the machine may be shared.
            bw = stream_read(args.build, t, 3)
            variants = [False] + ([True] if args.hugepages else [])
            for huge in variants:
                e_best, _, e_out = run_ember(driver, files, args, t, huge)
                if not np.allclose(e_out, t_out, rtol=1e-4, atol=1e-4):
                    worst = np.max(np.abs(e_out - t_out))
                    print(f"MISMATCH with {t} threads: max abs difference {worst}")
                    ok = False
                gbps = useful_bytes / e_best / 1e9
                print(f"{t:>7} {t_best * 1e3:>9.2f} {e_best * 1e3:>9.2f} "
                      f"{t_best / e_best:>7.2f}x {gbps:>10.2f} {bw:>11.2f} "
                      f"{100 * gbps / bw:>7.1f}%  {'huge pages' if huge else '4 KiB pages'}")
        print("(best of", args.iters, "runs each; GB = 1e9 bytes; useful bytes = rows read + "
              "output written)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
