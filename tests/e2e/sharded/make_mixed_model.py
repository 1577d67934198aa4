"""A recommendation model with mixed embedding dims and pooling modes for the
sharded end-to-end test, exported with torch.onnx.export (opset 17).

Tables: a (50 x 8, sum), b (40 x 16, mean, include_last_offset), c (30 x 12,
max), d (64 x 4, sum with per-sample weights). Outputs: the pooled rows
concatenated ("pooled", [B, 40]) and a small MLP over them ("prob", [B, 1]).

usage: make_mixed_model.py OUTDIR [--batch B] [--seed S]
writes OUTDIR/model.onnx, OUTDIR/<input>.npy, OUTDIR/io.txt (input and
output names) and OUTDIR/expected_<output>.npy (torch's eager outputs)
"""
import argparse
import os

import numpy as np
import torch
from torch import nn

TABLES = [  # rows, dim, mode, include_last_offset, weighted
    (50, 8, "sum", False, False),
    (40, 16, "mean", True, False),
    (30, 12, "max", False, False),
    (64, 4, "sum", False, True),
]


class Mixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.bags = nn.ModuleList(
            nn.EmbeddingBag(rows, dim, mode=mode, include_last_offset=last)
            for rows, dim, mode, last, _ in TABLES)
        width = sum(t[1] for t in TABLES)
        self.top = nn.Sequential(nn.Linear(width, 8), nn.ReLU(),
                                 nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, ids0, off0, ids1, off1, ids2, off2, ids3, off3, psw3):
        pooled = torch.cat([
            self.bags[0](ids0, off0),
            self.bags[1](ids1, off1),
            self.bags[2](ids2, off2),
            self.bags[3](ids3, off3, per_sample_weights=psw3),
        ], dim=1)
        return pooled, self.top(pooled)


def make_inputs(batch, gen, max_bag=4):
    inputs = []
    for t, (rows, _, _, last, weighted) in enumerate(TABLES):
        lengths = torch.randint(0, max_bag + 1, (batch,), generator=gen)
        lengths[0] = 0  # an empty bag
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64),
                             torch.cumsum(lengths, 0)])
        if not last:
            offsets = offsets[:-1]
        ids = torch.randint(0, rows, (int(lengths.sum()),), generator=gen)
        if ids.numel():
            ids[-1] = rows - 1  # an id at the table edge
            ids[0] = 0
        inputs += [ids, offsets]
        if weighted:
            inputs.append(torch.rand(ids.numel(), generator=gen) + 0.5)
    return inputs


NAMES = ["ids0", "off0", "ids1", "off1", "ids2", "off2", "ids3", "off3",
         "psw3"]
OUTPUTS = ["pooled", "prob"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--batch", type=int, default=13)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    torch.manual_seed(args.seed)
    model = Mixed().eval()
    # Negative weights too, so that max pooling over them is checked.
    with torch.no_grad():
        for bag in model.bags:
            bag.weight.sub_(0.5)
    gen = torch.Generator().manual_seed(args.seed + 1)
    inputs = make_inputs(args.batch, gen)
    example = make_inputs(3, torch.Generator().manual_seed(args.seed + 2), 2)
    dynamic = {"pooled": {0: "batch"}, "prob": {0: "batch"}}
    for t, (_, _, _, last, weighted) in enumerate(TABLES):
        dynamic["ids%d" % t] = {0: "n%d" % t}
        dynamic["off%d" % t] = {0: "batch_plus_one" if last else "batch"}
        if weighted:
            dynamic["psw%d" % t] = {0: "n%d" % t}
    with torch.no_grad():
        expected = model(*inputs)
        torch.onnx.export(model, tuple(example),
                          os.path.join(args.outdir, "model.onnx"),
                          input_names=NAMES, output_names=OUTPUTS,
                          opset_version=17, dynamic_axes=dynamic)
    for name, value in zip(NAMES, inputs):
        np.save(os.path.join(args.outdir, name + ".npy"), value.numpy())
    for name, value in zip(OUTPUTS, expected):
        np.save(os.path.join(args.outdir, "expected_%s.npy" % name),
                value.numpy())
    with open(os.path.join(args.outdir, "io.txt"), "w") as f:
        f.write("inputs %s\noutputs %s\n" % (" ".join(NAMES),
                                           " ".join(OUTPUTS)))


if __name__ == "__main__":
    main()
