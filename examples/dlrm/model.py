"""A small DLRM (facebookresearch/dlrm layout) and a DCN-v2 variant in PyTorch.

Sparse side: one nn.EmbeddingBag(mode="sum") per table, fed torch's
(ids, offsets) form. Dense side: a bottom MLP from the 13 dense features to
the embedding dim. Interaction: T = stack(dense, pooled...) [B, F+1, D],
Z = bmm(T, T^T), the strictly lower triangle of Z taken with constant index
tensors (Z[:, li, lj], the reference's order), concatenated with the dense
vector. Top MLP ending in a sigmoid.
"""
import torch
from torch import nn

NUM_DENSE = 13
EMB_DIM = 16
TABLE_ROWS = (1000, 3000, 5000)


def mlp(sizes, final_sigmoid=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        last = i == len(sizes) - 2
        layers.append(nn.Sigmoid() if last and final_sigmoid else nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, table_rows=TABLE_ROWS, dim=EMB_DIM,
                 num_dense=NUM_DENSE):
        super().__init__()
        self.tables = nn.ModuleList(
            nn.EmbeddingBag(rows, dim, mode="sum") for rows in table_rows)
        self.bottom = mlp([num_dense, 64, 32, dim])
        num_f = len(table_rows) + 1
        li, lj = zip(*[(i, j) for i in range(num_f) for j in range(i)])
        self.register_buffer("li", torch.tensor(li, dtype=torch.int64))
        self.register_buffer("lj", torch.tensor(lj, dtype=torch.int64))
        self.top = mlp([dim + len(li), 64, 32, 1], final_sigmoid=True)

    def forward(self, dense, ids0, offsets0, ids1, offsets1, ids2, offsets2):
        x = self.bottom(dense)
        pooled = [self.tables[0](ids0, offsets0),
                  self.tables[1](ids1, offsets1),
                  self.tables[2](ids2, offsets2)]
        # [B, F+1, D], as the reference: view((batch_size, -1, d)).
        batch_size, d = x.shape
        t = torch.cat([x] + pooled, dim=1).view((batch_size, -1, d))
        z = torch.bmm(t, torch.transpose(t, 1, 2))
        zflat = z[:, self.li, self.lj]
        r = torch.cat([x, zflat], dim=1)
        return self.top(r)


class DCN(nn.Module):
    def __init__(self, table_rows=TABLE_ROWS, dim=EMB_DIM,
                 num_dense=NUM_DENSE, num_layers=3, low_rank=0):
        super().__init__()
        self.tables = nn.ModuleList(
            nn.EmbeddingBag(rows, dim, mode="sum") for rows in table_rows)
        self.bottom = mlp([num_dense, 64, 32, dim])
        width = dim * (len(table_rows) + 1)
        self.low_rank = low_rank
        if low_rank:
            self.cross_v = nn.ModuleList(
                nn.Linear(width, low_rank, bias=False)
                for _ in range(num_layers))
            self.cross_u = nn.ModuleList(
                nn.Linear(low_rank, width) for _ in range(num_layers))
        else:
            self.cross = nn.ModuleList(
                nn.Linear(width, width) for _ in range(num_layers))
        self.top = mlp([width, 64, 32, 1], final_sigmoid=True)

    def cross_layer(self, i, x):
        if self.low_rank:
            return self.cross_u[i](self.cross_v[i](x))
        return self.cross[i](x)

    def forward(self, dense, ids0, offsets0, ids1, offsets1, ids2, offsets2):
        x = self.bottom(dense)
        pooled = [self.tables[0](ids0, offsets0),
                  self.tables[1](ids1, offsets1),
                  self.tables[2](ids2, offsets2)]
        x0 = torch.cat([x] + pooled, dim=1)
        xl = x0
        layers = len(self.cross_u if self.low_rank else self.cross)
        for i in range(layers):
            xl = x0 * self.cross_layer(i, xl) + xl
        return self.top(xl)
