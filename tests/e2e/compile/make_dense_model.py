"""Builds one of the dense-op models of the ember-compile end-to-end test,
exports it with torch.onnx.export (dynamic batch) and writes its inputs and
torch's eager outputs.

usage: make_dense_model.py OUTDIR CASE [--batch B]... [--opset N]
writes OUTDIR/model.onnx, OUTDIR/<input>.npy, OUTDIR/expected_<output>.npy
and OUTDIR/io.txt (a line "inputs NAME..." and a line "outputs NAME...");
with several --batch, the same under OUTDIR/b<B> for each (one torch
start-up for all).

Cases (each model is small and random, seed 0):
  dcn          DCNv2 cross network: two full-rank layers x0 * (W x + b) + x
               and one low-rank layer x0 * (U (V x) + b) + x, then a Linear
  slice_write  in-place slice writes: x[:, 2:5] = ..., y[:, 1:3] = ..., a
               copy into a full-range slice of a clone (c[:, :].copy_(...)),
               x[:, -2:] *= 2 (ScatterND with constant box indices: exported
               at the run's batch, see below)
  concat_reshape  concat / reshape / flatten / view chains with run-time
               batch, incl. a reshape with two inferred dims ([B, F*D] ->
               [B, F, D] -> [B*F, D] -> back)
  norm         softmax, layer_norm, ReduceSum/Mean/Max (keepdim and not),
               mul, div, sigmoid, tanh, neg, exp
  gather       gather with run-time indices: table[idx] (idx [B, 3], an id
               at the table edge, a negative id), x[:, cols] on a batched
               tensor, torch.gather (GatherElements)
  interaction_ORDER  the DLRM dot interaction (bmm, Z[:, li, lj], cat)
               with ORDER dlrm, torchrec, self or shuffled
  bmm          MatMul: [B, F, D] @ [D, E], @ [1, D, E], [E, F] @ [B, F, D],
               [B, F, D] @ [B, D, F]; where/equal/cast/expand
"""
import argparse
import os

import numpy as np
import torch
from torch import nn


class DCN(nn.Module):
    def __init__(self, d=8, rank=3):
        super().__init__()
        self.full = nn.ModuleList(nn.Linear(d, d) for _ in range(2))
        self.v = nn.Linear(d, rank, bias=False)
        self.u = nn.Linear(rank, d)
        self.out = nn.Linear(d, 2)

    def forward(self, dense):
        x0 = dense
        x = x0
        for layer in self.full:
            x = x0 * layer(x) + x
        x = x0 * self.u(self.v(x)) + x
        return (self.out(x),)


class SliceWrite(nn.Module):
    # Writes through a slice of a slice (y[:, 1:7][:, 2:4] = v) make
    # torch 1.13's exporter fail its own assertion (pattern_conversion.cpp
    # "cur_dim == dim"), and x.narrow(..).narrow(..).copy_ is exported
    # without the write: those are covered by Inputs/nested_slice_write.mlir.
    def forward(self, dense):
        x = dense.clone()
        x[:, 2:5] = dense[:, 0:3] * 2.0
        y = dense * 0.5
        y[:, 1:3] = dense[:, 6:8] + 1.0
        c = dense.clone()
        c[:, :].copy_(x + y)
        x[:, -2:] *= 2.0
        return x, y, c


class ConcatReshape(nn.Module):
    def __init__(self, f=3, d=4):
        super().__init__()
        self.f, self.d = f, d
        self.lin = nn.Linear(d, d)

    def forward(self, dense, other):
        b = dense.shape[0]
        t = torch.cat([dense, other], dim=1)            # [B, F*D]
        t3 = t.view(b, -1, self.d)                      # [B, F, D]
        rows = t3.reshape(-1, self.d)                   # [B*F, D]
        rows = torch.relu(self.lin(rows))
        back = rows.reshape(b, self.f, self.d)          # [B, F, D]
        flat = torch.flatten(back, 1)                   # [B, F*D]
        both = torch.cat([flat, t, flat[:, :2]], dim=1)
        return (both.reshape(b, 2, -1).transpose(1, 2).reshape(b, -1),)


