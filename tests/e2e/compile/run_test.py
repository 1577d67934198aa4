"""End-to-end test of ember-compile: torch model -> ONNX -> plan -> ember-run.

usage: run_test.py CASE EMBER_COMPILE EMBER_RUN WORKDIR

Cases:
  full       EmbeddingBag(sum) + Linear/ReLU + concat + Linear/Sigmoid: the
             plan's output matches torch's eager output (rtol 1e-5)
  full_batch1  the same with a batch of one (one empty bag)
  full_mean  the same with EmbeddingBag(mode="mean") and a batch of 6
  mlp        the same without the embedding bag
  emit_mlir  --emit mlir writes the IR after the passes, and no plan
  mlir_generic     Inputs/generic_ops.mlir (MLIR input, every op emitted
             as its own kernel: transpose, reshape, matmul, sub, relu,
             sigmoid, concat, tanh, add) against numpy, two outputs, with a
             text plan (.plan.txt)
  bad_clamp  Inputs/bad_clamp.mlir (a clamp that is not a ReLU): error at
             file:line:col, exit 1, no output files
  unsupported_op   a model with an op outside the emitter's subset
             (z[idx] = v with run-time idx, imported as tosa.scatter):
             error naming the op and its node, exit 1, no .plan/.weights
  truncated_onnx   a cut-off ONNX file: error, exit 1, no .plan/.weights
  dlrm       examples/dlrm (3 EmbeddingBag tables, bottom MLP, view((B, -1,
             d)), bmm dot interaction with Z[:, li, lj], top MLP) exported by its
             export.py, batch 37: plan output matches torch eager
  dlrm_batch1  the same with a batch of one
  bad_insert_slice Inputs/bad_insert_slice.mlir (a write into part of a
             run-time dim over a run-time size): error at file:line:col,
             exit 1, no output files
  bad_reshape      Inputs/bad_reshape.mlir (tensor.reshape to two quotients
             of run-time dims): error, exit 1, no output files
  dense_MODEL  make_dense_model.py MODEL (dcn, slice_write,
             concat_reshape, norm, gather, bmm, interaction_dlrm/torchrec/
             self/shuffled) at batch 5 and 1: every output matches torch
             eager (rtol 1e-5), the plan holds the expected kernels (fused
             softmax/layer_norm/dot_interaction) and not others
  nested_slice_write  Inputs/nested_slice_write.mlir (writes through
             slices of slices, strided, into a full-range slice of a clone)
             at batch 4 and 1 against numpy
  dcn_example      examples/dlrm export.py --arch dcn (full rank, batch 19
             and 1) and --arch dcn --low-rank 8 (batch 19): output matches
             torch eager
  mlir_generic_planned  the same with --max-batch 8: the memory plan puts
             relu, sigmoid, tanh and t + t in place over their inputs
  dlrm_max_batch   examples/dlrm compiled with --max-batch 64 --memory-stats: the
             memory planner places the batch-sized buffers in a static arena
             smaller than their sum; batches 64 and 1 match torch eager,
             batch 65 is refused with an error naming the bound; the static
             arena (ember-run's arena_bytes) is smaller than the dynamic
             arena of the plan compiled with --no-memory-plan
  target_cuda      --target cuda writes a plan that this (CPU) ember-run
             refuses with an error naming the target
  dump_after_each  --dump-after-each DIR writes 00-input.mlir and one
             numbered file per pass (a header line, then the IR), the last one
             equal to --emit mlir
Exits 77 (skip) when torch or onnx is missing for /usr/bin/python3.
"""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DLRM_EXAMPLE = os.path.join(HERE, "..", "..", "..", "examples", "dlrm")
DLRM_INPUTS = ["dense", "ids0", "offsets0", "ids1", "offsets1", "ids2",
               "offsets2"]

try:
    import numpy as np
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    print("SKIP: needs numpy and torch:", e)
    sys.exit(77)


def run(cmd):
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


def fail(msg, proc=None):
    print("FAIL:", msg)
    if proc is not None:
        print("stdout:", proc.stdout)
        print("stderr:", proc.stderr)
    sys.exit(1)


