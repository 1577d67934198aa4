#!/usr/bin/env python3
"""The DLRM example's predicted timeline against its measured one, on 2 and 4 CPU ranks.

usage: timeline_vs_measured.py [--bin DIR] [--work DIR] [--ranks 2,4] [--batch B]
                               [--repeat N] [--keep]

examples/dlrm/export.py writes the DLRM example (3 tables, global batch B, 0-4 ids per
bag: 2 on average); for each world size W it is compiled table-wise for W CPU ranks with
the communication stream, run by `ember-run --nproc W --trace` (N timed runs after 5
warm-ups), and predicted by `ember-compile --emit timeline` with a topology describing
this machine (bench/topology_this_machine.json: its stream bandwidth, a CPU's FLOP rate,
Gloo over loopback as the links; every rank on one node) at B/W samples and 2 ids per bag
per rank; scripts/ember-trace-summary.py lays the two side by side (per step). Run it
under the build lock (flock /tmp/ember-build.lock ...) so that no build disturbs the
measurement. Needs torch (examples/dlrm/export.py); exits 77 without it.
"""
import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IDS_PER_BAG = 2  # examples/dlrm/export.py: 0..4 ids per bag


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("FAILED: %s\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    return proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "release", "bin"))
    parser.add_argument("--work")
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--topology",
                        default=os.path.join(HERE, "topology_this_machine.json"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    try:
        world_sizes = [int(w) for w in args.ranks.split(",")]
    except ValueError:
        parser.error("--ranks takes a comma-separated list of integers")
    if any(w < 1 or args.batch % w for w in world_sizes) or args.repeat < 1:
        parser.error("world sizes must divide the batch; --repeat must be positive")
    for tool in ("ember-compile", "ember-run"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            parser.error("no %s in %s" % (tool, args.bin))
    if not os.path.exists(args.topology):
        parser.error("no topology file %s" % args.topology)
    if importlib.util.find_spec("torch") is None:
        print("SKIP: examples/dlrm/export.py needs torch")
        return 77
    work = args.work or tempfile.mkdtemp(prefix="ember-timeline-vs-")
    os.makedirs(work, exist_ok=True)
    compiler = os.path.join(args.bin, "ember-compile")
    runner = os.path.join(args.bin, "ember-run")
    summary = os.path.join(ROOT, "scripts", "ember-trace-summary.py")
    try:
        model_dir = os.path.join(work, "dlrm")
        run([sys.executable, os.path.join(ROOT, "examples", "dlrm", "export.py"), model_dir,
             "--batch", str(args.batch)])
        model = os.path.join(model_dir, "model.onnx")
        for w in world_sizes:
            common = ["--world-size", str(w), "--sharding", "table_wise", "--comm-stream",
                      "--quiet"]
            plan = os.path.join(work, "dlrm_w%d.plan" % w)
            run([compiler, model, "-o", plan] + common)
            measured = os.path.join(work, "measured_w%d.json" % w)
            run([runner, plan, "--inputs", os.path.join(model_dir, "inputs.npz"),
                 "--nproc", str(w), "--repeat", str(args.repeat), "--warmup", "5",
                 "--trace", measured, "--quiet"])
            predicted = os.path.join(work, "predicted_w%d.json" % w)
            run([compiler, model, "-o", predicted, "--emit", "timeline",
                 "--topology", args.topology, "--batch-per-rank", str(args.batch // w),
                 "--ids-per-bag", str(IDS_PER_BAG)] + common)
            print("== %d ranks, global batch %d, %d timed runs ==" % (w, args.batch,
                                                                      args.repeat))
            print(run([sys.executable, summary, predicted, measured, "--top", "6"]),
                  flush=True)
        with open("/proc/loadavg") as f:
            print("load average:", f.read().strip())
    finally:
        if args.keep:
            print("work directory kept:", work)
        elif not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
