"""ember.Session: the runtime from Python (runtime/python, ember/runtime.py).

A KJT model (test_e2e_kjt.SparseModel) exported and compiled once, then run in process on
numpy arrays, torch tensors, ember KJTs and (keys, values, lengths, weights) tuples at several
batch sizes, against eager PyTorch and against ember-run; outputs outlive the session; bad
inputs raise ember.EmberError with the runtime's message and leave the session usable; eight
threads share one session, good and bad requests mixed, each good result equal to its
single-threaded one.
"""

import os
import subprocess
import threading

import numpy as np
import pytest
import torch

pytest.importorskip("onnx")

import ember  # noqa: E402
from e2e import export_and_compile, kjt_arrays, run_plan  # noqa: E402
from test_e2e_kjt import SparseModel, random_kjt, eager  # noqa: E402

try:
    from ember import runtime as _runtime  # noqa: F401
except ImportError as error:  # the runtime module was not built
    pytest.skip(str(error), allow_module_level=True)

KEYS = ["item", "user", "ctx"]


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runtime_api")
    model = SparseModel().eval()
    example = (torch.randn(4, 3), random_kjt(KEYS, 4, seed=1))
    return model, export_and_compile(model, example, tmp), tmp


def inputs(batch, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 3, generator=g), random_kjt(KEYS, batch, seed=seed)


def test_matches_eager_and_ember_run(plan):
    model, path, tmp = plan
    session = ember.Session(path, threads=2)
    for batch, seed in ((1, 3), (5, 4), (64, 5)):
        dense, kjt = inputs(batch, seed)
        want = eager(model, dense, kjt)
        out = session.run({"dense": dense, "features": kjt})
        got = [out[name] for name in [o["name"] for o in session.signature["outputs"]]]
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        cli = run_plan(path, {"dense": dense.numpy(), **kjt_arrays("features", kjt)}, tmp)
        for g, c in zip(got, cli):
            np.testing.assert_array_equal(g, c)


def test_input_forms_agree(plan):
    _, path, _ = plan
    session = ember.Session(path)
    dense, kjt = inputs(7, 11)
    ref = session.run({"dense": dense, "features": kjt})
    as_tuple = (kjt.keys(), kjt.values().numpy(), kjt.lengths().numpy(), None)
    forms = [
        {"dense": dense.numpy(), "features": as_tuple},
        # a strided (non-contiguous) view: copied, same result
        {"dense": np.repeat(dense.numpy(), 2, axis=1)[:, ::2], "features": kjt},
        {"dense": np.asfortranarray(dense.numpy()), "features": as_tuple},
    ]
    for form in forms:
        out = session.run(form)
        for name in ref:
            np.testing.assert_array_equal(out[name], ref[name])
    out = session.run({"dense": dense, "features": kjt}, as_torch=True)
    assert all(isinstance(v, torch.Tensor) for v in out.values())


def test_signature_and_repr(plan):
    _, path, _ = plan
    session = ember.Session(path)
    sig = session.signature
    assert [t["name"] for t in sig["inputs"]] == ["dense"]
    assert sig["inputs"][0]["dtype"] == "float32"
    assert sig["kjt_inputs"][0]["keys"] == KEYS
    assert len(sig["outputs"]) == 3
    assert session.rank == 0 and session.world_size == 1 and session.device == "cpu"
    assert "features" in repr(session)


def test_outputs_outlive_the_session(plan):
    _, path, _ = plan
    session = ember.Session(path)
    dense, kjt = inputs(3, 2)
    out = session.run({"dense": dense, "features": kjt})
    first = {k: v.copy() for k, v in out.items()}
    del session
    import gc
    gc.collect()
    for k in first:
        np.testing.assert_array_equal(out[k], first[k])