def make_model(work, *flags):
    proc = run([sys.executable, os.path.join(HERE, "make_model.py"), work,
                *flags])
    if proc.returncode != 0:
        fail("make_model.py failed", proc)


def outputs_absent(work, before):
    """No file appeared in `work` (plan, weights or temporary files)."""
    left = sorted(set(os.listdir(work)) - set(before))
    if left:
        fail("files left behind after an error: %s" % left)


def dlrm(compiler, runner, work, batch):
    proc = run([sys.executable, os.path.join(DLRM_EXAMPLE, "export.py"), work,
                "--batch", str(batch)])
    if proc.returncode != 0:
        fail("examples/dlrm/export.py failed", proc)
    compile_and_run(compiler, runner, work, DLRM_INPUTS,
                    ["embedding_bag", "linear", "dot_interaction", "concat"])
    text = plan_text(compiler, work)
    for kernel in ("matmul", "gather", "transpose"):
        if 'kernel: "%s"' % kernel in text:
            fail("the fused interaction should leave no %s" % kernel)
    # 3 embedding_bag, 6 linear, concat of the pooled embeddings and
    # dot_interaction (op by op the interaction took 12 instructions).
    if count_instructions(text) != 11:
        fail("expected 11 instructions, the plan has %d"
             % count_instructions(text))


def plan_text(compiler, work):
    """The model compiled again as a text plan."""
    plan = os.path.join(work, "text.plan.txt")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o", plan])
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    return open(plan).read()


def compile_and_run(compiler, runner, work, input_names, kernels,
                    flags=(), inputs_dir=None, expected=None):
    plan = os.path.join(work, "model.plan")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o", plan,
                *flags])
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    for f in ("model.plan", "model.rank0.weights"):
        if not os.path.isfile(os.path.join(work, f)):
            fail("ember-compile did not write " + f)
    data = open(plan, "rb").read()
    for kernel in kernels:
        if kernel.encode() not in data:
            fail("the plan has no %s instruction" % kernel)
    proc, got = run_plan(runner, plan, work, input_names, inputs_dir)
    if proc.returncode != 0:
        fail("ember-run failed", proc)
    want = np.load(expected or os.path.join(work, "expected.npy"))
    if got.shape != want.shape or got.dtype != want.dtype:
        fail("output is %s %s, torch gives %s %s"
             % (got.dtype, got.shape, want.dtype, want.shape))
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        fail("output differs from torch:\n%s\nvs\n%s" % (got, want))
    print("max abs difference %.3g over %d values"
          % (float(np.max(np.abs(got - want))), want.size))


def run_plan(runner, plan, work, input_names, inputs_dir=None, extra=()):
    """Runs ember-run on WORK/<name>.npy; returns the process and prob."""
    outdir = os.path.join(work, "out")
    shutil.rmtree(outdir, ignore_errors=True)
    cmd = [runner, plan, "--output-dir", outdir, *extra]
    for name in input_names:
        cmd += ["--input", "%s=%s" % (name, os.path.join(inputs_dir or work,
                                                         name + ".npy"))]
    proc = run(cmd)
    prob = os.path.join(outdir, "prob.npy")
    return proc, (np.load(prob) if proc.returncode == 0 else None)


def arena_bytes(runner, plan, work):
    """ember-run's arena_bytes for the DLRM inputs in WORK."""
    report = os.path.join(work, "report.json")
    proc, _ = run_plan(runner, plan, work, DLRM_INPUTS,
                       extra=["--report-json", report, "--repeat", "2"])
    if proc.returncode != 0:
        fail("ember-run failed", proc)
    import json
    return json.load(open(report))["arena_bytes"]