class Norm(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.ln = nn.LayerNorm(d)
        self.plain_ln = nn.LayerNorm(d)  # scale 1 and shift 0: folded away
        with torch.no_grad():  # a real scale and shift (not 1 and 0)
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, dense):
        h = self.lin(dense)
        s = torch.softmax(h, dim=1)
        ln = self.ln(h) + self.plain_ln(h * h)
        total = h.sum(dim=1, keepdim=True)
        mean = h.mean(dim=-1)
        mx = torch.amax(h, dim=1, keepdim=True)
        z = (h - mx) / (total.abs() + 1.0)
        z = torch.sigmoid(z) * torch.tanh(-h) + torch.exp(-h.abs())
        return s, ln, mean.unsqueeze(1) * z, z.sum()


class Gather(nn.Module):
    def __init__(self, rows=10, d=4):
        super().__init__()
        self.table = nn.Parameter(torch.randn(rows, d))

    def forward(self, dense, idx, cols, eidx):
        emb = self.table[idx]                           # [B, 3, D]
        x3 = dense.view(dense.shape[0], -1, 2)          # [B, 4, 2]
        picked = x3[:, cols]                            # [B, C, 2]
        sel = torch.gather(dense, 1, eidx)              # GatherElements
        return emb.sum(dim=1), picked.flatten(1), sel


class BMM(nn.Module):
    def __init__(self, d=4, e=5):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, e))
        self.w3 = nn.Parameter(torch.randn(1, d, e))
        self.q = nn.Parameter(torch.randn(3, 2))

    def forward(self, dense):
        t = dense.view(dense.shape[0], -1, 4)           # [B, 2, 4]
        proj = torch.matmul(t, self.w)                  # [B, 2, 5]
        proj = proj + torch.matmul(t, self.w3)          # batch-broadcast
        left = torch.matmul(self.q, t)                  # [3, 2] @ [B, 2, 4]
        gram = torch.matmul(t, t.transpose(1, 2))       # [B, 2, 2]
        mask = torch.eq(gram, gram.amax(dim=2, keepdim=True))
        sel = torch.where(mask, gram, torch.zeros_like(gram))
        cnt = mask.to(torch.float32).sum(dim=2) \
            + (gram >= 0.5).to(torch.float32).sum(dim=2) \
            + (gram <= -0.5).to(torch.float32).sum(dim=2)
        ex = dense[:, :1].expand(-1, 3)
        return proj.flatten(1), sel.flatten(1), cnt, ex, left.flatten(1)


class Interaction(nn.Module):
    """The DLRM interaction over a dense vector and F pooled embeddings
    (inputs, so the test needs no tables), with the pairs taken in one of
    several orders: "dlrm" (Z[:, li, lj], lower triangle), "torchrec"
    (triu_indices offset 1, upper triangle), "self" (lower triangle with the
    diagonal), "shuffled" (the lower triangle in another order: no kernel
    order, must stay unfused)."""

    def __init__(self, order, f=3, d=4):
        super().__init__()
        n = f + 1
        if order == "torchrec":
            li, lj = torch.triu_indices(n, n, offset=1)
        else:
            offset = 0 if order == "self" else -1
            li, lj = torch.tril_indices(n, n, offset=offset)
        if order == "shuffled":
            perm = torch.randperm(li.numel(), generator=torch.Generator()
                                  .manual_seed(3))
            li, lj = li[perm], lj[perm]
        self.register_buffer("li", li.clone())
        self.register_buffer("lj", lj.clone())
        self.bottom = nn.Linear(5, d)
        self.top = nn.Linear(d + li.numel(), 1)
        self.d = d

    def forward(self, dense, emb):
        x = torch.relu(self.bottom(dense))
        b = x.shape[0]
        t = torch.cat([x, emb], dim=1).view((b, -1, self.d))
        z = torch.bmm(t, torch.transpose(t, 1, 2))
        r = torch.cat([x, z[:, self.li, self.lj]], dim=1)
        return (torch.sigmoid(self.top(r)), r)


