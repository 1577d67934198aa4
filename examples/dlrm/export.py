"""Exports the example DLRM to ONNX and writes inputs and torch's output.

usage: export.py OUTDIR [--batch B] [--seed S] [--arch dlrm|dcn]
                 [--low-rank R]
writes OUTDIR/model.onnx, OUTDIR/inputs.npz (dense, ids0, offsets0, ...),
OUTDIR/<input>.npy (the same, one file each), OUTDIR/expected.npy
(torch's eager output, float32 [B, 1]) and OUTDIR/arch.json (the model's
arch and low rank, read by compare.py).
--arch dcn exports the DCN-v2 variant (model.DCN, 3 cross layers; low rank
R when --low-rank R > 0, else full rank).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import DCN, DLRM, NUM_DENSE, TABLE_ROWS  # noqa: E402

INPUT_NAMES = ["dense", "ids0", "offsets0", "ids1", "offsets1", "ids2",
               "offsets2"]


def make_inputs(batch, seed, max_bag=4):
    """Random dense features and bags of 0..max_bag ids per sample."""
    gen = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(batch, NUM_DENSE, generator=gen)]
    for t, rows in enumerate(TABLE_ROWS):
        lengths = torch.randint(0, max_bag + 1, (batch,), generator=gen)
        if t == 0:
            lengths[0] = 0  # an empty bag
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64),
                             torch.cumsum(lengths, 0)[:-1]])
        ids = torch.randint(0, rows, (int(lengths.sum()),), generator=gen)
        if ids.numel():
            ids[-1] = rows - 1  # an id at the table edge
        inputs += [ids, offsets]
    return inputs


def legacy_exporter():
    """torch.onnx.export's TorchScript exporter: the default of PyTorch 1.x, and
    dynamo=False from PyTorch 2.x on (whose default, the dynamo exporter, needs
    onnxscript and gives other graphs)."""
    import inspect
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        return {"dynamo": False}
    return {}


def build_model(seed=0, arch="dlrm", low_rank=0):
    """The example's model with its weights drawn from `seed`."""
    torch.manual_seed(seed)
    if arch == "dcn":
        return DCN(low_rank=low_rank).eval()
    return DLRM().eval()


def export(outdir, batch, seed=0, arch="dlrm", low_rank=0):
    os.makedirs(outdir, exist_ok=True)
    model = build_model(seed, arch, low_rank)
    inputs = make_inputs(batch, seed + 1)
    # Export with another batch than the run's so that nothing is baked in.
    example = make_inputs(2, seed + 2, max_bag=2)
    dynamic = {"prob": {0: "batch"}, "dense": {0: "batch"}}
    for t in range(len(TABLE_ROWS)):
        dynamic["ids%d" % t] = {0: "n%d" % t}
        dynamic["offsets%d" % t] = {0: "batch"}
    with torch.no_grad():
        expected = model(*inputs)
        torch.onnx.export(model, tuple(example),
                          os.path.join(outdir, "model.onnx"),
                          input_names=INPUT_NAMES, output_names=["prob"],
                          opset_version=17, dynamic_axes=dynamic,
                          **legacy_exporter())
    arrays = {n: v.numpy() for n, v in zip(INPUT_NAMES, inputs)}
    np.savez(os.path.join(outdir, "inputs.npz"), **arrays)
    for name, value in arrays.items():
        np.save(os.path.join(outdir, name + ".npy"), value)
    np.save(os.path.join(outdir, "expected.npy"), expected.numpy())
    with open(os.path.join(outdir, "arch.json"), "w") as f:
        json.dump({"arch": arch, "low_rank": low_rank, "seed": seed}, f)
    return model, inputs, expected


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arch", choices=["dlrm", "dcn"], default="dlrm")
    parser.add_argument("--low-rank", type=int, default=0)
    args = parser.parse_args()
    if args.low_rank < 0:
        parser.error("--low-rank must be >= 0")
    export(args.outdir, args.batch, args.seed, args.arch, args.low_rank)
    print("wrote %s/model.onnx, inputs.npz, expected.npy (%s, batch %d)"
          % (args.outdir, args.arch, args.batch))


if __name__ == "__main__":
    main()
