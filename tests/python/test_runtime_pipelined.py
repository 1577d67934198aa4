"""ember.Session.run_pipelined: cross-batch pipelining from Python (Session::runPipelined).

A KJT model (test_e2e_kjt.SparseModel) compiled for 2 ranks table-wise (the planner alone
would replicate its small tables; sharded, each rank's program starts with a KJT all-to-all,
which the compiler marks as its input distribution) runs in two processes started the way
torchrun starts its workers (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; torchrun
itself is in test_runtime_torchrun.py, torch 2.x venv only). Each rank runs five batches of different
sizes with ``run`` one by one and with ``run_pipelined`` at depths 1, 2, 3 and 8: the outputs
must be byte for byte the same, in order; ``gather=True`` must equal eager PyTorch on both
ranks' batches. Bad requests on both ranks (depth 0, a batch missing an input, a wrong dtype,
overlap "off") raise EmberError naming what and which batch and leave the session usable.
In one process: the same bad inputs on a one-rank plan, which has no stages to pipeline.
"""

import numpy as np
import pytest
import torch

pytest.importorskip("onnx")

import ember  # noqa: E402
from e2e import export_and_compile  # noqa: E402
from multirank_launch import launch_ranks, rank_order  # noqa: E402
from test_e2e_kjt import SparseModel, eager, random_kjt  # noqa: E402

try:
    from ember import runtime as _runtime  # noqa: F401
except ImportError as error:  # the runtime module was not built
    pytest.skip(str(error), allow_module_level=True)

KEYS = ["item", "user", "ctx"]
BATCHES = 5


def batch_inputs(rank, index):
    """Batch ``index`` of ``rank``: sizes 1..7, different per rank and batch."""
    size = 1 + (3 * index + rank) % 7
    seed = 1000 + 10 * rank + index
    g = torch.Generator().manual_seed(seed)
    return torch.randn(size, 3, generator=g), random_kjt(KEYS, size, seed=seed)


WORKER = r'''
import os, sys
import numpy as np
import ember
from test_runtime_pipelined import BATCHES, batch_inputs

plan, out_dir = sys.argv[1], sys.argv[2]
session = ember.Session(plan, threads=1, timeout=60)
rank = session.rank
failures = []
if os.environ.get("EMBER_TEST_INSTALLED") == "1" and "frontends" in ember.__file__:
    failures.append("the source tree's ember, not the installed one: " + ember.__file__)
batches = [{"dense": d, "features": k} for d, k in
           (batch_inputs(rank, i) for i in range(BATCHES))]
want = [session.run(b) for b in batches]
for depth in (1, 2, 3, 8):
    got = session.run_pipelined(batches, depth=depth)
    if len(got) != len(want):
        failures.append("depth %d: %d results for %d batches" % (depth, len(got), len(want)))
        continue
    for i, (g, w) in enumerate(zip(got, want)):
        if sorted(g) != sorted(w):
            failures.append("depth %d batch %d: outputs %s, not %s" % (depth, i, sorted(g), sorted(w)))
        for name in w:
            if g[name].tobytes() != w[name].tobytes() or g[name].shape != w[name].shape:
                failures.append("depth %d batch %d output %s differs from run" % (depth, i, name))
gathered = session.run_pipelined(batches, depth=2, gather=True)
np.savez(os.path.join(out_dir, "rank%d.npz" % rank),
         world=session.world_size,
         **{"b%d.%s" % (i, k): v for i, out in enumerate(gathered) for k, v in out.items()})

def expect_error(what, call, *needles):
    try:
        call()
    except ember.EmberError as e:
        for needle in needles:
            if needle not in str(e):
                failures.append("%s: %r does not name %r" % (what, str(e), needle))
        return
    failures.append("%s: no error" % what)

expect_error("depth 0", lambda: session.run_pipelined(batches, depth=0), "depth 0")
missing = list(batches)
missing[1] = {"dense": batches[1]["dense"]}
expect_error("missing input", lambda: session.run_pipelined(missing, depth=2),
             "batch 1", "features")
wrong = list(batches)
wrong[3] = {"dense": batches[3]["dense"].double(), "features": batches[3]["features"]}
expect_error("wrong dtype", lambda: session.run_pipelined(wrong, depth=2),
             "batch 3", "dense", "float64")
# still usable, and every rank still pairs its collectives with the other's
again = session.run_pipelined(batches[:3], depth=2)
for i in range(3):
    for name in want[i]:
        if again[i][name].tobytes() != want[i][name].tobytes():
            failures.append("after the errors: batch %d output %s differs" % (i, name))
off = ember.Session(plan, threads=1, timeout=60, overlap="off")
expect_error("overlap off", lambda: off.run_pipelined(batches, depth=2),
             "overlap 'off'")
one_by_one = off.run_pipelined(batches, depth=1)
for i in range(BATCHES):
    for name in want[i]:
        if one_by_one[i][name].tobytes() != want[i][name].tobytes():
            failures.append("overlap off, depth 1: batch %d output %s differs" % (i, name))
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("rank %d ok" % rank)
'''


