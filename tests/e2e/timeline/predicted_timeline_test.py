"""ember-compile --emit timeline on 2- and 4-rank plans: the trace is valid in the trace
format (scripts/ember-trace-summary.py's checks: required keys per ph, pid/tid metadata,
dur >= 0, flows matched and inside their collective's slices), respects the plan's
events, and the communication stream hides communication.

usage: predicted_timeline_test.py EMBER_COMPILE WORKDIR

The model (tests/lit/onnx/Inputs/make_model.py two_bags_and_mlp, onnx.helper only): two
embedding bags and a dense layer. For each case (2 ranks table_wise, 4 ranks table_wise,
4 ranks row_wise; --target cuda) it compiles --emit plan-text and --emit timeline and
checks, per rank:
  - every instruction of the program has exactly one compute/collective slice, on the
    stream the plan gives it;
  - no slice of an instruction that reads a collective's result starts before that
    collective's slice ends, and a collective starts after every instruction before it
    on stream 0 (the event it waits for);
  - slices of one track do not overlap;
  - with the comm stream, exposed comm < comm; with --comm-stream=false, exposed comm
    == comm (everything on stream 0);
and that the bad options are errors that leave no file.
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "ember-trace-summary.py")
MAKE_MODEL = os.path.join(ROOT, "tests", "lit", "onnx", "Inputs", "make_model.py")

spec = importlib.util.spec_from_file_location("trace_summary", SCRIPT)
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)

EPS = 1e-6  # us


def parse_plan_text(text):
    """rank -> [(kernel, inputs, outputs, collective or None, stream)]."""
    programs, current = {}, None
    for line in text.splitlines():
        m = re.match(r"rank (\d+):", line)
        if m:
            current = programs.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"  (%\d+.*?) = (\w+)\(([^)]*)\)(.*)$", line)
        if current is None or not m:
            continue
        outputs = [int(x) for x in re.findall(r"%(\d+):", m.group(1))]
        inputs = [int(x) for x in re.findall(r"%(\d+)", m.group(3))]
        rest = m.group(4)
        collective = re.search(r"\bcollective (\d+)", rest)
        stream = re.search(r"\bstream (\d+)", rest)
        current.append((m.group(2), inputs, outputs,
                        int(collective.group(1)) if collective else None,
                        int(stream.group(1)) if stream else 0))
    return programs


def compile_model(compiler, model, out, *options):
    cmd = [compiler, model, "-o", out, "--quiet", "--target", "cuda"] + list(options)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("FAIL: %s\n%s" % (" ".join(cmd), proc.stderr))


def check_case(compiler, work, model, ranks, sharding, failures):
    name = "%d ranks %s" % (ranks, sharding)
    common = ["--world-size", str(ranks), "--sharding", sharding]
    for streams in (True, False):
        stream_option = "--comm-stream=%s" % ("true" if streams else "false")
        plan_path = os.path.join(work, "plan_%d_%s_%s.txt" % (ranks, sharding, streams))
        compile_model(compiler, model, plan_path, "--emit", "plan-text", stream_option,
                      *common)
        with open(plan_path) as f:
            programs = parse_plan_text(f.read())
        if sorted(programs) != list(range(ranks)):
            failures.append("%s: plan text has ranks %s" % (name, sorted(programs)))
            return
        trace_path = os.path.join(work, "timeline_%d_%s_%s.json"
                                  % (ranks, sharding, streams))
        compile_model(compiler, model, trace_path, "--emit", "timeline", stream_option,
                      *common)
        with open(trace_path) as f:
            data = json.load(f)
        try:
            other, slices, flows = summary.validate(data, trace_path)
        except summary.TraceError as e:
            failures.append("%s: invalid trace: %s" % (name, e))
            continue
        label = "%s, comm stream %s" % (name, "on" if streams else "off")
        if other["kind"] != "predicted" or other["ranks"] != ranks:
            failures.append("%s: otherData %r" % (label, other))
        if not flows and any(ins[3] is not None for p in programs.values()
                             for ins in p):
            failures.append("%s: no flow events for the collectives" % label)
        for rank, program in programs.items():
            check_rank(label, rank, program, slices, streams, failures)
        rows = summary.summarize(other, slices)
        for row in rows:
            if row["comm_us"] <= 0:
                failures.append("%s: rank %d has no communication time" % (label, row["rank"]))
            elif streams and not row["exposed_comm_us"] < row["comm_us"]:
                failures.append("%s: rank %d exposed comm %.6f is not below comm %.6f"
                                % (label, row["rank"], row["exposed_comm_us"],
                                   row["comm_us"]))
            elif not streams and abs(row["exposed_comm_us"] - row["comm_us"]) > EPS:
                failures.append("%s: rank %d exposed comm %.6f != comm %.6f in "
                                "program order" % (label, row["rank"],
                                                   row["exposed_comm_us"], row["comm_us"]))
        print("ok: %s: %s" % (label, ", ".join(
            "rank %d step %.4f comm %.4f exposed %.4f us"
            % (r["rank"], r["step_us"], r["comm_us"], r["exposed_comm_us"]) for r in rows)))


def check_rank(label, rank, program, slices, streams, failures):
    mine = [s for s in slices if s["rank"] == rank and s["cat"] != "wait"]
    by_instruction = {}
    for s in mine:
        if s["instruction"] in by_instruction:
            failures.append("%s: rank %d instruction %d has two slices"
                            % (label, rank, s["instruction"]))
        by_instruction[s["instruction"]] = s
    if sorted(by_instruction) != list(range(len(program))):
        failures.append("%s: rank %d: slices for instructions %s, program has %d"
                        % (label, rank, sorted(by_instruction), len(program)))
        return
    defined_by = {}
    for i, (kernel, inputs, outputs, collective, stream) in enumerate(program):
        s = by_instruction[i]
        if s["name"] != kernel:
            failures.append("%s: rank %d instruction %d is %s, its slice %s"
                            % (label, rank, i, kernel, s["name"]))
        want_cat = "collective" if collective is not None else "compute"
        if s["cat"] != want_cat or s["tid"] != (stream if streams else 0):
            failures.append("%s: rank %d instruction %d (%s): cat %s tid %d, plan says "
                            "%s stream %d" % (label, rank, i, kernel, s["cat"], s["tid"],
                                              want_cat, stream))
        for slot in inputs:
            producer = defined_by.get(slot)
            if producer is None:
                continue
            p = by_instruction[producer]
            if program[producer][3] is not None and s["start"] < p["end"] - EPS:
                failures.append("%s: rank %d instruction %d (%s) starts at %.6f, before "
                                "collective %d (%s) that it reads ends at %.6f"
                                % (label, rank, i, kernel, s["start"], producer,
                                   program[producer][0], p["end"]))
            if s["start"] < p["end"] - EPS:
                failures.append("%s: rank %d instruction %d starts before its input's "
                                "producer %d ends" % (label, rank, i, producer))
        if collective is not None:
            # The event it waits for: everything before it on stream 0 is done.
            for j in range(i):
                q = by_instruction[j]
                if program[j][3] is None and q["end"] > s["start"] + EPS:
                    failures.append("%s: rank %d collective %d starts at %.6f before "
                                    "instruction %d ends at %.6f"
                                    % (label, rank, i, s["start"], j, q["end"]))
        for slot in outputs:
            defined_by[slot] = i
    for tid in (0, 1):
        track = sorted((s for s in slices if s["rank"] == rank and s["tid"] == tid),
                       key=lambda s: s["start"])
        for a, b in zip(track, track[1:]):
            if b["start"] < a["end"] - EPS:
                failures.append("%s: rank %d tid %d: %s and %s overlap"
                                % (label, rank, tid, a["name"], b["name"]))


def check_bad_options(compiler, work, model, failures):
    out = os.path.join(work, "bad.json")
    topology = os.path.join(work, "bad_topology.json")
    with open(topology, "w") as f:
        json.dump({"device_tflops": -1}, f)
    cases = [
        (["--emit", "timeline", "--ids-per-bag", "0"], "--ids-per-bag must be a positive"),
        (["--emit", "timeline", "--ids-per-bag", "nan"], "--ids-per-bag must be a positive"),
        (["--emit", "plan", "--ids-per-bag", "2"], "applies to --emit timeline only"),
        (["--emit", "timeline", "--world-size", "2",
          "--topology", os.path.join(work, "absent.json")], "absent.json"),
        (["--emit", "timeline", "--world-size", "2", "--topology", topology],
         "device_tflops"),
    ]
    for options, expected in cases:
        cmd = [compiler, model, "-o", out, "--quiet"] + options
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode == 0 or expected not in proc.stderr:
            failures.append("%s: status %d, stderr %r (expected %r)"
                            % (" ".join(options), proc.returncode, proc.stderr, expected))
        if os.path.exists(out):
            failures.append("%s: left %s behind" % (" ".join(options), out))
            os.remove(out)
    print("ok: bad options")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    compiler, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        import onnx  # noqa: F401
    except ImportError as e:
        print("SKIP: make_model.py needs onnx:", e)
        return 77
    model = os.path.join(work, "m.onnx")
    subprocess.run([sys.executable, MAKE_MODEL, "two_bags_and_mlp", model], check=True)
    failures = []
    for ranks, sharding in ((2, "table_wise"), (4, "table_wise"), (4, "row_wise")):
        check_case(compiler, work, model, ranks, sharding, failures)
    check_bad_options(compiler, work, model, failures)
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
