"""Multi-rank runs for test_runtime_pipelined.py and test_runtime_torchrun.py.

A worker script runs in ``world`` processes, started either the way torchrun starts its
workers (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT: ``launch_ranks``) or by
torchrun itself (``launch_torchrun``); each waits at most ``timeout`` seconds and fails the
test with the output's tail when a rank does not exit 0. ``rank_order`` is what
``gather=True`` returns for outputs computed rank by rank.
"""

import os
import socket
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 240  # seconds a launch may take


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_env(**variables):
    """This process's environment for a worker, with ``variables`` set: PYTHONPATH has this
    folder (the tests' modules) and the source tree's ``ember`` (unless EMBER_TEST_INSTALLED=1:
    then the installed one); no EMBER_RENDEZVOUS or TORCHELASTIC_RUN_ID of the caller's."""
    env = dict(os.environ)
    env.update(variables)
    for name in ("EMBER_RENDEZVOUS", "TORCHELASTIC_RUN_ID"):
        env.pop(name, None)
    paths = [HERE]
    if os.environ.get("EMBER_TEST_INSTALLED") != "1":  # else the wheel's package
        paths.append(os.path.join(HERE, "..", "..", "compiler", "frontends", "torch"))
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    return env


def write_worker(source, directory):
    """``source`` as ``directory``/worker.py; its path."""
    worker = directory / "worker.py"
    worker.write_text(source)
    return worker


def launch_ranks(source, directory, *args, world=2, timeout=TIMEOUT):
    """Runs the script ``source`` (written to ``directory``) with ``args`` as ``world``
    processes started the way torchrun starts its workers, on a free port; kills them all
    when one takes longer than ``timeout``."""
    worker = write_worker(source, directory)
    port = free_port()
    procs = []
    for rank in range(world):
        env = worker_env(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                         MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, str(worker), *args],
                                      env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    logs = []
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise
        logs.append(out)
    for rank, proc in enumerate(procs):
        assert proc.returncode == 0, "rank %d:\n%s" % (rank, logs[rank][-4000:])


def launch_torchrun(source, directory, *args, world=2, timeout=TIMEOUT):
    """Runs the script ``source`` (written to ``directory``) with ``args`` under torchrun
    (torch.distributed.run) with ``world`` processes, on a free port."""
    worker = write_worker(source, directory)
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(world),
         "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
         str(worker), *args],
        env=worker_env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


def rank_order(per_rank):
    """Per output, the ranks' arrays (``per_rank[r][i]``) concatenated in rank order."""
    return [np.concatenate([outputs[i] for outputs in per_rank])
            for i in range(len(per_rank[0]))]
