"""ember.export -> ember-compile -> ember-run, for the end-to-end pytest cases.

The tools are found through EMBER_COMPILE / EMBER_RUN (set by ctest) or in build/release/bin;
without them the e2e tests skip and say why.
"""

import os
import subprocess

import numpy as np
import pytest

import ember

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def tool(env_name: str, binary: str) -> str:
    path = os.environ.get(env_name) or os.path.join(REPO, "build", "release", "bin", binary)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{binary} not built (set {env_name} or build the release preset)")
    return path


def compile_and_run(model, example_inputs, run_inputs, tmp_path, name="model",
                    dynamic_batch=True):
    """Exports ``model`` on ``example_inputs``, compiles it, runs the plan on ``run_inputs``
    (a dict of arrays as ember-run reads them: dense by name, KJTs as NAME.values / NAME.lengths
    / NAME.weights) and returns the outputs in signature order as numpy arrays."""
    plan_path = export_and_compile(model, example_inputs, tmp_path, name,
                                   dynamic_batch=dynamic_batch)
    return run_plan(plan_path, run_inputs, tmp_path, name)


def export_and_compile(model, example_inputs, tmp_path, name="model", compile_args=(),
                       dynamic_batch=True):
    """ember.export + ember-compile; returns the plan's path."""
    compiler = tool("EMBER_COMPILE", "ember-compile")
    onnx_path = str(tmp_path / f"{name}.onnx")
    plan_path = str(tmp_path / f"{name}.plan")
    ember.export(model, example_inputs, onnx_path, dynamic_batch=dynamic_batch)
    proc = subprocess.run([compiler, onnx_path, "-o", plan_path, *compile_args],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return plan_path


def run_plan(plan_path, run_inputs, tmp_path, name="model", run_args=(), expect_ok=True):
    """ember-run on ``run_inputs``; the outputs in signature order (or, with ``expect_ok``
    False, the failed process)."""
    runner = tool("EMBER_RUN", "ember-run")
    npz = str(tmp_path / f"{name}.inputs.npz")
    np.savez(npz, **{k: np.ascontiguousarray(v) for k, v in run_inputs.items()})
    out_dir = tmp_path / f"{name}.out"
    if out_dir.exists():
        for f in out_dir.iterdir():
            f.unlink()
    proc = subprocess.run([runner, plan_path, "--inputs", npz, "--output-dir", str(out_dir),
                           *run_args], capture_output=True, text=True)
    if not expect_ok:
        return proc
    assert proc.returncode == 0, proc.stderr + proc.stdout
    outputs = []
    i = 0
    while (out_dir / f"output_{i}.npy").exists():
        outputs.append(np.load(out_dir / f"output_{i}.npy"))
        i += 1
    return outputs


def kjt_arrays(name, kjt):
    arrays = {f"{name}.values": kjt.values().numpy(), f"{name}.lengths": kjt.lengths().numpy()}
    if kjt.weights_or_none() is not None:
        arrays[f"{name}.weights"] = kjt.weights().numpy()
    return arrays
