"""Exports a module with the dense ops recommendation models use, including an
in-place slice write (torch exports it as a ScatterND over a Range/Expand
index graph) and view(x.size(0), -1), with torch.onnx.export (static shapes).

usage: torch_dense_ops.py OUTPUT.onnx
"""
import sys

import torch


class DenseOps(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(12)
        self.fc = torch.nn.Linear(12, 6)

    def forward(self, x, ids):
        flat = x.view(x.size(0), -1)
        y = torch.softmax(self.fc(self.norm(flat)), dim=-1)
        z = y.clone()
        z[:, 2:4] = y[:, 0:2] * 2
        t = torch.cat([z, y], dim=1).unsqueeze(1).squeeze(1)
        m = t.mean(dim=1, keepdim=True) + t.sum(dim=1, keepdim=True)
        hit = (ids == 0).float().unsqueeze(1)
        return torch.where(hit > 0, m, m * 2) + ids.float().unsqueeze(1)


def main():
    torch.manual_seed(0)
    model = DenseOps().eval()
    x = torch.randn(4, 3, 4)
    ids = torch.tensor([0, 1, 2, 0])
    torch.onnx.export(model, (x, ids), sys.argv[1], input_names=["x", "ids"],
                      output_names=["out"], opset_version=17)


if __name__ == "__main__":
    main()