def test_errors_raise_ember_error(plan, tmp_path):
    _, path, _ = plan
    session = ember.Session(path)
    dense, kjt = inputs(4, 6)
    with pytest.raises(ember.EmberError, match="features"):
        session.run({"dense": dense})  # the KJT input is missing
    bad = kjt.values().numpy().copy()
    bad[0] = 10**6
    with pytest.raises(ember.EmberError, match="1000000"):
        session.run({"dense": dense,
                     "features": (kjt.keys(), bad, kjt.lengths().numpy(), None)})
    with pytest.raises(ember.EmberError, match="dense"):
        session.run({"dense": dense.numpy().astype(np.float64), "features": kjt})
    with pytest.raises(ember.EmberError, match="lengths"):
        lengths = kjt.lengths().numpy().copy()
        lengths[-1] += 1000  # more ids than values
        session.run({"dense": dense, "features": (kjt.keys(), kjt.values().numpy(), lengths, None)})
    with pytest.raises(ember.EmberError, match="complex"):
        session.run({"dense": dense.numpy().astype(np.complex64), "features": kjt})
    with pytest.raises(TypeError):
        session.run([dense, kjt])
    # the session still works
    out = session.run({"dense": dense, "features": kjt})
    assert out
    err = None
    try:
        ember.Session(str(tmp_path / "missing.plan"))
    except ember.EmberError as e:
        err = e
    assert err is not None and "missing.plan" in str(err) and isinstance(err.code, int)
    with pytest.raises(ember.EmberError, match="bounds_check"):
        ember.Session(path, bounds_check="sometimes")
    corrupt = tmp_path / "corrupt.plan"
    corrupt.write_bytes(open(path, "rb").read()[:100])
    with pytest.raises(ember.EmberError):
        ember.Session(str(corrupt))


@pytest.mark.parametrize("option, values, bad, error", [
    ("weight_memory", ("mmap", "huge_pages", "auto"), "swap", "weight"),
    # The model's tables are float: the order of quantized sums changes nothing.
    ("quantized_sums", ("fast", "fbgemm", "auto"), "exact",
     "quantizedSums 'exact': expected auto, fast"),
])
def test_session_options_give_the_same_outputs(plan, option, values, bad, error):
    """Each value of a session option that does not change the float results gives the
    default session's outputs bit for bit; a bad value is an EmberError naming it."""
    _, path, _ = plan
    dense, kjt = inputs(8, 9)
    want = ember.Session(path).run({"dense": dense, "features": kjt})
    for value in values:
        got = ember.Session(path, **{option: value}).run({"dense": dense, "features": kjt})
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{option}={value} {k}")
    with pytest.raises(ember.EmberError, match=error):
        ember.Session(path, **{option: bad})


def test_threads_share_one_session(plan):
    _, path, _ = plan
    session = ember.Session(path, threads=2)
    cases = [inputs(b, 100 + b) for b in (1, 2, 3, 8, 16, 33)]
    want = [session.run({"dense": d, "features": k}) for d, k in cases]
    failures = []

    def worker(t):
        try:
            for i in range(30):
                c = (t + i) % len(cases)
                if (t + i) % 7 == 0:  # a bad request between good ones
                    try:
                        session.run({"dense": cases[c][0]})
                        failures.append("a bad request succeeded")
                    except ember.EmberError:
                        pass
                    continue
                out = session.run({"dense": cases[c][0], "features": cases[c][1]})
                for name in want[c]:
                    if not np.array_equal(out[name], want[c][name]):
                        failures.append(f"thread {t}: case {c} output {name} differs")
        except Exception as e:  # noqa: BLE001
            failures.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:5]


def test_runtime_alone_needs_no_torch(plan):
    """A serving process: ember.Session without torch installed (torch hidden)."""
    _, path, tmp = plan
    dense, kjt = inputs(2, 9)
    np.save(tmp / "d.npy", dense.numpy())
    np.save(tmp / "v.npy", kjt.values().numpy())
    np.save(tmp / "l.npy", kjt.lengths().numpy())
    script = f"""
import sys
sys.modules['torch'] = None  # import torch fails
import numpy as np, ember
assert not hasattr(ember, 'export')
s = ember.Session({path!r})
out = s.run({{'dense': np.load({str(tmp / 'd.npy')!r}),
             'features': ({KEYS!r}, np.load({str(tmp / 'v.npy')!r}), np.load({str(tmp / 'l.npy')!r}), None)}})
print(sorted(out))
"""
    proc = subprocess.run([os.sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
