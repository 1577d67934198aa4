"""Exports one nn.EmbeddingBag(10, 4) with torch.onnx.export (torch emits a
Loop over the bags) for the raise-embedding-bags tests.

usage: torch_embedding_bag_modes.py MODE OUTPUT.onnx [--per-sample-weights]
           [--include-last-offset] [--opset N] [--static] [--int32]

MODE is sum, mean or max. Ids and offsets have dynamic sizes unless
--static is given; they are int64 unless --int32 is given.
"""
import argparse

import torch


class Bag(torch.nn.Module):
    def __init__(self, mode, include_last_offset):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(10, 4, mode=mode,
                                         include_last_offset=include_last_offset)

    def forward(self, ids, offsets, weights=None):
        return self.bag(ids, offsets, per_sample_weights=weights)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["sum", "mean", "max"])
    parser.add_argument("output")
    parser.add_argument("--per-sample-weights", action="store_true")
    parser.add_argument("--include-last-offset", action="store_true")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--static", action="store_true")
    parser.add_argument("--int32", action="store_true")
    args = parser.parse_args()

    torch.manual_seed(0)
    id_type = torch.int32 if args.int32 else torch.int64
    ids = torch.tensor([1, 2, 3, 4], dtype=id_type)
    offsets = torch.tensor([0, 2, 4] if args.include_last_offset else [0, 2],
                           dtype=id_type)
    inputs = (ids, offsets)
    names = ["ids", "offsets"]
    dynamic_axes = {"ids": {0: "n"}, "offsets": {0: "batch"},
                    "pooled": {0: "batch"}}
    if args.per_sample_weights:
        inputs += (torch.rand(4),)
        names.append("weights")
        dynamic_axes["weights"] = {0: "n"}
    torch.onnx.export(Bag(args.mode, args.include_last_offset).eval(), inputs,
                      args.output, input_names=names, output_names=["pooled"],
                      opset_version=args.opset,
                      dynamic_axes=None if args.static else dynamic_axes)


if __name__ == "__main__":
    main()