def dlrm_max_batch(compiler, runner, work):
    export = os.path.join(DLRM_EXAMPLE, "export.py")
    big, small, over = (os.path.join(work, d) for d in ("b64", "b1", "b65"))
    for d, b in ((big, 64), (small, 1), (over, 65)):
        proc = run([sys.executable, export, d, "--batch", str(b)])
        if proc.returncode != 0:
            fail("examples/dlrm/export.py failed", proc)
    shutil.copy(os.path.join(big, "model.onnx"), work)
    plan = os.path.join(work, "model.plan")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o", plan,
                "--max-batch", "64", "--memory-stats"])
    if proc.returncode != 0:
        fail("ember-compile --max-batch failed", proc)
    print(proc.stderr)
    import re
    m = re.search(r"memory plan: (\d+) slots in a static arena of (\d+) "
                  r"bytes \((\d+) without reuse\)", proc.stderr)
    if not m:
        fail("--memory-stats printed no memory plan", proc)
    planned, arena, total = (int(g) for g in m.groups())
    if planned < 10 or not 0 < arena < total:
        fail("expected a static arena smaller than the sum of %d planned "
             "slots: %d vs %d" % (planned, arena, total))
    for d in (big, small):
        proc, got = run_plan(runner, plan, work, DLRM_INPUTS, inputs_dir=d)
        if proc.returncode != 0:
            fail("ember-run failed", proc)
        want = np.load(os.path.join(d, "expected.npy"))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5,
                                                      atol=1e-6):
            fail("output differs from torch eager for %s" % d)
    proc, _ = run_plan(runner, plan, work, DLRM_INPUTS, inputs_dir=over)
    if proc.returncode == 0 or "above the plan's bound of 64" not in proc.stderr:
        fail("a batch of 65 must be refused naming the bound", proc)
    # The planned arena against the dynamic one, same inputs (batch 64).
    for name in DLRM_INPUTS:
        shutil.copy(os.path.join(big, name + ".npy"), work)
    dynamic_plan = os.path.join(work, "dynamic.plan")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o",
                dynamic_plan, "--no-memory-plan"])
    if proc.returncode != 0:
        fail("ember-compile --no-memory-plan failed", proc)
    planned_bytes = arena_bytes(runner, plan, work)
    dynamic_bytes = arena_bytes(runner, dynamic_plan, work)
    print("arena bytes at batch 64: planned %d, dynamic %d"
          % (planned_bytes, dynamic_bytes))
    if not planned_bytes < dynamic_bytes:
        fail("the memory plan should need less memory than the dynamic arena")


def count_instructions(plan_text):
    return plan_text.count("instructions {")


def dense_case(compiler, runner, work, model, batches, kernels, absent=()):
    """make_dense_model.py MODEL at each of BATCHES -> ember-compile (a text
    plan, to check its kernels) -> ember-run; every output within rtol 1e-5
    of torch's eager output."""
    cmd = [sys.executable, os.path.join(HERE, "make_dense_model.py"), work,
           model]
    for batch in batches:
        cmd += ["--batch", str(batch)]
    proc = run(cmd)
    if proc.returncode != 0:
        fail("make_dense_model.py failed", proc)
    for batch in batches:
        print("-- batch %d" % batch)
        dense_run(compiler, runner, os.path.join(work, "b%d" % batch),
                  kernels, absent)


def dense_run(compiler, runner, work, kernels, absent):
    io = dict(line.split(None, 1) for line in
              open(os.path.join(work, "io.txt")).read().splitlines())
    inputs, outputs = io["inputs"].split(), io["outputs"].split()
    plan = os.path.join(work, "model.plan.txt")
    proc = run([compiler, os.path.join(work, "model.onnx"), "-o", plan])
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    text = open(plan).read()
    for kernel in kernels:
        if "=" in kernel:  # an attribute value: name=value
            name, value = kernel.split("=")
            pattern = (r'name: "%s"\s*(s: "%s"|i: %s\b)'
                       % (name, value, value))
            if not re.search(pattern, text):
                fail("the plan has no attribute %s" % kernel)
        elif 'kernel: "%s"' % kernel not in text:
            fail("the plan has no %s instruction" % kernel)
    for kernel in absent:
        if 'kernel: "%s"' % kernel in text:
            fail("the plan should have no %s instruction" % kernel)
    print("%d instructions" % count_instructions(text))
    outdir = os.path.join(work, "out")
    cmd = [runner, plan, "--output-dir", outdir]
    for name in inputs:
        cmd += ["--input", "%s=%s" % (name, os.path.join(work, name + ".npy"))]
    proc = run(cmd)
    if proc.returncode != 0:
        fail("ember-run failed", proc)
    for name in outputs:
        got = np.load(os.path.join(outdir, name + ".npy"))
        want = np.load(os.path.join(work, "expected_%s.npy" % name))
        compare(name, got, want)
    return text