@pytest.fixture(scope="module")
def model_and_plans(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runtime_pipelined")
    model = SparseModel().eval()
    example = (torch.randn(4, 3), random_kjt(KEYS, 4, seed=1))
    sharded = export_and_compile(model, example, tmp, name="sharded",
                                 compile_args=["--world-size", "2", "--sharding", "table_wise"])
    single = export_and_compile(model, example, tmp, name="single")
    return model, sharded, single, tmp


def test_two_ranks_pipelined_equals_run(model_and_plans, tmp_path):
    model, plan, _, _ = model_and_plans
    launch_ranks(WORKER, tmp_path, plan, str(tmp_path))

    for rank in range(2):
        got = np.load(tmp_path / ("rank%d.npz" % rank))
        assert int(got["world"]) == 2
        for i in range(BATCHES):
            want = rank_order([eager(model, *batch_inputs(r, i)) for r in range(2)])
            outputs = sorted(k for k in got.files if k.startswith("b%d." % i))
            assert len(outputs) == len(want), outputs
            for key, w in zip(outputs, want):
                np.testing.assert_allclose(got[key], w, rtol=1e-5, atol=1e-6,
                                           err_msg="rank %d %s" % (rank, key))


def test_one_rank_plan(model_and_plans):
    model, _, plan, _ = model_and_plans
    session = ember.Session(plan)
    batches = [dict(zip(("dense", "features"), batch_inputs(0, i))) for i in range(3)]
    want = [session.run(b) for b in batches]
    got = session.run_pipelined(batches, depth=1)
    assert len(got) == 3
    for g, w in zip(got, want):
        assert sorted(g) == sorted(w)
        for name in w:
            np.testing.assert_array_equal(g[name], w[name])
    torch_out = session.run_pipelined(batches, depth=1, as_torch=True)
    assert all(isinstance(v, torch.Tensor) for out in torch_out for v in out.values())
    # a one-rank plan has no input distribution: depth 2 says so and how to go on
    with pytest.raises(ember.EmberError, match="marks no input distribution.*depth 1"):
        session.run_pipelined(batches, depth=2)


def test_bad_requests(model_and_plans):
    _, _, plan, _ = model_and_plans
    session = ember.Session(plan)
    batches = [dict(zip(("dense", "features"), batch_inputs(0, i))) for i in range(3)]
    with pytest.raises(ember.EmberError, match="pipeline depth 0: expected 1 or more"):
        session.run_pipelined(batches, depth=0)
    with pytest.raises(ember.EmberError, match="pipeline depth -3"):
        session.run_pipelined(batches, depth=-3)
    with pytest.raises(ValueError, match="out of range"):
        session.run_pipelined(batches, depth=2**40)
    with pytest.raises(TypeError, match="depth must be an int"):
        session.run_pipelined(batches, depth=2.5)
    with pytest.raises(TypeError, match="depth must be an int"):
        session.run_pipelined(batches, depth=True)
    # an empty list runs nothing and returns nothing; the depth is still checked
    assert session.run_pipelined([], depth=1) == []
    with pytest.raises(ember.EmberError, match="depth 0"):
        session.run_pipelined([], depth=0)
    with pytest.raises(TypeError, match="list of input dicts"):
        session.run_pipelined(batches[0])
    with pytest.raises(TypeError, match="batch 1 is a tuple"):
        session.run_pipelined([batches[0], tuple(batches[1].values())], depth=1)
    missing = [batches[0], {"dense": batches[1]["dense"]}, batches[2]]
    with pytest.raises(ember.EmberError, match="batch 1.*features"):
        session.run_pipelined(missing, depth=1)
    wrong = [batches[0], batches[1],
             {"dense": batches[2]["dense"].numpy().astype(np.float64),
              "features": batches[2]["features"]}]
    with pytest.raises(ember.EmberError, match="batch 2.*dense.*float64"):
        session.run_pipelined(wrong, depth=1)
    complex_ = [{"dense": batches[0]["dense"].numpy().astype(np.complex64),
                 "features": batches[0]["features"]}]
    with pytest.raises(ember.EmberError, match="batch 0: dense.*complex"):
        session.run_pipelined(complex_, depth=1)
    kjt = batches[1]["features"]
    lengths = kjt.lengths().numpy().copy()
    lengths[-1] += 1000  # more ids than values
    bad_kjt = [batches[0], {"dense": batches[1]["dense"],
                            "features": (kjt.keys(), kjt.values().numpy(), lengths, None)}]
    with pytest.raises(ember.EmberError, match="batch 1: KJT input 'features'.*lengths"):
        session.run_pipelined(bad_kjt, depth=1)
    with pytest.raises(ember.EmberError, match="overlap"):
        ember.Session(plan, overlap="sometimes")
    # the session still works
    out = session.run_pipelined(batches, depth=1)
    assert len(out) == 3
