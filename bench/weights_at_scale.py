"""Weights at scale (issue 17): ember-compile's peak RSS and weight-writing rate on models
of GB-sized embedding tables held as ONNX external data, next to the raw write bandwidth
of the same disk (dd with fsync) in the same run.

usage: python3 bench/weights_at_scale.py [--work DIR] [--random-gb 3] [--sparse-gb 8.6]
           [--compiler build/release/bin/ember-compile]

Models (the two-large-tables model of tests/e2e/large/weights_at_scale_test.py, scaled):
  random  tables of random f32 (every byte real data: the writer moves it all and the
          fsync puts it on disk), compiled for 1 rank and for 4 ranks (one table row-wise,
          the other column-wise)
  sparse  8.6 GB of zeros but a few rows (a sparse data file: holes are detected and
          kept as holes), 1 and 4 ranks
For each: wall time of ember-compile, its peak RSS (GNU time %M), the bytes of the weights
files and bytes / second. dd writes as many bytes as the random model's tables, 16 MiB
blocks, conv=fsync. Files live under --work (default: a directory beside the build) and
are removed at the end.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e", "large"))
sys.path.insert(0, os.path.join(REPO, "compiler", "frontends", "torch"))
import weights_at_scale_test as model_builder  # noqa: E402

FULL_BYTES = sum(rows * dim * 4 for _, rows, dim in model_builder.BIG)


def fill_random(path, nbytes):
    """Overwrites the first nbytes of the data file with random f32 (small values)."""
    rng = np.random.default_rng(1)
    chunk = 64 << 20
    with open(path, "r+b") as f:
        for start in range(0, nbytes, chunk):
            n = min(chunk, nbytes - start) // 4
            f.write((rng.standard_normal(n, dtype=np.float32) * 0.01).tobytes())
        f.flush()
        os.fsync(f.fileno())


def dd_rate(directory, nbytes):
    path = os.path.join(directory, "dd.out")
    blocks = max(1, nbytes // (16 << 20))
    start = time.monotonic()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=16M", f"count={blocks}",
                    "conv=fsync"], check=True, capture_output=True)
    seconds = time.monotonic() - start
    os.unlink(path)
    return blocks * (16 << 20), seconds


def compile_case(compiler, onnx_path, world, outdir):
    os.makedirs(outdir)
    plan = os.path.join(outdir, "m.plan")
    cmd = [compiler, onnx_path, "-o", plan, "--world-size", str(world)]
    if world > 1:
        cmd += ["--table-sharding", "big_rows=row_wise", "--table-sharding",
                "big_cols=column_wise", "--table-sharding", "small=table_wise"]
    rc, err, rss, seconds = model_builder.compile_measured(cmd)
    if rc != 0:
        raise SystemExit(f"ember-compile failed:\n{err}")
    files = [os.path.join(outdir, f) for f in os.listdir(outdir) if f.endswith(".weights")]
    written = sum(os.stat(f).st_size for f in files)
    on_disk = sum(os.stat(f).st_blocks * 512 for f in files)
    shutil.rmtree(outdir)
    return seconds, rss, written, on_disk


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default=os.path.join(REPO, "build", "bench_weights_at_scale"))
    parser.add_argument("--random-gb", type=float, default=3.0)
    parser.add_argument("--sparse-gb", type=float, default=FULL_BYTES / 1e9)
    parser.add_argument("--compiler", default=os.path.join(REPO, "build", "release", "bin",
                                                           "ember-compile"))
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    try:
        rows = []
        for kind, gb in (("random", args.random_gb), ("sparse", args.sparse_gb)):
            directory = os.path.join(args.work, kind)
            os.makedirs(directory)
            path, _, _, _, total = model_builder.build(directory, gb * 1e9 / FULL_BYTES)
            if kind == "random":
                fill_random(path + ".data", total)
                dd_bytes, dd_seconds = dd_rate(directory, total)
            for world in (1, 4):
                seconds, rss, written, on_disk = compile_case(
                    args.compiler, path, world, os.path.join(directory, f"w{world}"))
                rows.append((kind, total, world, seconds, rss, written, on_disk))
            shutil.rmtree(directory)
        print(f"dd if=/dev/zero bs=16M conv=fsync: {dd_bytes / 1e9:.2f} GB in {dd_seconds:.2f} s "
              f"= {dd_bytes / 1e9 / dd_seconds:.2f} GB/s")
        print(f"{'model':8} {'tables GB':>9} {'ranks':>5} {'compile s':>9} {'peak RSS MiB':>12} "
              f"{'written GB':>10} {'on disk GB':>10} {'GB/s':>6}")
        for kind, total, world, seconds, rss, written, on_disk in rows:
            print(f"{kind:8} {total / 1e9:9.2f} {world:5d} {seconds:9.2f} {rss / 2**20:12.0f} "
                  f"{written / 1e9:10.2f} {on_disk / 1e9:10.2f} {written / 1e9 / seconds:6.2f}")
    finally:
        shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