def compare(name, got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        fail("output %s is %s %s, the reference gives %s %s"
             % (name, got.dtype, got.shape, want.dtype, want.shape))
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        fail("output %s differs:\n%s\nvs\n%s" % (name, got, want))
    print("%s: max abs difference %.3g over %d values"
          % (name, float(np.max(np.abs(got - want))) if want.size else 0.0,
             want.size))


DENSE_KERNELS = {
    # model: (kernels the plan must hold, kernels it must not)
    "dcn": (["dcn_cross", "low_rank=1", "low_rank=0", "linear"],
            ["matmul", "mul"]),
    "slice_write": (["concat", "slice", "mul"], ["scatter_nd"]),
    "concat_reshape": (["concat", "reshape", "linear", "transpose", "slice"],
                       []),
    "norm": (["softmax", "layer_norm", "reduce_sum", "reduce_max", "div",
              "sigmoid", "tanh", "neg", "exp", "abs"], ["sqrt"]),
    "gather": (["gather", "gather_elements", "reduce_sum", "transpose"], []),
    "bmm": (["matmul", "equal", "where", "cast", "expand", "reduce_max",
             "greater_equal"],
            []),
    "interaction_dlrm": (["dot_interaction", "pair_order=dlrm"],
                         ["matmul", "gather"]),
    "interaction_torchrec": (["dot_interaction", "pair_order=torchrec"],
                             ["matmul", "gather"]),
    "interaction_self": (["dot_interaction", "self_interaction=1"],
                         ["matmul", "gather"]),
    "interaction_shuffled": (["matmul", "gather"], ["dot_interaction"]),
}


def nested_slice_write(compiler, runner, work, batch):
    """Inputs/nested_slice_write.mlir (writes through slices of slices,
    strided, of a clone, and a copy into a full-range slice; run-time batch
    and a static part) against numpy."""
    work = os.path.join(work, "b%d" % batch)
    os.makedirs(work)
    plan = os.path.join(work, "nested.plan.txt")
    proc = run([compiler, os.path.join(HERE, "Inputs",
                                       "nested_slice_write.mlir"), "-o", plan])
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, 8)).astype(np.float32)
    s = rng.standard_normal((4, 6)).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "s.npy"), s)
    outdir = os.path.join(work, "out")
    proc = run([runner, plan, "--input", "x=" + os.path.join(work, "x.npy"),
                "--input", "s=" + os.path.join(work, "s.npy"),
                "--output-dir", outdir])
    if proc.returncode != 0:
        fail("ember-run failed", proc)
    # The mutation semantics, written with numpy views.
    y = x * 2.0
    y[:, 1:7][:, 2:5] = x[:, 0:3]           # nested write: y[:, 3:6]
    y[:, 1:7][:, 0:1] += 1.0                # nested in-place add: y[:, 1:2]
    c = x.copy()
    c[:, :] = y                             # copy into a full-range slice
    t = s.copy()
    t[1:4][0:2, 1:6:2] = -s[0:2, 0:3]       # strided nested write
    for name, want in (("y", y), ("c", c), ("t", t)):
        compare(name, np.load(os.path.join(outdir, name + ".npy")), want)


