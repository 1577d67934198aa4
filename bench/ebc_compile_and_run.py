"""A KJT-fed EmbeddingBagCollection of many tables: export, compile time, and ember-run
latency next to the same module in eager PyTorch, on the same inputs in one run.

usage: PYTHONPATH=compiler/frontends/torch python3 bench/ebc_compile_and_run.py BUILD_BIN_DIR
       [--tables 500] [--batch 256] [--threads 2]

The eager peer is ember.EmbeddingBagCollection (one F.embedding_bag per table, as an unfused
TorchRec EBC does); ember-compile groups the tables into one grouped_embedding_bag.
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

import ember
from ember import EmbeddingBagCollection, EmbeddingBagConfig, KeyedJaggedTensor


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("--tables", type=int, default=500)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ebc = EmbeddingBagCollection([
                EmbeddingBagConfig(f"t{i}", 1000, 16, [f"f{i}"], "sum")
                for i in range(args.tables)])

        def forward(self, kjt):
            return self.ebc(kjt).values()

    model = Model().eval()
    lengths = torch.randint(0, 9, (args.tables * args.batch,))
    values = torch.randint(0, 1000, (int(lengths.sum()),))
    kjt = KeyedJaggedTensor([f"f{i}" for i in range(args.tables)], values, lengths)
    work = tempfile.mkdtemp(prefix="ember-ebc-bench-")
    onnx_path, plan = os.path.join(work, "m.onnx"), os.path.join(work, "m.plan")
    t0 = time.perf_counter()
    ember.export(model, (kjt,), onnx_path)
    t1 = time.perf_counter()
    subprocess.run([os.path.join(args.bin_dir, "ember-compile"), onnx_path, "-o", plan],
                   check=True)
    t2 = time.perf_counter()
    print(f"{args.tables} tables: export {t1 - t0:.2f} s, ember-compile {t2 - t1:.2f} s")
    npz = os.path.join(work, "in.npz")
    np.savez(npz, **{"kjt.values": values.numpy(), "kjt.lengths": lengths.numpy()})
    out = subprocess.run([os.path.join(args.bin_dir, "ember-run"), plan, "--inputs", npz,
                          "--output-dir", os.path.join(work, "out"), "--repeat", "50",
                          "--warmup", "5", "--threads", str(args.threads)],
                         check=True, capture_output=True, text=True)
    print("ember-run:", out.stdout.strip().splitlines()[-1])
    with torch.no_grad():
        for _ in range(3):
            want = model(kjt)
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            want = model(kjt)
            times.append(time.perf_counter() - t0)
    print(f"eager median {1000 * float(np.median(times)):.3f} ms")
    got = np.load(os.path.join(work, "out", "output_0.npy"))
    print("max abs difference", float(np.abs(got - want.numpy()).max()))


if __name__ == "__main__":
    main()
