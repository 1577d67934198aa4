"""End-to-end test of concurrent streams on the CPU backend (issue 14).

usage: run_test.py CASE EMBER_COMPILE EMBER_RUN WORKDIR

Cases:
  MODEL_N   MODEL is dlrm (examples/dlrm, table-wise so that it has
            collectives) or kjt (tests/e2e/sharded/make_kjt_model.py, a KJT
            into two EmbeddingBagCollections; table-wise and column-wise);
            N is 2 or 4 ranks. ember-compile puts the
            collectives on stream 1 by default for several ranks (checked in
            --emit plan-text). ember-run --nproc N with --overlap off
            (program order), --overlap streams, and --overlap streams with
            the communication thread slowed by 20 ms per collective
            (EMBER_TEST_COMM_DELAY_US, test-only): every output is the same
            bytes in all three, and close to the model's reference; the
            slowed run's trace shows stream 0 waiting for the collectives.
  trace_4   the DLRM example on 4 ranks, --repeat 3 --trace --stats: the
            JSON follows docs/trace-format.md (required keys per ph, pids
            0..3, tids 0/1 (and 2, pipelined), dur >= 0, flows with one s/t/f chain per
            collective and batch, each inside its collective's slice, wait
            slices naming real collective instructions); --stats prints each
            rank's split; no part file is left. With --overlap off every
            collective is on track 0 and nothing waits.
  trace_1   one rank (no collectives): one process, no flow events.
  trace_fault  2 ranks, rank 1 exits during its second run: ember-run
            fails, and neither the trace nor a part file is left.
  pipe_MODEL_N  cross-batch pipelining (docs/runtime.md): the plan marks
            its input distribution (input_distribution in --emit
            plan-text); four different batches (--inputs a.npz,b.npz,...)
            run one by one in program order (--overlap off), then with
            --pipeline-depth 2 and 3, and depth 2 with the communication
            thread slowed: every batch's outputs are the same bytes, and
            differ between batches.
            The KJT model also row-wise and column-wise (depth 3, and
            depth 2 slowed).
  pipe_trace_2  the DLRM example (2,048 samples per rank) on 2 ranks,
            four batches twice (--repeat 2),
            --pipeline-depth 2 --trace with the communication threads
            slowed: the trace follows the format, each batch ran every
            instruction once, stage A's collectives ran on the
            communication thread (tid 1) and stage B's on the collective
            thread (tid 2), some of the latter while a later batch's input
            distribution ran.
  pipe_bad  --pipeline-depth 0: usage error; depth 2 on a one-rank plan
            (no marks) or with --overlap off: a clear error; a batch with a
            missing input: an error naming the batch; nothing written.
  bad_args  --overlap sometimes: usage error; --trace into a missing
            directory, or naming a directory: a clear error before anything
            runs (no output directory made), also with --nproc 2.
Exits 77 (skip) when torch or numpy is missing for /usr/bin/python3.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DLRM_EXAMPLE = os.path.join(HERE, "..", "..", "..", "examples", "dlrm")
SHARDED = os.path.join(HERE, "..", "sharded")
BATCH = 13
DELAY_US = 20000

try:
    import numpy as np
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    print("SKIP: needs numpy and torch:", e)
    sys.exit(77)


def run(cmd, timeout=180, env=None):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, env=env)


def fail(msg, proc=None):
    print("FAIL:", msg)
    if proc is not None:
        print("stdout:", proc.stdout)
        print("stderr:", proc.stderr)
    sys.exit(1)


def make_model(model, work, batch=BATCH):
    if model == "dlrm":
        proc = run([sys.executable, os.path.join(DLRM_EXAMPLE, "export.py"),
                    work, "--batch", str(batch)])
        if proc.returncode != 0:
            fail("examples/dlrm/export.py failed", proc)
        shutil.copy(os.path.join(work, "expected.npy"),
                    os.path.join(work, "expected_prob.npy"))
        return (["dense", "ids0", "offsets0", "ids1", "offsets1", "ids2",
                 "offsets2"], ["prob"])
    proc = run([sys.executable, os.path.join(SHARDED, "make_kjt_model.py"),
                work, "--batch", str(BATCH)])
    if proc.returncode != 0:
        fail("make_kjt_model.py failed", proc)
    io = dict(line.split(None, 1) for line in
              open(os.path.join(work, "io.txt")).read().splitlines())
    return io["inputs"].split(), io["outputs"].split()


def compile_plan(compiler, work, name, flags):
    plan = os.path.join(work, name + ".plan")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o", plan,
                "--quiet", *flags])
    if proc.returncode != 0:
        fail("ember-compile %s failed" % " ".join(flags), proc)
    text = run([compiler, os.path.join(work, "model.onnx"), "-o",
                os.path.join(work, name + ".plan.txt"), "--emit",
                "plan-text", "--quiet", *flags])
    if text.returncode != 0:
        fail("ember-compile --emit plan-text failed", text)
    return plan, open(os.path.join(work, name + ".plan.txt")).read()


def run_plan(runner, plan, work, inputs, nproc, tag, extra=(), env=None):
    outdir = os.path.join(work, "out_" + tag)
    shutil.rmtree(outdir, ignore_errors=True)
    cmd = [runner, plan, "--output-dir", outdir, "--timeout", "60",
           "--quiet", *extra]
    if nproc > 1:
        cmd += ["--nproc", str(nproc)]
    for name in inputs:
        cmd += ["--input", "%s=%s" % (name, os.path.join(work, name + ".npy"))]
    proc = run(cmd, env=env)
    if proc.returncode != 0:
        fail("ember-run (%s) failed" % tag, proc)
    return outdir, proc


def output_bytes(outdir, outputs):
    return {o: open(os.path.join(outdir, o + ".npy"), "rb").read()
            for o in outputs}


def check_same_bytes(model, nproc, compiler, runner, work):
    inputs, outputs = make_model(model, work)
    shardings = ["table_wise"] if model == "dlrm" else ["table_wise",
                                                     "column_wise"]
    for sharding in shardings:
        plan, text = compile_plan(compiler, work, "%s_%d" % (sharding, nproc),
                                  ["--world-size", str(nproc), "--sharding",
                                   sharding])
        if " stream 1 " not in text:
            fail("%s on %d ranks: no collective on stream 1 in the plan"
                 % (sharding, nproc))
        off, _ = run_plan(runner, plan, work, inputs, nproc, "off",
                          ["--overlap", "off"])
        streams, _ = run_plan(runner, plan, work, inputs, nproc, "streams",
                              ["--overlap", "streams", "--repeat", "3"])
        env = dict(os.environ, EMBER_TEST_COMM_DELAY_US=str(DELAY_US))
        trace = os.path.join(work, "slow.json")
        slow, _ = run_plan(runner, plan, work, inputs, nproc, "slow",
                           ["--overlap", "streams", "--trace", trace], env)
        want = output_bytes(off, outputs)
        for tag, got in (("streams", output_bytes(streams, outputs)),
                         ("slowed streams", output_bytes(slow, outputs))):
            for o in outputs:
                if got[o] != want[o]:
                    fail("%s %s on %d ranks: output %s with %s differs from "
                         "program order" % (model, sharding, nproc, o, tag))
        for o in outputs:
            got = np.load(os.path.join(off, o + ".npy"))
            ref = np.load(os.path.join(work, "expected_%s.npy" % o))
            if got.shape != ref.shape or not np.allclose(got, ref, rtol=1e-5,
                                                         atol=1e-6):
                fail("%s %s: output %s is not the model's" % (model, sharding,
                                                              o))
        # Stream 0 waited for the slowed collectives on every rank.
        events = json.load(open(trace))["traceEvents"]
        for rank in range(nproc):
            waits = [e["dur"] for e in events if e.get("cat") == "wait" and
                     e["pid"] == rank and e["tid"] == 0]
            if not waits or max(waits) < DELAY_US / 1e3 / 2:
                fail("rank %d: stream 0 did not wait for the slowed "
                     "collectives (waits %s us)" % (rank, waits))
        print("ok: %s %s on %d ranks, same bytes in program order, streams "
              "and slowed streams" % (model, sharding, nproc))


REQUIRED = {"X": ["name", "cat", "ph", "ts", "dur", "pid", "tid", "args"],
            "M": ["name", "ph", "pid", "args"],
            "s": ["name", "cat", "ph", "ts", "pid", "tid", "id"],
            "t": ["name", "cat", "ph", "ts", "pid", "tid", "id"],
            "f": ["name", "cat", "ph", "ts", "pid", "tid", "id", "bp"]}


def check_trace(path, ranks, overlap):
    data = json.load(open(path))
    for key in ("traceEvents", "displayTimeUnit", "otherData"):
        if key not in data:
            fail("trace: no '%s'" % key)
    other = data["otherData"]
    if other.get("ember_trace") != 1 or other.get("kind") != "measured" or \
            other.get("ranks") != ranks or other.get("overlap") != overlap:
        fail("trace: otherData %s" % other)
    events = data["traceEvents"]
    for e in events:
        ph = e.get("ph")
        if ph not in REQUIRED:
            fail("trace: unexpected ph in %s" % e)
        for key in REQUIRED[ph]:
            if key not in e:
                fail("trace: %s event without '%s': %s" % (ph, key, e))
        if ph == "X" and (e["dur"] < 0 or e["ts"] < 0):
            fail("trace: negative time in %s" % e)
    names = {(e["pid"], e.get("tid"), e["name"]): e["args"]["name"]
             for e in events if e["ph"] == "M"}
    for r in range(ranks):
        if names.get((r, None, "process_name")) != "rank %d" % r:
            fail("trace: no process_name for rank %d" % r)
        if names.get((r, 0, "thread_name")) != "stream 0 (compute)" or \
                names.get((r, 1, "thread_name")) != "stream 1 (communication)":
            fail("trace: thread names of rank %d" % r)
        if any(e["ph"] == "X" and e["pid"] == r and e["tid"] == 2 for e in events) and \
                names.get((r, 2, "thread_name")) != \
                "stream 1 (output collectives, pipelined)":
            fail("trace: no thread name for track 2 of rank %d" % r)
    slices = [e for e in events if e["ph"] == "X"]
    if {e["pid"] for e in slices} != set(range(ranks)):
        fail("trace: pids %s" % sorted({e["pid"] for e in slices}))
    if {e["tid"] for e in slices} - {0, 1, 2}:
        fail("trace: tids %s" % sorted({e["tid"] for e in slices}))
    collectives, computes = {}, {}
    for e in slices:
        if e["cat"] not in ("compute", "collective", "wait"):
            fail("trace: cat of %s" % e)
        args = e["args"]
        if not isinstance(args.get("instruction"), int):
            fail("trace: no instruction in %s" % e)
        if e["cat"] != "wait":
            for key in ("bytes", "location"):
                if key not in args:
                    fail("trace: no args.%s in %s" % (key, e))
        if e["cat"] == "compute":
            computes.setdefault(e["pid"], {})[args["instruction"]] = e["name"]
        if e["cat"] == "collective":
            collectives.setdefault(e["pid"], {})[args["instruction"]] = \
                e["name"]
            if overlap == "streams" and e["tid"] not in (1, 2):
                fail("trace: a collective off the communication track: %s"
                     % e)
            if overlap == "off" and e["tid"] != 0:
                fail("trace: in program order a collective on track 1: %s"
                     % e)
    if not collectives and ranks > 1:
        fail("trace: no collective slices")
    for e in slices:
        if e["cat"] != "wait":
            continue
        if overlap == "off":
            fail("trace: a wait in program order: %s" % e)
        # Stream 0 waits for collectives; stream 1 for the compute that
        # feeds a collective.
        other = (collectives if e["tid"] == 0 else computes).get(e["pid"], {})
        awaited = other.get(e["args"]["instruction"])
        if awaited is None or e["name"] != "wait " + awaited:
            fail("trace: %s waits for no instruction of the other stream of "
                 "rank %d" % (e, e["pid"]))
    flows = [e for e in events if e["ph"] in "stf"]
    if ranks == 1:
        if flows:
            fail("trace: flow events in a one-rank trace")
        return data
    chains = {}
    for e in flows:
        chains.setdefault(e["id"], []).append(e)
        inside = [x for x in slices if x["pid"] == e["pid"] and
                  x["tid"] == e["tid"] and x["cat"] == "collective" and
                  x["name"] == e["name"] and
                  x["ts"] <= e["ts"] <= x["ts"] + x["dur"] + 0.002]
        if not inside:
            fail("trace: flow %s is not inside a collective slice" % e)
    expect = ["s"] + ["t"] * (ranks - 2) + ["f"]
    for fid, chain in chains.items():
        chain.sort(key=lambda x: x["pid"])
        if [x["pid"] for x in chain] != list(range(ranks)) or \
                [x["ph"] for x in chain] != expect or \
                len({x["name"] for x in chain}) != 1 or \
                chain[-1].get("bp") != "e":
            fail("trace: flow chain %s is %s" % (fid, chain))
    ncoll = len(collectives[0])
    if len(chains) != ncoll * data["otherData"]["runs"]:
        fail("trace: %d flow chains for %d collectives x %d runs" % (
            len(chains), ncoll, data["otherData"]["runs"]))
    return data


def trace_case(nproc, compiler, runner, work):
    inputs, _ = make_model("dlrm", work)
    flags = ["--world-size", str(nproc)]
    if nproc > 1:
        flags += ["--sharding", "table_wise"]
    plan, _ = compile_plan(compiler, work, "plan", flags)
    for overlap in ("streams", "off"):
        trace = os.path.join(work, "trace_%s.json" % overlap)
        _, proc = run_plan(runner, plan, work, inputs, nproc, overlap,
                           ["--overlap", overlap, "--repeat", "3", "--trace",
                            trace, "--stats"])
        mode = overlap if nproc > 1 else "off"
        check_trace(trace, nproc, mode)
        for r in range(nproc):
            line = [x for x in proc.stdout.splitlines()
                    if x.startswith("rank %d: step " % r)]
            if not line or "exposed communication" not in line[0] or \
                    "overlap " + mode not in line[0]:
                fail("--stats: no split for rank %d" % r, proc)
        leftovers = glob.glob(trace + ".rank*.part") + \
            glob.glob(os.path.join(work, ".*tmp*"))
        if leftovers:
            fail("trace parts left behind: %s" % leftovers)
    print("ok: %d-rank traces follow docs/trace-format.md" % nproc)


def bad_args(compiler, runner, work):
    os.makedirs(work, exist_ok=True)
    inputs, _ = make_model("dlrm", work)
    plan, _ = compile_plan(compiler, work, "plan", ["--world-size", "2",
                                                    "--sharding",
                                                    "table_wise"])
    base = [runner, plan, "--quiet"] + [
        x for name in inputs
        for x in ("--input", "%s=%s" % (name, os.path.join(work,
                                                           name + ".npy")))]
    proc = run(base + ["--overlap", "sometimes", "--nproc", "2"])
    if proc.returncode != 2 or "--overlap must be streams or off" not in \
            proc.stderr:
        fail("--overlap sometimes: expected a usage error", proc)
    outdir = os.path.join(work, "out")
    for nproc in (["--nproc", "2"], []):
        for bad, why in ((os.path.join(work, "missing", "t.json"),
                          "t.json"),
                         (work, "is a directory")):
            shutil.rmtree(outdir, ignore_errors=True)
            cmd = base + ["--trace", bad, "--output-dir", outdir] + nproc
            env = dict(os.environ, RANK="0", WORLD_SIZE="1") if not nproc \
                else None
            proc = run(cmd, timeout=60, env=env)
            if proc.returncode != 1 or "--trace" not in proc.stderr or \
                    why not in proc.stderr:
                fail("--trace %s: expected a clear error" % bad, proc)
            if os.path.exists(outdir) or os.path.exists(bad + ".rank0.part"):
                fail("--trace %s: something was written" % bad, proc)
    print("ok: bad --overlap and --trace refused before running")


def trace_fault(compiler, runner, work):
    """A rank that dies mid-run: the run fails, no trace and no part left."""
    inputs, _ = make_model("dlrm", work)
    plan, _ = compile_plan(compiler, work, "plan", ["--world-size", "2",
                                                    "--sharding",
                                                    "table_wise"])
    trace = os.path.join(work, "trace.json")
    cmd = [runner, plan, "--quiet", "--nproc", "2", "--timeout", "10",
           "--repeat", "3", "--trace", trace, "--output-dir",
           os.path.join(work, "out")]
    for name in inputs:
        cmd += ["--input", "%s=%s" % (name, os.path.join(work, name + ".npy"))]
    env = dict(os.environ, EMBER_RUN_TEST_FAULT="1:exit@1")
    proc = run(cmd, timeout=120, env=env)
    if proc.returncode == 0:
        fail("a rank exited mid-run but ember-run succeeded", proc)
    left = [f for f in os.listdir(work) if f.startswith("trace.json")]
    if left or os.path.exists(os.path.join(work, "out")):
        fail("a failed run left %s" % left, proc)
    print("ok: a failed run leaves no trace and no part")


def make_batches(work, inputs, count=4):
    """count .npz batches: the exported inputs, floats scaled and ids
    rotated (still valid) per batch; their paths."""
    arrays = {n: np.load(os.path.join(work, n + ".npy")) for n in inputs}
    paths = []
    for k in range(count):
        batch = {}
        for name, a in arrays.items():
            if a.dtype.kind == "f":
                batch[name] = (a * (1.0 + 0.25 * k)).astype(a.dtype)
            elif name.startswith("ids"):  # one table each: still valid
                batch[name] = np.roll(a, k)
            else:
                batch[name] = a
        path = os.path.join(work, "batch%d.npz" % k)
        np.savez(path, **batch)
        paths.append(path)
    return paths


def run_batches(runner, plan, work, batches, nproc, tag, extra=(), env=None):
    outdir = os.path.join(work, "out_" + tag)
    shutil.rmtree(outdir, ignore_errors=True)
    cmd = [runner, plan, "--output-dir", outdir, "--timeout", "60",
           "--quiet", "--inputs", ",".join(batches), *extra]
    if nproc > 1:
        cmd += ["--nproc", str(nproc)]
    proc = run(cmd, env=env)
    if proc.returncode != 0:
        fail("ember-run (%s) failed" % tag, proc)
    return outdir, proc


def check_pipelined(model, nproc, compiler, runner, work):
    inputs, outputs = make_model(model, work)
    batches = make_batches(work, inputs)
    # The KJT model also row-wise (stage B's collective a reduce-scatter)
    # and column-wise (several pooled pieces per table).
    shardings = ["table_wise"] if model == "dlrm" else ["table_wise",
                                                     "row_wise",
                                                     "column_wise"]

    def read(outdir):
        return [{o: open(os.path.join(outdir, "batch%d" % k, o + ".npy"),
                         "rb").read() for o in outputs}
                for k in range(len(batches))]

    slow_env = dict(os.environ, EMBER_TEST_COMM_DELAY_US=str(DELAY_US))
    for sharding in shardings:
        plan, text = compile_plan(compiler, work, "%s_%d" % (sharding, nproc),
                                  ["--world-size", str(nproc), "--sharding",
                                   sharding])
        if " input_distribution" not in text:
            fail("%s %s on %d ranks: no input_distribution in the plan" % (
                model, sharding, nproc))
        ref_dir, _ = run_batches(runner, plan, work, batches, nproc, "off",
                                 ["--overlap", "off"])
        want = read(ref_dir)
        if want[0] == want[1]:
            fail("batches 0 and 1 give the same outputs: the test sees "
                 "nothing")
        runs = [("depth3", ["--pipeline-depth", "3"], None),
                ("slow2", ["--pipeline-depth", "2"], slow_env)]
        if sharding == "table_wise":
            runs += [("depth2", ["--pipeline-depth", "2", "--repeat", "2"],
                      None),
                     ("slow3", ["--pipeline-depth", "3"], slow_env)]
        for tag, extra, env in runs:
            outdir, proc = run_batches(runner, plan, work, batches, nproc,
                                       tag, extra, env)
            if read(outdir) != want:
                fail("%s %s on %d ranks, %s: outputs differ from the batches "
                     "run one by one in program order" % (
                         model, sharding, nproc, tag), proc)
            if "pipeline depth" not in proc.stdout:
                fail("%s: no pipeline line" % tag, proc)
        print("ok: %s %s on %d ranks, pipelined (%s): the bytes of "
              "program order, batch by batch" % (
                  model, sharding, nproc,
                  ", ".join(tag for tag, _, _ in runs)))


def stage_a_sizes(text, nproc):
    """Per rank, how many instructions the plan text marks as the input
    distribution (a prefix of the rank's program), and how many it has."""
    sizes, current = [], None
    for line in text.splitlines():
        if line.startswith("rank "):
            current = [0, 0]
            sizes.append(current)
            continue
        if current is None or not line.startswith("  ") or \
                line.split()[0] in ("input", "const", "output"):
            continue
        current[1] += 1
        if " input_distribution" in line:
            current[0] += 1
    if len(sizes) != nproc:
        fail("plan text: %d rank programs for %d ranks" % (len(sizes), nproc))
    return sizes


def pipe_trace(nproc, compiler, runner, work):
    """A pipelined trace (depth 2, the communication threads slowed): the
    format holds, every batch ran every instruction of every rank once,
    the flows link each collective of each batch, and on every rank the
    stage-B collectives ran on their own thread, some beside a later
    batch's input distribution (docs/runtime.md, "Cross-batch
    pipelining"). With the communication threads slowed, the caller mostly
    waits for the input distribution: whether a stage-B collective also
    overlaps its compute is printed, not required."""
    # Batches of 2,048 samples per rank: the caller's compute takes longer
    # than a thread hand-off.
    inputs, _ = make_model("dlrm", work, 2048 * nproc)
    batches = make_batches(work, inputs)
    plan, text = compile_plan(compiler, work, "plan",
                              ["--world-size", str(nproc), "--sharding",
                               "table_wise"])
    sizes = stage_a_sizes(text, nproc)
    trace = os.path.join(work, "pipe.json")
    slow_env = dict(os.environ, EMBER_TEST_COMM_DELAY_US=str(DELAY_US))
    _, proc = run_batches(runner, plan, work, batches, nproc, "pipe",
                          ["--pipeline-depth", "2", "--repeat", "2",
                           "--trace", trace, "--stats"], slow_env)
    data = check_trace(trace, nproc, "streams")
    runs = 2 * len(batches)  # the list twice: batches 0..7
    if data["otherData"]["runs"] != runs:
        fail("trace: %s runs for %d batches" % (data["otherData"]["runs"],
                                                runs))
    slices = [e for e in data["traceEvents"] if e["ph"] == "X"]
    for e in slices:
        if not isinstance(e["args"].get("batch"), int):
            fail("trace: a pipelined slice without args.batch: %s" % e)
    for rank, (stage_a, count) in enumerate(sizes):
        mine = [e for e in slices if e["pid"] == rank]
        for b in range(runs):
            ran = sorted(e["args"]["instruction"] for e in mine
                         if e["cat"] != "wait" and e["args"]["batch"] == b)
            if ran != list(range(count)):
                fail("rank %d batch %d ran instructions %s, not each of its "
                     "%d once" % (rank, b, ran, count))
        for e in mine:
            if e["cat"] == "collective" and \
                    e["tid"] != (1 if e["args"]["instruction"] < stage_a else 2):
                fail("rank %d: collective %s on the wrong thread" % (rank, e))
        if not any(c["cat"] == "collective" and c["tid"] == 2 and
                   a["tid"] == 1 and a["cat"] != "wait" and
                   a["args"]["batch"] > c["args"]["batch"] and
                   c["ts"] < a["ts"] + a["dur"] and a["ts"] < c["ts"] + c["dur"]
                   for c in mine for a in mine):
            fail("rank %d: no stage-B collective ran beside a later batch's "
                 "input distribution" % rank)
        overlapped = []
        for b in range(runs):
            stage_b = [e for e in mine if e["cat"] == "collective" and
                       e["args"]["batch"] == b and
                       e["args"]["instruction"] >= stage_a]
            computes = [e for e in mine if e["cat"] == "compute" and
                        e["tid"] == 0]
            if not stage_b:
                fail("rank %d: no stage-B collective of batch %d" % (rank, b))
            if any(c["ts"] < x["ts"] + x["dur"] and x["ts"] < c["ts"] +
                   c["dur"] for c in stage_b for x in computes):
                overlapped.append(b)
        print("rank %d: stage-B collectives of batches %s overlap the "
              "caller's compute" % (rank, overlapped))
    print("ok: a pipelined %d-rank trace: every batch whole, flows linked, "
          "stage-B collectives on their own thread beside later input "
          "distributions and the caller's compute" % nproc)


def pipe_bad(compiler, runner, work):
    inputs, _ = make_model("dlrm", work)
    batches = make_batches(work, inputs, 2)
    plan, _ = compile_plan(compiler, work, "plan", ["--world-size", "2",
                                                    "--sharding",
                                                    "table_wise"])
    single, text = compile_plan(compiler, work, "single", [])
    if " input_distribution" in text:
        fail("a one-rank plan marks an input distribution")
    outdir = os.path.join(work, "out")
    base = ["--inputs", ",".join(batches), "--output-dir", outdir,
            "--quiet", "--timeout", "20"]
    proc = run([runner, plan, *base, "--pipeline-depth", "0", "--nproc",
                "2"])
    if proc.returncode != 2 or "--pipeline-depth needs an integer >= 1" \
            not in proc.stderr:
        fail("--pipeline-depth 0: expected a usage error", proc)
    proc = run([runner, single, *base, "--pipeline-depth", "2"])
    if proc.returncode != 1 or "marks no input distribution" not in \
            proc.stderr:
        fail("depth 2 on a one-rank plan: expected a clear error", proc)
    proc = run([runner, plan, *base, "--pipeline-depth", "2", "--overlap",
                "off", "--nproc", "2"])
    if proc.returncode != 1 or "overlap 'off'" not in proc.stderr:
        fail("depth 2 with --overlap off: expected a clear error", proc)
    # Batch 1 without its dense input.
    arrays = dict(np.load(batches[1]))
    del arrays["dense"]
    np.savez(batches[1], **arrays)
    proc = run([runner, plan, *base, "--pipeline-depth", "2", "--nproc",
                "2"], timeout=120)
    if proc.returncode != 1 or "batch 1" not in proc.stderr:
        fail("a batch without an input: expected an error naming it", proc)
    if os.path.exists(outdir):
        fail("a failed pipelined run wrote outputs")
    print("ok: bad --pipeline-depth uses refused with clear errors")


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    case, compiler, runner, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if case in ("dlrm_2", "dlrm_4", "kjt_2", "kjt_4"):
        model, n = case.split("_")
        check_same_bytes(model, int(n), compiler, runner, work)
    elif case == "pipe_trace_2":
        pipe_trace(2, compiler, runner, work)
    elif case.startswith("pipe_") and case != "pipe_bad":
        _, model, n = case.split("_")
        check_pipelined(model, int(n), compiler, runner, work)
    elif case == "pipe_bad":
        pipe_bad(compiler, runner, work)
    elif case == "trace_4":
        trace_case(4, compiler, runner, work)
    elif case == "trace_1":
        trace_case(1, compiler, runner, work)
    elif case == "trace_fault":
        trace_fault(compiler, runner, work)
    elif case == "bad_args":
        bad_args(compiler, runner, work)
    else:
        fail("unknown case " + case)


if __name__ == "__main__":
    main()
