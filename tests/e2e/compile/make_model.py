"""Builds the small recommendation model of the ember-compile end-to-end test,
exports it with torch.onnx.export (opset 17) and writes its inputs and torch's
eager output.

Model: EmbeddingBag (sum, or mean) over the sparse ids, a Linear+ReLU bottom MLP over
the dense features, concat, then Linear+ReLU and Linear+Sigmoid.

usage: make_model.py OUTDIR [--mlp-only] [--unsupported] [--batch B]
                     [--bag-mode sum|mean]
writes OUTDIR/model.onnx, OUTDIR/<input>.npy, OUTDIR/expected.npy
"""
import argparse
import os

import numpy as np
import torch


class SmallRec(torch.nn.Module):
    def __init__(self, with_bag, unsupported=False, bag_mode="sum"):
        super().__init__()
        self.with_bag = with_bag
        self.unsupported = unsupported
        self.bottom = torch.nn.Linear(5, 8)
        if with_bag:
            self.bag = torch.nn.EmbeddingBag(20, 6, mode=bag_mode)
            top_in = 8 + 6
        else:
            top_in = 8 + 5
        self.top0 = torch.nn.Linear(top_in, 12)
        self.top1 = torch.nn.Linear(12, 1)

    def forward(self, dense, ids=None, offsets=None):
        h = torch.relu(self.bottom(dense))
        other = self.bag(ids, offsets) if self.with_bag else dense
        z = torch.cat([h, other], dim=1)
        z = torch.relu(self.top0(z))
        if self.unsupported:  # a row write at run-time indices: tosa.scatter
            idx = (z[:, 0] * 0).to(torch.int64)
            z = z.clone()
            z[idx] = z * 2.0
        return torch.sigmoid(self.top1(z))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--mlp-only", action="store_true")
    parser.add_argument("--batch", type=int, default=3)
    parser.add_argument("--unsupported", action="store_true")
    parser.add_argument("--bag-mode", default="sum", choices=["sum", "mean"])
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    torch.manual_seed(0)
    model = SmallRec(not args.mlp_only, args.unsupported,
                     args.bag_mode).eval()

    batch = args.batch
    dense = torch.randn(batch, 5)
    # Export with other sizes than the run so that nothing is baked in.
    ex_dense = torch.randn(2, 5)
    names = ["dense"]
    dynamic = {"dense": {0: "batch"}, "prob": {0: "batch"}}
    if model.with_bag:
        gen = torch.Generator().manual_seed(1)
        lengths = torch.randint(0, 4, (batch,), generator=gen)
        lengths[0] = 0  # an empty bag
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64),
                             torch.cumsum(lengths, 0)[:-1]])
        n = int(lengths.sum())
        ids = torch.randint(0, 20, (n,), generator=gen)
        if n:
            ids[-1] = 19  # an id at the table edge
        inputs = (dense, ids, offsets)
        ex_inputs = (ex_dense, torch.tensor([1, 2, 3]), torch.tensor([0, 1]))
        names += ["ids", "offsets"]
        dynamic["ids"] = {0: "n"}
        dynamic["offsets"] = {0: "batch"}
    else:
        inputs = (dense,)
        ex_inputs = (ex_dense,)

    with torch.no_grad():
        expected = model(*inputs)
    torch.onnx.export(model, ex_inputs, os.path.join(args.outdir, "model.onnx"),
                      input_names=names, output_names=["prob"],
                      opset_version=17, dynamic_axes=dynamic)
    for name, value in zip(names, inputs):
        np.save(os.path.join(args.outdir, name + ".npy"), value.numpy())
    np.save(os.path.join(args.outdir, "expected.npy"), expected.numpy())


if __name__ == "__main__":
    main()