def mlir_generic(compiler, runner, work, flags=()):
    plan = os.path.join(work, "generic.plan.txt")
    proc = run([compiler, os.path.join(HERE, "Inputs", "generic_ops.mlir"),
                "-o", plan, *flags])
    if proc.returncode != 0:
        fail("ember-compile failed", proc)
    text = open(plan).read()
    if flags:
        # relu, sigmoid, tanh and t + t run in place: their slots share
        # offsets with their inputs.
        import re
        offsets = re.findall(r"arena_offset: (\d+)", text)
        if len(offsets) < 6 or len(set(offsets)) > len(offsets) - 3:
            fail("expected >= 6 planned slots, >= 3 of them in place: %s"
                 % offsets)
    for kernel in ("transpose", "reshape", "matmul", "sub", "relu", "sigmoid",
                   "concat", "tanh", "add"):
        if 'kernel: "%s"' % kernel not in text:
            fail("the plan has no %s instruction" % kernel)
    if 'kernel: "linear"' in text:
        fail("a matmul by a run-time operand must not become linear")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    np.save(os.path.join(work, "a.npy"), a)
    np.save(os.path.join(work, "b.npy"), b)
    outdir = os.path.join(work, "out")
    proc = run([runner, plan, "--input", "a=" + os.path.join(work, "a.npy"),
                "--input", "b=" + os.path.join(work, "b.npy"),
                "--output-dir", outdir])
    if proc.returncode != 0:
        fail("ember-run failed", proc)
    bias = np.array([[0.5, -1.0, 2.0]], dtype=np.float32)
    y = 1.0 / (1.0 + np.exp(-np.maximum(a @ b.T - bias, 0.0)))
    z = 2.0 * np.tanh(np.concatenate([a, y], axis=1))
    for name, want in (("y", y), ("z", z)):
        got = np.load(os.path.join(outdir, name + ".npy"))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5,
                                                      atol=1e-6):
            fail("output %s differs:\n%s\nvs\n%s" % (name, got, want))


def expect_error(compiler, work, model, must_contain):
    before = os.listdir(work)
    plan = os.path.join(work, "model.plan")
    proc = run([compiler, model, "-o", plan])
    print(proc.stderr)
    if proc.returncode != 1:
        fail("expected exit status 1, got %d" % proc.returncode, proc)
    for text in must_contain:
        if text not in proc.stderr:
            fail("the error does not mention %r" % text, proc)
    outputs_absent(work, before)


