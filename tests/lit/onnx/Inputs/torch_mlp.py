"""Exports a small nn.Sequential MLP with torch.onnx.export (dynamic batch).

usage: torch_mlp.py OUTPUT.onnx [OPSET]
"""
import sys

import torch


def main():
    out = sys.argv[1]
    opset = int(sys.argv[2]) if len(sys.argv) > 2 else 17
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(13, 16), torch.nn.ReLU(),
        torch.nn.Linear(16, 8), torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 1), torch.nn.Sigmoid()).eval()
    x = torch.randn(4, 13)
    torch.onnx.export(model, (x,), out, input_names=["dense"],
                      output_names=["prob"], opset_version=opset,
                      dynamic_axes={"dense": {0: "batch"}, "prob": {0: "batch"}})


if __name__ == "__main__":
    main()
