"""ember.Session on several ranks started by torchrun (torch.distributed.run).

torchrun's agent serves its own store on MASTER_PORT, so Ember's rank 0 cannot listen
there; ember/runtime.py passes Ember's rendezvous through torchrun's store instead. A KJT
model compiled for 2 ranks (table-wise: each rank's program has its KJT all-to-all) runs
under torchrun with 2 processes: each rank feeds its own batch, ``gather=True`` returns every
rank's outputs, which must equal eager PyTorch on each rank's batch, in rank order. A second
session opened in the same processes gets its own rendezvous. Each session also runs three
batches with ``run_pipelined(depth=2, gather=True)`` (cross-batch pipelining), which must
equal eager PyTorch on each batch too.
"""

import numpy as np
import pytest
import torch

pytest.importorskip("onnx")

from e2e import export_and_compile  # noqa: E402
from multirank_launch import launch_torchrun, rank_order  # noqa: E402
from test_e2e_kjt import SparseModel, eager, random_kjt  # noqa: E402

try:
    from ember import runtime as _runtime  # noqa: F401
except ImportError as error:  # the runtime module was not built
    pytest.skip(str(error), allow_module_level=True)

KEYS = ["item", "user", "ctx"]

WORKER = r'''
import os, sys
import numpy as np, torch
import ember
from test_e2e_kjt import random_kjt
plan, out_dir = sys.argv[1], sys.argv[2]
for attempt in range(2):  # two sessions, one after the other: two rendezvous
    session = ember.Session(plan, threads=1, timeout=60)
    rank = session.rank
    g = torch.Generator().manual_seed(100 + rank)
    dense = torch.randn(3 + rank, 3, generator=g)
    kjt = random_kjt(%r, 3 + rank, seed=100 + rank)
    out = session.run({"dense": dense, "features": kjt}, gather=True)
    np.savez(os.path.join(out_dir, "rank%%d.session%%d.npz" %% (rank, attempt)),
             world=session.world_size, **out)
    batches = []
    for b in range(3):
        g = torch.Generator().manual_seed(200 + 10 * rank + b)
        batches.append({"dense": torch.randn(2 + b, 3, generator=g),
                        "features": random_kjt(%r, 2 + b, seed=200 + 10 * rank + b)})
    piped = session.run_pipelined(batches, depth=2, gather=True)
    np.savez(os.path.join(out_dir, "rank%%d.session%%d.piped.npz" %% (rank, attempt)),
             **{"b%%d.%%s" %% (b, k): v for b, o in enumerate(piped) for k, v in o.items()})
    del session
''' % (KEYS, KEYS)


@pytest.mark.skipif(torch.__version__.startswith("1."),
                    reason="Debian's torch 1.13 torchrun fails before starting workers "
                           "(elastic multiprocessing: 'NoneType' object has no attribute "
                           "'get'); this test runs in the torch 2.x venv (ctest torchrec)")
def test_two_ranks_under_torchrun(tmp_path):
    model = SparseModel().eval()
    example = (torch.randn(4, 3), random_kjt(KEYS, 4, seed=1))
    plan = export_and_compile(model, example, tmp_path, compile_args=["--world-size", "2",
                                                                 "--sharding", "table_wise"])
    launch_torchrun(WORKER, tmp_path, plan, str(tmp_path))

    want = []
    for rank in range(2):
        g = torch.Generator().manual_seed(100 + rank)
        dense = torch.randn(3 + rank, 3, generator=g)
        want.append(eager(model, dense, random_kjt(KEYS, 3 + rank, seed=100 + rank)))
    want = rank_order(want)
    for rank in range(2):
        for attempt in range(2):
            got = np.load(tmp_path / ("rank%d.session%d.npz" % (rank, attempt)))
            assert int(got["world"]) == 2
            outputs = sorted(k for k in got.files if k != "world")
            assert len(outputs) == len(want)
            for name, w in zip(outputs, want):
                np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-6,
                                           err_msg=f"rank {rank} session {attempt} {name}")
    for b in range(3):
        want = []
        for rank in range(2):
            g = torch.Generator().manual_seed(200 + 10 * rank + b)
            dense = torch.randn(2 + b, 3, generator=g)
            want.append(eager(model, dense, random_kjt(KEYS, 2 + b, seed=200 + 10 * rank + b)))
        want = rank_order(want)
        for rank in range(2):
            for attempt in range(2):
                got = np.load(tmp_path / ("rank%d.session%d.piped.npz" % (rank, attempt)))
                outputs = sorted(k for k in got.files if k.startswith("b%d." % b))
                assert len(outputs) == len(want), outputs
                for name, w in zip(outputs, want):
                    np.testing.assert_allclose(
                        got[name], w, rtol=1e-5, atol=1e-6,
                        err_msg=f"pipelined: rank {rank} session {attempt} {name}")
