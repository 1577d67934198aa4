"""Exports nn.EmbeddingBag(10, 4, mode="mean") with torch.onnx.export (dynamic
ids and offsets): torch emits a Loop over the bags.

usage: torch_embedding_bag.py OUTPUT.onnx
"""
import sys

import torch


class Bag(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(10, 4, mode="mean")

    def forward(self, ids, offsets):
        return self.bag(ids, offsets)


def main():
    torch.manual_seed(0)
    torch.onnx.export(Bag().eval(), (torch.tensor([1, 2, 3, 4]), torch.tensor([0, 2])),
                      sys.argv[1], input_names=["ids", "offsets"],
                      output_names=["pooled"], opset_version=17,
                      dynamic_axes={"ids": {0: "n"}, "offsets": {0: "batch"},
                                    "pooled": {0: "batch"}})


if __name__ == "__main__":
    main()
