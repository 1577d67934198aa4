"""Ember's runtime from Python: load a compiled plan and run it.

    import ember
    session = ember.Session("model.plan", threads=4)
    out = session.run({"dense": dense, "sparse": kjt})   # numpy arrays
    out["prob"]

Inputs are numpy arrays, torch tensors (CPU) or anything with the buffer
protocol, and KJTs: a TorchRec or ember ``KeyedJaggedTensor`` (anything
with ``keys()``, ``values()``, ``lengths()`` and ``weights_or_none()``) or a
tuple ``(keys, values, lengths, weights_or_None)``. They are viewed, not
copied, when they are C-contiguous in the plan's dtype. Outputs are numpy
arrays over the runtime's own buffers (``as_torch=True``: torch tensors
sharing them). ``run`` releases the GIL and may be called from several
threads at once. Errors raise ``ember.EmberError`` with the runtime's
message (``.code`` is its status code).

``run_pipelined([inputs0, inputs1, ...], depth=2)`` runs several batches
with the input distribution of the next ones (their first collectives)
overlapping the compute of the current one (multi-rank plans; docs/runtime.md,
"Cross-batch pipelining"), and returns their outputs in order.

Multi-rank: under ``torchrun`` (or any launcher that sets RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT) each process opens the same plan and gets its
rank's program; ``run(..., gather=True)`` returns the outputs of every rank
concatenated along the batch. torchrun's agent already serves its own store
on MASTER_PORT: there rank 0 picks a free port for Ember's store and passes
it to the other ranks through torchrun's store (``rendezvous=`` or
EMBER_RENDEZVOUS choose one yourself).

The runtime module (_ember_runtime) is inside the package when installed
from the wheel; from a build tree (<build>/python) this module finds it on
sys.path, or in the directory named by EMBER_PYTHON_LIB.
"""

import operator
import os
import sys

if os.environ.get("EMBER_PYTHON_LIB"):
    sys.path.insert(0, os.environ["EMBER_PYTHON_LIB"])

try:  # the wheel puts the module inside the package
    from . import _ember_runtime as _rt
except ImportError:
    try:  # a build tree: <build>/python on sys.path
        import _ember_runtime as _rt
    except ImportError as error:  # pragma: no cover - depends on the build
        raise ImportError(
            "ember's runtime module (_ember_runtime) was not found: install the "
            "wheel (pip install .), or build Ember (it lands in <build>/python) and "
            "put that directory on PYTHONPATH or in EMBER_PYTHON_LIB") from error

EmberError = _rt.EmberError

__all__ = ["EmberError", "Session"]


def _as_array(value):
    """numpy arrays and buffers as they are; torch tensors as numpy views."""
    to_numpy = getattr(value, "numpy", None)
    if to_numpy is not None and hasattr(value, "detach"):
        tensor = value.detach()
        if getattr(tensor, "device", None) is not None and tensor.device.type != "cpu":
            tensor = tensor.cpu()
        return tensor.contiguous().numpy()
    return value


def _as_input(value):
    if isinstance(value, tuple):
        keys, values, lengths, weights = value
        return (list(keys), _as_array(values), _as_array(lengths),
                None if weights is None else _as_array(weights))
    if hasattr(value, "keys") and hasattr(value, "lengths") and hasattr(value, "values"):
        weights = value.weights_or_none() if hasattr(value, "weights_or_none") else None
        return (list(value.keys()), _as_array(value.values()), _as_array(value.lengths()),
                None if weights is None else _as_array(weights))
    return _as_array(value)


_sessions_opened = 0  # per process: sessions are opened in the same order on every rank


def _torchrun_rendezvous(timeout):
    """Under torchrun (TorchElastic), MASTER_PORT is the agent's own store: Ember's
    rank 0 cannot listen there. Rank 0 listens on a free port instead and publishes
    ``tcp:MASTER_ADDR:PORT`` in the agent's store, where the other ranks read it.
    None when not under torchrun, on one rank, or when EMBER_RENDEZVOUS is set."""
    env = os.environ
    if ("TORCHELASTIC_RUN_ID" not in env or "EMBER_RENDEZVOUS" in env
            or int(env.get("WORLD_SIZE", "1")) <= 1
            or not env.get("MASTER_ADDR") or not env.get("MASTER_PORT")):
        return None
    import datetime
    import socket

    from torch.distributed import TCPStore

    global _sessions_opened
    _sessions_opened += 1
    addr, rank = env["MASTER_ADDR"], int(env.get("RANK", "0"))
    store = TCPStore(addr, int(env["MASTER_PORT"]), int(env["WORLD_SIZE"]), False,
                     timeout=datetime.timedelta(seconds=timeout))
    key = "ember/rendezvous/%s/%d" % (env.get("TORCHELASTIC_RESTART_COUNT", "0"),
                                      _sessions_opened)
    if rank == 0:
        with socket.socket() as probe:  # a port free now; Ember's store binds it next
            probe.bind((addr, 0))
            port = probe.getsockname()[1]
        value = "tcp:%s:%d" % (addr, port)
        store.set(key, value)
        return value
    return store.get(key).decode()


