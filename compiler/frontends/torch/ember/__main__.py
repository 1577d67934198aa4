"""Command line:
    python -m ember export MODULE:FACTORY OUTPUT.onnx [--inputs MODULE:FN] [--leaf NAME]... [--static-batch]
                           [--external-data auto|always|never] [--external-data-threshold BYTES]
                           [--quiet]
    python -m ember compile MODEL.onnx -o MODEL.plan [ember-compile's options]
    python -m ember run MODEL.plan [ember-run's options]

FACTORY() returns either a model or a (model, example_inputs) pair; with --inputs, FN()
returns the example inputs (a tuple of forward's positional arguments, or one tensor).

The arguments are parsed and checked before torch is imported (seconds): --help and a
bad argument answer at once.
"""

import argparse
import importlib
import os
import sys
from typing import Any, Callable, List, Optional


def _check_spec(spec: str) -> None:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"'{spec}' is not of the form module:function")


def _check_export_arguments(args: argparse.Namespace) -> None:
    """What can be checked without torch (ValueError naming the argument)."""
    _check_spec(args.factory)
    if args.inputs:
        _check_spec(args.inputs)
    threshold = args.external_data_threshold
    if threshold is not None and threshold < 0:
        raise ValueError(f"--external-data-threshold must be >= 0, got {threshold}")


def _load(spec: str) -> Callable[..., Any]:
    _check_spec(spec)
    module_name, _, attr = spec.partition(":")
    sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"'{spec}' is not callable")
    return obj


def main(argv: Optional[List[str]] = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    if args_in and args_in[0] in ("compile", "run"):
        # The C++ commands, with their own options (ember-compile --help).
        from ._commands import run
        return run("ember-" + args_in[0], args_in[1:])
    parser = argparse.ArgumentParser(prog="python -m ember", description="Ember PyTorch frontend")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("compile", help="ember-compile: compile ONNX/MLIR to a plan (its own options)")
    sub.add_parser("run", help="ember-run: run a plan (its own options)")
    exp = sub.add_parser("export", help="trace a model and write it as ONNX for ember-compile")
    exp.add_argument("factory", help="module:function returning a model or (model, example_inputs)")
    exp.add_argument("output", help="ONNX file to write (written only on success)")
    exp.add_argument("--inputs", help="module:function returning the example inputs")
    exp.add_argument("--leaf", action="append", default=[], help="module path or class name to keep as a leaf")
    exp.add_argument("--static-batch", action="store_true",
                     help="keep the example's batch (default: the batch is the symbol B)")
    exp.add_argument("--external-data", choices=["auto", "always", "never"], default="auto",
                     help="write large initializers to OUTPUT.onnx.data (ONNX external data): "
                          "always, never, or auto (default: when they hold 1 GiB or more)")
    exp.add_argument("--external-data-threshold", type=int, default=None, metavar="BYTES",
                     help="initializers of at least this many bytes go to the data file "
                          "(default 1 MiB)")
    exp.add_argument("--quiet", action="store_true",
                     help="no progress on stderr (tracing, converting, writing; also EMBER_QUIET=1)")
    args = parser.parse_args(argv)
    try:
        _check_export_arguments(args)
    except ValueError as e:
        print(f"ember export: error: {e}", file=sys.stderr)
        return 1

    try:
        import torch
    except ImportError as e:
        print(f"ember export: error: the exporter needs torch ({e})", file=sys.stderr)
        return 1

    from . import _progress
    from .errors import TraceError
    from .export import EXTERNAL_DATA_THRESHOLD, export

    if args.quiet:
        _progress.set_quiet(True)

    try:
        made = _load(args.factory)()
        if isinstance(made, tuple) and len(made) == 2 and isinstance(made[0], torch.nn.Module):
            model, example_inputs = made
        else:
            model, example_inputs = made, None
        if args.inputs:
            example_inputs = _load(args.inputs)()
        if not isinstance(model, torch.nn.Module):
            raise ValueError(f"{args.factory} returned {type(model).__name__}, not an nn.Module")
        if example_inputs is None:
            raise ValueError("no example inputs: return (model, inputs) from the factory or pass --inputs")
        threshold = args.external_data_threshold
        export(model, example_inputs, args.output, leaf_modules=args.leaf or None,
               dynamic_batch=not args.static_batch,
               external_data={"auto": None, "always": True, "never": False}[args.external_data],
               external_data_threshold=EXTERNAL_DATA_THRESHOLD if threshold is None else threshold)
    except (TraceError, ValueError, ImportError, AttributeError) as e:
        print(f"ember export: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
