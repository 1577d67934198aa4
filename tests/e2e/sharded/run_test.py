"""End-to-end test of sharded compilation and multi-rank execution.

usage: run_test.py CASE EMBER_COMPILE EMBER_RUN WORKDIR

Cases (MODEL is dlrm, the examples/dlrm model; mixed, make_mixed_model.py:
mixed dims, sum/mean/max pooling, per-sample weights, include_last_offset;
or kjt, make_kjt_model.py: a KJT input into an EmbeddingBagCollection with
a table shared by two features, as TorchRec models take their features;
or seq, make_seq_model.py: a KJT into an EmbeddingCollection, sequence
embeddings padded per feature, a table shared by two features):
  MODEL_N     for N ranks (1, 2 or 4) and every sharding (the planner's own
              choice and each forced type): ember-compile --world-size N
              --sharding S, ember-run --nproc N on one global batch of 13
              (uneven over the ranks). Every output equals the single-rank
              plan's (rtol 1e-6) and torch's eager output (rtol 1e-5).
              A few shardings are also compiled with --comm-stream
              --max-batch 13 (the CUDA target's stream schedule and
              static memory plan, run in order by the CPU backend).
  plan_json   --emit sharding-plan writes TorchRec ParameterSharding JSON;
              compiling with --plan of that file gives the same plan
              behaviour; --emit sharding-report prints per-rank memory/cost.
  comm_dtype  --comm-dtype float16/bfloat16 on 2 ranks: close to the exact
              outputs; a bad dtype is refused.
  bad_ids     an id past its table on 2 ranks (table-wise, row-wise):
              ember-run fails naming the id, no outputs.
  infeasible  a topology whose ranks are too small: a clear error listing
              the tables, exit 1, no output file.
  forced_errors  row_wise forced on a max-pooled table, an override naming
              no table, a world size of 0: clear errors, exit 1, no output.
Exits 77 (skip) when torch or numpy is missing for /usr/bin/python3.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DLRM_EXAMPLE = os.path.join(HERE, "..", "..", "..", "examples", "dlrm")
SHARDINGS = ["auto", "table_wise", "row_wise", "column_wise",
             "table_row_wise", "data_parallel"]
BATCH = 13
# Also compiled with --comm-stream --max-batch (the CUDA schedule on the CPU).
COMM_STREAM_SHARDINGS = ("auto", "table_row_wise", "row_wise")

try:
    import numpy as np
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    print("SKIP: needs numpy and torch:", e)
    sys.exit(77)


def run(cmd, timeout=120):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)


def fail(msg, proc=None):
    print("FAIL:", msg)
    if proc is not None:
        print("stdout:", proc.stdout)
        print("stderr:", proc.stderr)
    sys.exit(1)


def make_model(model, work):
    if model == "dlrm":
        proc = run([sys.executable, os.path.join(DLRM_EXAMPLE, "export.py"),
                    work, "--batch", str(BATCH)])
        if proc.returncode != 0:
            fail("examples/dlrm/export.py failed", proc)
        shutil.copy(os.path.join(work, "expected.npy"),
                    os.path.join(work, "expected_prob.npy"))
        return (["dense", "ids0", "offsets0", "ids1", "offsets1", "ids2",
                 "offsets2"], ["prob"])
    script = {"kjt": "make_kjt_model.py", "seq": "make_seq_model.py",
              "mixed": "make_mixed_model.py"}[model]
    proc = run([sys.executable, os.path.join(HERE, script), work, "--batch",
                str(BATCH)])
    if proc.returncode != 0:
        fail(script + " failed", proc)
    io = dict(line.split(None, 1) for line in
              open(os.path.join(work, "io.txt")).read().splitlines())
    return io["inputs"].split(), io["outputs"].split()


def compile_plan(compiler, work, name, flags):
    plan = os.path.join(work, name + ".plan")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o", plan,
                *flags])
    if proc.returncode != 0:
        fail("ember-compile %s failed" % " ".join(flags), proc)
    return plan


def run_plan(runner, plan, work, inputs, outputs, nproc, tag):
    outdir = os.path.join(work, "out_" + tag)
    shutil.rmtree(outdir, ignore_errors=True)
    cmd = [runner, plan, "--output-dir", outdir, "--timeout", "60"]
    if nproc > 1:
        cmd += ["--nproc", str(nproc)]
    for name in inputs:
        cmd += ["--input", "%s=%s" % (name, os.path.join(work, name + ".npy"))]
    proc = run(cmd)
    if proc.returncode != 0:
        fail("ember-run (%s) failed" % tag, proc)
    return {o: np.load(os.path.join(outdir, o + ".npy")) for o in outputs}


def close(got, want, rtol, atol, what):
    if got.shape != want.shape or got.dtype != want.dtype:
        fail("%s: %s %s, expected %s %s" % (what, got.dtype, got.shape,
                                            want.dtype, want.shape))
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        diff = np.max(np.abs(got - want))
        fail("%s: differs (max abs %.3g):\n%s\nvs\n%s" % (what, diff, got,
                                                           want))


def sharded(model, nproc, compiler, runner, work):
    inputs, outputs = make_model(model, work)
    single = run_plan(runner, compile_plan(compiler, work, "single", []),
                      work, inputs, outputs, 1, "single")
    for o in outputs:
        want = np.load(os.path.join(work, "expected_%s.npy" % o))
        close(single[o], want, 1e-5, 1e-6, "single rank vs torch, " + o)
    for sharding in SHARDINGS:
        flags = ["--world-size", str(nproc), "--sharding", sharding,
                 "--ranks-per-node", "2" if nproc >= 2 else "1"]
        plan = compile_plan(compiler, work, "w%d_%s" % (nproc, sharding),
                            flags)
        if nproc > 1:
            data = open(plan, "rb").read()
            kernels = (b"kjt_all_to_all",)
            if model == "seq":
                kernels += (b"sequence_all_to_all",)
            for kernel in kernels:
                if sharding not in ("auto", "data_parallel") \
                        and kernel not in data:
                    fail("the %s plan has no %s instruction"
                         % (sharding, kernel.decode()))
            for r in range(nproc):
                weights = os.path.join(
                    work, "w%d_%s.rank%d.weights" % (nproc, sharding, r))
                if not os.path.isfile(weights):
                    fail("ember-compile wrote no " + weights)
        got = run_plan(runner, plan, work, inputs, outputs, nproc,
                       "w%d_%s" % (nproc, sharding))
        for o in outputs:
            close(got[o], single[o], 1e-6, 1e-7,
                  "%d ranks, %s, %s vs one rank" % (nproc, sharding, o))
        print("%d ranks, %s: equal to one rank" % (nproc, sharding),
              flush=True)
        if nproc > 1 and sharding in COMM_STREAM_SHARDINGS:
            # The CUDA target's schedule (collectives on their own stream,
            # reordered to overlap compute, lifetimes extended for the
            # memory plan), run in program order by the CPU backend.
            tag = "w%d_%s_comm_stream" % (nproc, sharding)
            plan = compile_plan(compiler, work, tag, flags + [
                "--comm-stream", "--max-batch", str(BATCH)])
            got = run_plan(runner, plan, work, inputs, outputs, nproc, tag)
            for o in outputs:
                close(got[o], single[o], 1e-6, 1e-7,
                      "%d ranks, %s, --comm-stream, %s vs one rank"
                      % (nproc, sharding, o))
            print("%d ranks, %s, --comm-stream: equal to one rank"
                  % (nproc, sharding), flush=True)


def plan_json(compiler, runner, work):
    inputs, outputs = make_model("mixed", work)
    out = os.path.join(work, "chosen.json")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o", out,
                "--world-size", "2", "--sharding", "column_wise", "--emit",
                "sharding-plan"])
    if proc.returncode != 0:
        fail("--emit sharding-plan failed", proc)
    plan = json.load(open(out))
    text = json.dumps(plan)
    for key in ("sharding_type", "compute_kernel", "ranks", "shard_offsets",
                "shard_sizes", "placement"):
        if key not in text:
            fail("the exported plan has no '%s': %s" % (key, text))
    report = os.path.join(work, "report.txt")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o", report,
                "--world-size", "2", "--emit", "sharding-report"])
    if proc.returncode != 0 or not os.path.getsize(report):
        fail("--emit sharding-report failed", proc)
    print(open(report).read())
    a = run_plan(runner, compile_plan(compiler, work, "chosen",
                                      ["--world-size", "2"]),
                 work, inputs, outputs, 2, "chosen")
    b = run_plan(runner, compile_plan(compiler, work, "imported",
                                      ["--world-size", "2", "--plan", out]),
                 work, inputs, outputs, 2, "imported")
    for o in outputs:
        close(b[o], a[o], 0, 0, "imported plan vs chosen plan, " + o)


def expect_error(compiler, work, flags, message):
    before = set(os.listdir(work))
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o",
                os.path.join(work, "bad.plan"), *flags])
    if proc.returncode == 0:
        fail("ember-compile %s succeeded" % " ".join(flags), proc)
    if message not in proc.stderr:
        fail("the error does not say '%s'" % message, proc)
    left = sorted(set(os.listdir(work)) - before)
    if left:
        fail("files left behind after an error: %s" % left)
    print(proc.stderr)


def infeasible(compiler, work):
    make_model("mixed", work)
    topo = os.path.join(work, "tiny.json")
    with open(topo, "w") as f:
        json.dump({"world_size": 2, "ranks_per_node": 2,
                   "device_memory_gb": 1e-6, "host_memory_gb": 1e-6}, f)
    expect_error(compiler, work, ["--topology", topo], "memory short by")


def forced_errors(compiler, work):
    make_model("mixed", work)
    # Table c pools with max: row-wise would add partial maxima.
    expect_error(compiler, work, ["--world-size", "2", "--table-sharding",
                                  "/bags.2/Loop=row_wise"],
                 "table '/bags.2/Loop' cannot be row_wise")
    expect_error(compiler, work, ["--world-size", "2", "--table-sharding",
                                  "/bags.9/Loop=row_wise"],
                 "which the model does not have")
    expect_error(compiler, work, ["--world-size", "0"],
                 "--world-size must be at least 1")


def comm_dtype(compiler, runner, work):
    """--comm-dtype float16 / bfloat16: the pooled all-to-all and the
    reduce-scatter send 16-bit values; the outputs stay close to the exact
    ones (the codec's rounding only), and a bad dtype is refused."""
    inputs, outputs = make_model("mixed", work)
    single = run_plan(runner, compile_plan(compiler, work, "single", []),
                      work, inputs, outputs, 1, "single")
    for dtype, rtol in (("float16", 2e-3), ("bfloat16", 2e-2)):
        for sharding in ("table_wise", "row_wise", "column_wise"):
            tag = "%s_%s" % (dtype, sharding)
            plan = compile_plan(compiler, work, tag, [
                "--world-size", "2", "--sharding", sharding,
                "--comm-dtype", dtype])
            got = run_plan(runner, plan, work, inputs, outputs, 2, tag)
            for o in outputs:
                close(got[o], single[o], rtol, rtol,
                      "--comm-dtype %s, %s, %s" % (dtype, sharding, o))
            # The codec must have been applied: 16-bit payloads round.
            if all(np.array_equal(got[o], single[o]) for o in outputs):
                fail("--comm-dtype %s, %s: outputs bit-identical to the "
                     "exact ones; was the payload encoded?"
                     % (dtype, sharding))
            print("--comm-dtype %s, %s: close to exact, not identical"
                  % (dtype, sharding), flush=True)
    expect_error(compiler, work, ["--world-size", "2", "--comm-dtype", "int8"],
                 "--comm-dtype must be float32, float16 or bfloat16")


def bad_ids(compiler, runner, work):
    """An id past its table on 2 ranks (table-wise and row-wise): ember-run
    fails with an error naming the id, within the timeout, no outputs."""
    inputs, outputs = make_model("dlrm", work)
    ids = np.load(os.path.join(work, "ids1.npy"))
    ids[-1] = 3000  # table 1 has 3000 rows
    np.save(os.path.join(work, "ids1.npy"), ids)
    for sharding in ("table_wise", "row_wise"):
        plan = compile_plan(compiler, work, sharding,
                            ["--world-size", "2", "--sharding", sharding])
        outdir = os.path.join(work, "out_" + sharding)
        cmd = [runner, plan, "--nproc", "2", "--output-dir", outdir,
               "--timeout", "20"]
        for name in inputs:
            cmd += ["--input", "%s=%s" % (name,
                                          os.path.join(work, name + ".npy"))]
        proc = run(cmd, timeout=60)
        if proc.returncode == 0:
            fail("ember-run accepted an id past the table (%s)" % sharding,
                 proc)
        if "id 3000" not in proc.stderr or "3000 rows" not in proc.stderr:
            fail("the error does not name the id and the table size", proc)
        if os.path.exists(outdir) and os.listdir(outdir):
            fail("outputs written after a failed run: %s"
                 % os.listdir(outdir))
        print(proc.stderr)


def main():
    case, compiler, runner, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if case == "plan_json":
        plan_json(compiler, runner, work)
    elif case == "comm_dtype":
        comm_dtype(compiler, runner, work)
    elif case == "bad_ids":
        bad_ids(compiler, runner, work)
    elif case == "infeasible":
        infeasible(compiler, work)
    elif case == "forced_errors":
        forced_errors(compiler, work)
    else:
        model, n = case.rsplit("_", 1)
        sharded(model, int(n), compiler, runner, work)
    print("PASS")


if __name__ == "__main__":
    main()