class Session:
    """A loaded plan. See the module's documentation."""

    def __init__(self, plan, threads=1, device="cpu", bounds_check="fatal",
                 verify_checksums=True, launch_environment=True, timeout=60.0,
                 max_tensor_bytes=0, rendezvous=None, weight_memory="mmap",
                 overlap="auto", quantized_sums="auto"):
        if rendezvous is None and launch_environment:
            rendezvous = _torchrun_rendezvous(timeout)
        self._session = _rt.Session(os.fspath(plan), threads=threads, device=device,
                                    bounds_check=bounds_check,
                                    verify_checksums=verify_checksums,
                                    launch_environment=launch_environment,
                                    timeout=timeout, max_tensor_bytes=max_tensor_bytes,
                                    rendezvous=rendezvous or "",
                                    weight_memory=weight_memory, overlap=overlap,
                                    quantized_sums=quantized_sums)

    def run(self, inputs, gather=False, as_torch=False):
        """Runs the plan on ``inputs`` (name -> array, tensor or KJT)."""
        if not isinstance(inputs, dict):
            raise TypeError("Session.run takes a dict of named inputs, not %s"
                            % type(inputs).__name__)
        outputs = self._session.run({str(k): _as_input(v) for k, v in inputs.items()},
                                    gather)
        if as_torch:
            import torch
            return {k: torch.from_numpy(v) for k, v in outputs.items()}
        return outputs

    __call__ = run

    def run_pipelined(self, batches, depth=2, gather=False, as_torch=False):
        """Runs a list of batches (each a dict as ``run`` takes) in order with up to
        ``depth`` in flight: the input distribution of the next batches (their first
        collectives) overlaps the compute of the current one. Returns one output dict
        per batch, in order, equal to ``run`` on each. Depth 1 is ``run`` per batch;
        depth > 1 needs a multi-rank plan and overlap "auto" or "streams". On several
        ranks every rank calls it with the same depth and number of batches. A failure
        raises EmberError naming the batch and returns nothing."""
        if isinstance(batches, dict) or not hasattr(batches, "__iter__"):
            raise TypeError("Session.run_pipelined takes a list of input dicts, not %s"
                            % type(batches).__name__)
        if isinstance(depth, bool):
            raise TypeError("Session.run_pipelined: depth must be an int, not bool")
        try:
            depth = operator.index(depth)
        except TypeError:
            raise TypeError("Session.run_pipelined: depth must be an int, not %s"
                            % type(depth).__name__) from None
        if not -2**31 <= depth < 2**31:
            raise ValueError("Session.run_pipelined: depth %d is out of range" % depth)
        converted = []
        for index, inputs in enumerate(batches):
            if not isinstance(inputs, dict):
                raise TypeError("Session.run_pipelined: batch %d is a %s, not a dict of "
                                "named inputs" % (index, type(inputs).__name__))
            converted.append({str(k): _as_input(v) for k, v in inputs.items()})
        outputs = self._session.run_pipelined(converted, depth, gather)
        if as_torch:
            import torch
            return [{k: torch.from_numpy(v) for k, v in out.items()} for out in outputs]
        return outputs

    def barrier(self):
        """Multi-rank: returns when every rank has called it."""
        self._session.barrier()

    @property
    def signature(self):
        """The plan's inputs, KJT inputs and outputs (names, dtypes, dims)."""
        return self._session.signature

    @property
    def rank(self):
        return self._session.rank

    @property
    def world_size(self):
        return self._session.world_size

    @property
    def device(self):
        return self._session.device

    def __repr__(self):
        sig = self.signature
        return "ember.Session(inputs=%s, kjt_inputs=%s, outputs=%s, rank=%d/%d, device=%r)" % (
            [t["name"] for t in sig["inputs"]], [k["name"] for k in sig["kjt_inputs"]],
            [t["name"] for t in sig["outputs"]], self.rank, self.world_size, self.device)
