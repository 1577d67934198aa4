"""Small models for the export tests and the command-line test (module:factory)."""

import torch
import torch.nn as nn

import ember


class TinyDLRM(nn.Module):
    """Dense MLP + per-feature EmbeddingBags over a KJT (held in a plain list), a slice write,
    an in-place add, sizes flowing into view; torch.fx.symbolic_trace fails on it."""

    def __init__(self, keys=("a", "b"), rows=10, dim=4, dense_in=3):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense_in, dim), nn.ReLU())
        self.tables = [nn.EmbeddingBag(rows, dim, mode=m) for m in ("sum", "mean")][: len(keys)]
        for i, t in enumerate(self.tables):
            self.register_buffer(f"_unused_{i}", torch.zeros(1))
        self.top = nn.Linear(dim * (len(keys) + 1), 1)

    def forward(self, dense, kjt):
        x = self.bottom(dense)
        lengths = kjt.lengths().view(len(kjt.keys()), -1)
        per_key = kjt.values().split(lengths.sum(1).tolist())
        pooled = [x]
        for table, ids, lens in zip(self.tables, per_key, lengths):
            offsets = torch.cat([lens.new_zeros(1), lens.cumsum(0)[:-1]])
            pooled.append(table(ids, offsets))
        z = torch.cat(pooled, dim=1)
        z[:, 0:2] = 0.5           # slice write
        z += 1                     # in-place
        z = z.view(z.size(0), -1, 2).sum(2)
        return torch.sigmoid(self.top(torch.cat([z, z], dim=1)))


def tiny_kjt():
    return ember.KeyedJaggedTensor(["a", "b"], torch.tensor([1, 2, 3, 4, 5, 6, 9]),
                                   torch.tensor([2, 0, 1, 1, 3, 0]))


def tiny_dlrm():
    torch.manual_seed(0)
    return TinyDLRM().eval(), (torch.randn(3, 3), tiny_kjt())


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = Gate()
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(self.gate(x))


class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


def branchy():
    return Branchy(), (torch.randn(2, 4),)


def not_a_model():
    return 42


class MixedOps(nn.Module):
    """Embedding (Gather), fixed-length and weighted EmbeddingBags, LayerNorm, reshapes."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(8, 4)
        self.bag2d = nn.EmbeddingBag(8, 4, mode="max")
        self.wbag = nn.EmbeddingBag(8, 4, mode="sum", padding_idx=0)
        self.norm = nn.LayerNorm(4)

    def forward(self, seq, ids, offsets, psw):
        e = self.emb(seq)                                   # [B, L, 4]
        m = e.mean(1) + self.bag2d(seq)                     # [B, 4]
        w = self.wbag(ids, offsets, per_sample_weights=psw)
        y = self.norm(m - w).unsqueeze(1).transpose(1, 2)  # [B, 4, 1]
        y = y.squeeze(2)[:, 1:] * seq.size(1)
        return y, seq.float().sum(1, keepdim=True)


def mixed_ops():
    torch.manual_seed(1)
    return MixedOps().eval(), (torch.tensor([[1, 7, 0], [3, 3, 5]]), torch.tensor([0, 7, 2, 0]),
                               torch.tensor([0, 3]), torch.rand(4))