def main():
    case, compiler, runner, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if case == "full":
        make_model(work)
        compile_and_run(compiler, runner, work, ["dense", "ids", "offsets"],
                        ["linear", "embedding_bag", "concat"])
    elif case == "full_batch1":
        make_model(work, "--batch", "1")
        compile_and_run(compiler, runner, work, ["dense", "ids", "offsets"],
                        ["linear", "embedding_bag", "concat"])
    elif case == "full_mean":
        make_model(work, "--bag-mode", "mean", "--batch", "6")
        compile_and_run(compiler, runner, work, ["dense", "ids", "offsets"],
                        ["linear", "embedding_bag", "concat", "mean"])
    elif case == "mlp":
        make_model(work, "--mlp-only")
        compile_and_run(compiler, runner, work, ["dense"], ["linear", "concat"])
    elif case == "emit_mlir":
        make_model(work)
        before = os.listdir(work)
        out = os.path.join(work, "model.mlir")
        proc = run([compiler, os.path.join(work, "model.onnx"), "-o", out,
                    "--emit", "mlir"])
        if proc.returncode != 0:
            fail("ember-compile --emit mlir failed", proc)
        text = open(out).read()
        if "ember.embedding_bag" not in text or "scf.for" in text:
            fail("the IR after the passes should hold ember.embedding_bag "
                 "and no loop:\n" + text)
        outputs_absent(work, before + ["model.mlir"])
    elif case == "dlrm":
        dlrm(compiler, runner, work, 37)
    elif case == "dlrm_batch1":
        dlrm(compiler, runner, work, 1)
    elif case == "dcn_example":
        for batch, flags in ((19, []), (1, []), (19, ["--low-rank", "8"])):
            sub = os.path.join(work, "b%d%s" % (batch, "_lr" if flags else ""))
            proc = run([sys.executable, os.path.join(DLRM_EXAMPLE,
                                                     "export.py"),
                        sub, "--batch", str(batch), "--arch", "dcn"] + flags)
            if proc.returncode != 0:
                fail("examples/dlrm/export.py --arch dcn failed", proc)
            compile_and_run(compiler, runner, sub, DLRM_INPUTS,
                            ["embedding_bag", "linear", "dcn_cross"])
    elif case == "bad_insert_slice":
        expect_error(compiler, work,
                     os.path.join(HERE, "Inputs", "bad_insert_slice.mlir"),
                     ["bad_insert_slice.mlir:6:8: error:",
                      "is written in part over a run-time size"])
    elif case == "bad_reshape":
        expect_error(compiler, work,
                     os.path.join(HERE, "Inputs", "bad_reshape.mlir"),
                     ["bad_reshape.mlir:15:8: error:",
                      "'tensor.reshape': dim 1 of the shape is not a constant "
                      "or a product of input dims"])
    elif case.startswith("dense_"):
        model = case[len("dense_"):]
        if model not in DENSE_KERNELS:
            fail("unknown dense model " + model)
        kernels, absent = DENSE_KERNELS[model]
        dense_case(compiler, runner, work, model, [5, 1], kernels, absent)
    elif case == "nested_slice_write":
        for batch in (4, 1):
            nested_slice_write(compiler, runner, work, batch)
    elif case == "mlir_generic":
        mlir_generic(compiler, runner, work)
    elif case == "mlir_generic_planned":
        mlir_generic(compiler, runner, work, ["--max-batch", "8"])
    elif case == "dlrm_max_batch":
        dlrm_max_batch(compiler, runner, work)
    elif case == "target_cuda":
        make_model(work)
        plan = os.path.join(work, "model.plan")
        proc = run([compiler, os.path.join(work, "model.onnx"), "-o", plan,
                    "--target", "cuda"])
        if proc.returncode != 0:
            fail("ember-compile --target cuda failed", proc)
        proc, _ = run_plan(runner, plan, work, ["dense", "ids", "offsets"])
        if proc.returncode == 0 or "compiled for the cuda target" not in \
                proc.stderr:
            fail("ember-run must refuse a plan for the cuda target", proc)
    elif case == "dump_after_each":
        make_model(work)
        dump = os.path.join(work, "dump")
        out = os.path.join(work, "model.mlir")
        proc = run([compiler, os.path.join(work, "model.onnx"), "-o", out,
                    "--emit", "mlir", "--dump-after-each", dump])
        if proc.returncode != 0:
            fail("ember-compile --dump-after-each failed", proc)
        files = sorted(os.listdir(dump))
        want = ["00-input.mlir", "01-ember-raise-embedding-bags.mlir",
                "02-ember-functionalize.mlir", "03-ember-simplify-slices.mlir",
                "04-ember-fold-shapes.mlir",
                "05-ember-split-embedding-collections.mlir",
                "06-ember-group-tables.mlir", "07-canonicalize.mlir",
                "08-ember-raise-dense-ops.mlir"]
        if files != want:
            fail("dump files %s, expected %s" % (files, want))
        first = open(os.path.join(dump, files[0])).read()
        raised = open(os.path.join(dump, files[1])).read()
        if "scf.for" not in first or "scf.for" in raised or \
                "ember.embedding_bag" not in raised:
            fail("00-input.mlir should hold the loop, 01-... the raised bag")
        last = [l for l in open(os.path.join(dump, files[-1])).read()
                .strip().splitlines() if not l.startswith("// -----//")]
        if last != open(out).read().strip().splitlines():
            fail("the last dump differs from --emit mlir")
    elif case == "bad_clamp":
        expect_error(compiler, work, os.path.join(HERE, "Inputs", "bad_clamp.mlir"),
                     ["bad_clamp.mlir:3:8: error:", "'tosa.clamp' is supported only as ReLU"])
    elif case == "unsupported_op":
        make_model(work, "--mlp-only", "--unsupported")
        expect_error(compiler, work, os.path.join(work, "model.onnx"),
                     ["'tosa.scatter' is outside the emission contract",
                      "node '/ScatterND'"])
        if os.path.exists(os.path.join(work, "model.plan")):
            fail("a plan was written for a model outside the contract")
    elif case == "truncated_onnx":
        make_model(work)
        model = os.path.join(work, "model.onnx")
        data = open(model, "rb").read()
        cut = os.path.join(work, "cut.onnx")
        with open(cut, "wb") as f:
            f.write(data[: len(data) // 2])
        expect_error(compiler, work, cut, ["is not a valid ONNX model"])
    else:
        fail("unknown case " + case)
    print("PASS")


if __name__ == "__main__":
    main()
