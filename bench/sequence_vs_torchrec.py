"""A TorchRec EmbeddingCollection (sequence embeddings) model: ember-run next to TorchRec
eager and torch.compile of the same module, on the same inputs, in one run.

usage: PYTHONPATH=compiler/frontends/torch build/torchrec-venv/bin/python \\
           bench/sequence_vs_torchrec.py BUILD_BIN_DIR [--batch 512] [--threads 1]
           [--rows 100000] [--dim 64] [--max-len 40] [--pad 32] [--repeat 50]

Model: 4 sequence features over 2 tables (rows x dim, two features share a table), each
feature's rows padded / truncated to --pad by JaggedTensor.to_padded_dense, mean over the
sequence, concatenated into an MLP (4*dim -> 256 -> 1). Sequence lengths are uniform in
[0, --max-len]. The outputs are checked against eager (rtol 1e-4) before timing. Prints the
median latency of each side and Ember's speed-up; torch.compile is skipped (with its error)
when dynamo cannot compile the TorchRec module.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

import ember
from torchrec import EmbeddingCollection, EmbeddingConfig, KeyedJaggedTensor

KEYS = ["hist", "query", "cat", "tag"]


class SequenceModel(nn.Module):
    def __init__(self, rows, dim, pad):
        super().__init__()
        self.pad = pad
        self.ec = EmbeddingCollection(tables=[
            EmbeddingConfig(name="t_text", embedding_dim=dim, num_embeddings=rows,
                            feature_names=["hist", "query"]),
            EmbeddingConfig(name="t_meta", embedding_dim=dim, num_embeddings=rows,
                            feature_names=["cat", "tag"]),
        ], device=torch.device("cpu"))
        self.mlp = nn.Sequential(nn.Linear(4 * dim, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, kjt):
        seqs = self.ec(kjt)
        pooled = [seqs[k].to_padded_dense(desired_length=self.pad).mean(1) for k in KEYS]
        return self.mlp(torch.cat(pooled, dim=1))


def make_kjt(batch, rows, max_len, seed):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, max_len + 1, (len(KEYS) * batch,), generator=g)
    values = torch.randint(0, rows, (int(lengths.sum()),), generator=g)
    return KeyedJaggedTensor.from_lengths_sync(keys=KEYS, values=values, lengths=lengths)


def median_ms(fn, repeat, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--max-len", type=int, default=40)
    ap.add_argument("--pad", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = SequenceModel(args.rows, args.dim, args.pad).eval()
    kjt = make_kjt(args.batch, args.rows, args.max_len, seed=1)
    work = tempfile.mkdtemp(prefix="ember-seq-bench-")
    onnx_path, plan = os.path.join(work, "m.onnx"), os.path.join(work, "m.plan")
    ember.export(model, (make_kjt(8, args.rows, args.max_len, seed=2),), onnx_path)
    subprocess.run([os.path.join(args.bin_dir, "ember-compile"), onnx_path, "-o", plan],
                   check=True)
    npz = os.path.join(work, "in.npz")
    np.savez(npz, **{"kjt.values": kjt.values().numpy(), "kjt.lengths": kjt.lengths().numpy()})
    out_dir = os.path.join(work, "out")
    run = subprocess.run([os.path.join(args.bin_dir, "ember-run"), plan, "--inputs", npz,
                          "--output-dir", out_dir, "--threads", str(args.threads),
                          "--warmup", "5", "--repeat", str(args.repeat)],
                         check=True, capture_output=True, text=True)
    line = next(x for x in run.stdout.splitlines() if x.startswith("latency"))
    ember_ms = float(line.split("median ")[1].split(" ms")[0])
    with torch.no_grad():
        want = model(kjt).numpy()
        got = np.load(os.path.join(out_dir, os.listdir(out_dir)[0]))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        eager_ms = median_ms(lambda: model(kjt), args.repeat)
        try:
            compiled = torch.compile(model)
            compiled(kjt)
            compile_ms = median_ms(lambda: compiled(kjt), args.repeat)
        except Exception as e:  # dynamo and TorchRec's KJT do not always agree
            compile_ms = None
            print(f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                  file=sys.stderr)
    ids = int(kjt.lengths().sum())
    print(f"batch {args.batch}, {ids} ids, {args.threads} thread(s): ember-run {ember_ms:.3f} ms, "
          f"TorchRec eager {eager_ms:.3f} ms ({eager_ms / ember_ms:.2f}x)"
          + ("" if compile_ms is None else
             f", torch.compile {compile_ms:.3f} ms ({compile_ms / ember_ms:.2f}x)"))


if __name__ == "__main__":
    main()