def make(case, batch, gen):
    d = lambda *s: torch.randn(*s, generator=gen)  # noqa: E731
    if case == "dcn":
        return DCN(), ["dense"], [d(batch, 8)], [d(2, 8)], ["out"]
    if case == "slice_write":
        return SliceWrite(), ["dense"], [d(batch, 8)], [d(2, 8)], \
            ["x", "y", "c"]
    if case == "concat_reshape":
        return ConcatReshape(), ["dense", "other"], \
            [d(batch, 4), d(batch, 8)], [d(2, 4), d(2, 8)], ["out"]
    if case == "norm":
        return Norm(), ["dense"], [d(batch, 6) * 3], [d(2, 6)], \
            ["softmax", "layer_norm", "mixed", "total"]
    if case == "gather":
        idx = torch.randint(0, 10, (batch, 3), generator=gen)
        idx[0, 0] = 9  # the table edge (row 9 of 10)
        idx[-1, -1] = -1  # a negative index counts from the back
        cols = torch.tensor([3, 0, 3, 1])
        eidx = torch.randint(0, 8, (batch, 3), generator=gen)
        eidx[0, 0] = 7
        return Gather(), ["dense", "idx", "cols", "eidx"], \
            [d(batch, 8), idx, cols, eidx], \
            [d(2, 8), torch.tensor([[1, 2, 3], [4, 5, 6]]),
             torch.tensor([0, 1]), torch.tensor([[1, 2, 3], [4, 5, 6]])], \
            ["emb", "picked", "sel"]
    if case == "bmm":
        return BMM(), ["dense"], [d(batch, 8)], [d(2, 8)], \
            ["proj", "sel", "cnt", "ex", "left"]
    if case.startswith("interaction_"):
        order = case[len("interaction_"):]
        return Interaction(order), ["dense", "emb"], \
            [d(batch, 5), d(batch, 12)], [d(2, 5), d(2, 12)], ["prob", "r"]
    raise SystemExit("unknown case " + case)


def export_case(outdir, case, batch, opset):
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model, names, inputs, example, outputs = make(case, batch, gen)
    model.eval()
    if case == "slice_write":
        # With a run-time batch torch builds the ScatterND indices with
        # Range over Shape values, which the importer does not follow yet:
        # export at the run's batch (constant indices, a box write).
        example = inputs
    dynamic = {}
    if case != "slice_write":
        for name in names:
            dynamic[name] = {0: "ncols" if name == "cols" else "batch"}
        for name in outputs:
            if name != "total":
                dynamic[name] = {0: "batch"}
    with torch.no_grad():
        expected = model(*[v.clone() for v in inputs])
        torch.onnx.export(model, tuple(example),
                          os.path.join(outdir, "model.onnx"),
                          input_names=names, output_names=outputs,
                          opset_version=opset, dynamic_axes=dynamic)
    for name, value in zip(names, inputs):
        np.save(os.path.join(outdir, name + ".npy"), value.numpy())
    for name, value in zip(outputs, expected):
        np.save(os.path.join(outdir, "expected_%s.npy" % name),
                value.numpy())
    with open(os.path.join(outdir, "io.txt"), "w") as f:
        f.write("inputs %s\noutputs %s\n" % (" ".join(names),
                                              " ".join(outputs)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("case")
    parser.add_argument("--batch", type=int, action="append",
                        help="repeat for several batches: OUTDIR/b<B> each")
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args()
    batches = args.batch or [5]
    for batch in batches:
        outdir = (args.outdir if len(batches) == 1
                  else os.path.join(args.outdir, "b%d" % batch))
        export_case(outdir, args.case, batch, args.opset)


if __name__ == "__main__":
    main()
