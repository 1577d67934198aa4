"""Ember's sharding planner next to TorchRec's EmbeddingShardingPlanner, on the same
tables and topology, both plans judged by one yardstick that belongs to neither planner.

usage: PYTHONPATH=compiler/frontends/torch build/torchrec-venv/bin/python \\
           bench/planner_vs_torchrec.py BUILD_BIN_DIR [--cases NAME,...] [--work DIR]
           [--json FILE] [--fixtures DIR] [--torchrec-plans DIR [--torchrec-only]] [--hbm-cap]
           [--no-torchrec-estimates]

Cases (batch 512 per rank, H100 80 GB, 8 ranks per node, NVLink 450 GB/s and 50 GB/s of
network per GPU, every table f32 and sum-pooled):
  criteo-8, criteo-16   the 26 Criteo Terabyte tables (MLPerf DLRM cardinalities, dim 128,
                        one id per feature) on 8 and 16 ranks
  powerlaw-32           100 tables, rows 1e8 / (i+1)^1.1 (at least 1,000), dims 32..256,
                        pooling factors log-uniform in [1, 100], on 4 x 8 ranks
  catalogue-64, catalogue-512
                        1,000 tables as bench/bench_planner.cpp makes them (rows
                        log-uniform in [1e3, 1e8], dims 16..256, 1-3 features of pooling
                        factor 1..100) on 8 x 8 and 64 x 8 ranks (TorchRec plans the latter
                        in about 20 minutes; not in the default list)
  criteo-8-tight, powerlaw-32-tight
                        the same tables on devices whose memory the weights fill to 85%
                        and 90% (aggregate over the ranks)
Default: every case but catalogue-512.

Each case is planned by TorchRec (its default planner, which plans for training with
HeuristicalStorageReservation(15%)) and by Ember (ember-opt --ember-plan-sharding on a
module that declares the tables, timed by --mlir-timing) three times: like for like
(objective=training memory-reservation=torchrec), with the training objective held to the
inference plan's bytes (objective=training-lean, TorchRec's reservation) and for inference
(objective=inference, TorchRec's reservation). Ember's cost model also scores TorchRec's plan
imported whole with plan-file= (like-for-like options): "ember model" is each plan's
score there (max per-rank cost, us per batch).

The yardstick (docs/sharding.md, "Ember and TorchRec side by side"), per rank r, for a
global batch G = B * W (B per rank, W ranks), a table of D columns, features f with mean
ids per bag L_f, L = sum L_f, F features; every shard of c columns and a fraction rho of
the rows (row-wise kinds; 1 otherwise):
  lookup bytes    sharded: G * L * rho * c * 4 (rows read); replica: B * L * D * 4
  input a2a       each other rank sends its B * (L * rho * 8 + F * 4) bytes of ids and
                  lengths to every shard's rank
  output a2a      table-/column-wise shard: B * F * c * 4 bytes to every other rank;
                  row_wise: the same with c = D (reduce-scatter of partial sums);
                  table_row_wise over n ranks of a node: a reduce-scatter inside the node
                  ((n - 1) * G / n * F * D * 4 bytes out of each shard), then every shard
                  sends the sums of the samples it holds (the batches of the ranks q with
                  q mod n = its position) to their owners, B * F * D * 4 each
  inter-node      the part of those bytes whose sender and receiver are on other nodes
  HBM             weights of fused shards and replicas; 20% of them for
                  fused_uvm_caching (its cache), the rest in host memory
  host bytes read (1 - 0.2) of a UVM-cached shard's lookup bytes, over PCIe
  forward step    max_r lookup_r / 2.0 TB/s + max_r (host_r / 64 GB/s)
                  + max_r comm_r(input) + max_r comm_r(output), each collective as slow as
                  its slowest rank, comm_r = max(sent, received) intra-node / 450 GB/s
                  + max(sent, received) inter-node / 50 GB/s
  training step   forward + the output a2a again (gradients) + 2 x the lookup (read and
                  update rows) + the gradient all-reduce of replicas (hierarchical:
                  2 (R-1)/R S inside the node, 2 (N-1)/N S / R across N nodes, S the
                  table's bytes)
The table printed: planning time, max-rank lookup bytes, max-rank all-to-all bytes (in or
out, both distributions), max-rank inter-node all-to-all bytes, max HBM use (% of the
device), host memory used, imbalance (max / mean of per-rank lookup bytes), the two step
estimates, Ember's cost model's score, and TorchRec's own estimators' score of the same plan
("trec us": EmbeddingPerfEstimator's per-shard forward + backward seconds summed per rank,
the largest rank, which is how TorchRec's planner ranks its proposals; "trec HBM GB":
EmbeddingStorageEstimator's largest per-rank HBM). TorchRec's estimators take Ember's plans:
each table becomes the ShardingOption of TorchRec's enumerator with the same sharding type
and compute kernel, with the plan's shards (sizes, offsets, ranks). They always estimate
training (the backward pass and the data-parallel gradient all-reduce), so they score a plan
made for inference as a training plan.

--hbm-cap adds two Ember rows per case planned with each rank's embeddings (weights and
buffers) capped at the HBM the yardstick counts on TorchRec's fullest rank (topology field
embedding_memory_cap_gb): Ember's plans that use no more HBM than TorchRec's.

--torchrec-plans DIR keeps TorchRec's plans (DIR/<case>.json with its planning time) and
reuses them; with --torchrec-only the script only fills that cache (catalogue-512 takes
hours on a loaded 2-core machine: run it niced in the background).
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import warnings

GB = 1e9
BATCH = 512
PER_NODE = 8
DEVICE_BYTES = 80 * GB
HOST_BYTES = 256 * GB
HBM_LOOKUP_BW = 2.0e12
INTRA_BW = 450e9
INTER_BW = 50e9
PCIE_BW = 64e9
CACHE_FRACTION = 0.2

CRITEO_ROWS = [39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546,
               403346, 10, 2208, 11938, 155, 4, 976, 14, 39979771, 25641295, 39664984,
               585935, 12972, 108, 36]


# --------------------------------------------------------------------------- cases

def table(name, rows, dim, factors):
    return {"name": name, "rows": int(rows), "dim": int(dim),
            "features": [(f"{name}_f{i}", float(f)) for i, f in enumerate(factors)]}


def criteo():
    return [table(f"criteo_{i}", r, 128, [1.0]) for i, r in enumerate(CRITEO_ROWS)]


def powerlaw(count=100, seed=7):
    rng = random.Random(seed)
    dims = [32, 64, 128, 256]
    return [table(f"pl_{i}", max(1000, 1e8 / (i + 1) ** 1.1), rng.choice(dims),
                  [math.exp(rng.uniform(0, math.log(100)))]) for i in range(count)]


def catalogue(count=1000, seed=42):
    # bench/bench_planner.cpp's distribution (its generator is C++'s: not the same draws).
    rng = random.Random(seed)
    dims = [16, 32, 64, 128, 256]
    return [table(f"table_{i}", 10 ** rng.uniform(3, 8), rng.choice(dims),
                  [rng.uniform(1, 100) for _ in range(rng.randint(1, 3))])
            for i in range(count)]


def weight_bytes(tables):
    return sum(t["rows"] * t["dim"] * 4 for t in tables)


def tight(tables, world, fill):
    """Device memory per rank such that the weights fill `fill` of all ranks' memory."""
    return weight_bytes(tables) / (world * fill)


def make_cases():
    c, p = criteo(), powerlaw()
    return {
        "criteo-8": dict(tables=c, world=8, device=DEVICE_BYTES),
        "criteo-16": dict(tables=c, world=16, device=DEVICE_BYTES),
        "powerlaw-32": dict(tables=p, world=32, device=DEVICE_BYTES),
        "catalogue-64": dict(tables=catalogue(), world=64, device=DEVICE_BYTES),
        "catalogue-512": dict(tables=catalogue(), world=512, device=DEVICE_BYTES),
        "criteo-8-tight": dict(tables=c, world=8, device=tight(c, 8, 0.85)),
        "powerlaw-32-tight": dict(tables=p, world=32, device=tight(p, 32, 0.90)),
    }


DEFAULT_CASES = ["criteo-8", "criteo-16", "powerlaw-32", "catalogue-64", "criteo-8-tight",
                 "powerlaw-32-tight"]


# --------------------------------------------------------------------------- TorchRec

def torchrec_setup(case):
    """TorchRec's view of a case: (module, sharders, topology, constraints)."""
    import logging

    import torch
    from torchrec import EmbeddingBagCollection, EmbeddingBagConfig
    from torchrec.distributed.embeddingbag import EmbeddingBagCollectionSharder
    from torchrec.distributed.planner import ParameterConstraints, Topology

    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")

    class Sparse(torch.nn.Module):
        def __init__(self, configs):
            super().__init__()
            self.ebc = EmbeddingBagCollection(tables=configs, device=torch.device("meta"))

    tables = case["tables"]
    configs = [EmbeddingBagConfig(name=t["name"], embedding_dim=t["dim"],
                                  num_embeddings=t["rows"],
                                  feature_names=[f for f, _ in t["features"]])
               for t in tables]
    constraints = {t["name"]: ParameterConstraints(pooling_factors=[l for _, l in t["features"]])
                   for t in tables}
    topology = Topology(world_size=case["world"], compute_device="cuda",
                        hbm_cap=int(case["device"]), ddr_cap=int(HOST_BYTES),
                        local_world_size=PER_NODE, hbm_mem_bw=3.35e12,
                        intra_host_bw=INTRA_BW, inter_host_bw=INTER_BW,
                        hbm_to_ddr_mem_bw=PCIE_BW)
    return Sparse(configs), [EmbeddingBagCollectionSharder()], topology, constraints


def torchrec_plan(case, timeout=None):
    """TorchRec's plan of a case, its planning seconds and its error (None when planned).
    `timeout`: TorchRec's own timeout_seconds (its proposers stop after that many seconds
    of search and the best plan found so far is returned)."""
    from torchrec.distributed.planner import EmbeddingShardingPlanner

    from ember.torchrec_plan import plan_to_json

    model, sharders, topology, constraints = torchrec_setup(case)
    start = time.perf_counter()
    try:
        plan = EmbeddingShardingPlanner(topology=topology, batch_size=BATCH,
                                        constraints=constraints,
                                        timeout_seconds=timeout).plan(model, sharders)
    except Exception as error:  # TorchRec finds no plan: reported, not fatal
        return None, time.perf_counter() - start, f"{type(error).__name__}: " + \
            str(error).strip().splitlines()[0][:200]
    return plan_to_json(plan), time.perf_counter() - start, None


class TorchRecEstimator:
    """TorchRec's own estimators (EmbeddingPerfEstimator, EmbeddingStorageEstimator, the
    training defaults its planner uses) applied to any plan of a case: each table's
    ParameterSharding becomes the ShardingOption of TorchRec's enumerator with the same
    sharding type and compute kernel, its shards replaced by the plan's (sizes, offsets,
    ranks), and estimated again. The score is what TorchRec's planner ranks plans by
    (NoopPerfModel: the largest per-rank sum of the shards' perf totals, forward and
    backward) and the largest per-rank HBM estimate (NoopStorageModel)."""

    def __init__(self, case):
        from torchrec.distributed.planner.enumerators import EmbeddingEnumerator

        model, sharders, self.topology, constraints = torchrec_setup(case)
        self.enumerator = EmbeddingEnumerator(topology=self.topology, batch_size=BATCH,
                                              constraints=constraints)
        self.options = {}
        for option in self.enumerator.enumerate(model, sharders):
            self.options.setdefault((option.name, option.sharding_type,
                                     option.compute_kernel), option)

    def score(self, case, plan):
        """(perf rating in us, max per-rank HBM in bytes) or a string saying why TorchRec's
        estimators cannot take the plan."""
        import copy

        from torchrec.distributed.planner.perf_models import NoopPerfModel, NoopStorageModel
        from torchrec.distributed.planner.types import Shard

        entries = flatten(plan)
        chosen = []
        for t in case["tables"]:
            e = entries[t["name"]]
            key = (t["name"], e["sharding_type"], e["compute_kernel"])
            if key not in self.options:
                return (f"TorchRec's enumerator has no {e['sharding_type']} / "
                        f"{e['compute_kernel']} option for {t['name']}")
            option = copy.copy(self.options[key])
            if e["sharding_type"] == "data_parallel":
                ranks = e.get("ranks") or list(range(case["world"]))
                shards = [Shard(size=[t["rows"], t["dim"]], offset=[0, 0], rank=r)
                          for r in ranks]
            else:
                shards = [Shard(size=list(s["shard_sizes"]), offset=list(s["shard_offsets"]),
                                rank=int(s["placement"].split("/")[0].split(":")[1]))
                          for s in e["sharding_spec"]["shards"]]
            option.shards = shards
            chosen.append(option)
        try:
            self.enumerator.populate_estimates(chosen)
        except Exception as error:
            return f"TorchRec's estimators failed: {type(error).__name__}: {error}"[:200]
        # TorchRec 1.9's Perf is in seconds.
        return (NoopPerfModel(self.topology).rate(chosen) * 1e6,
                NoopStorageModel(self.topology).rate(chosen))


# --------------------------------------------------------------------------- Ember

def module_text(tables):
    features = [(f, t) for t in tables for f, _ in t["features"]]
    kjt = "!ember.kjt<[" + ", ".join(f'"{f}"' for f, _ in features) + \
        "], values = i64, lengths = i32>"
    index = {t["name"]: i for i, t in enumerate(tables)}
    keyed = "!ember.keyed_tensor<[" + ", ".join(f'"{f}" : {t["dim"]}' for f, t in features) + \
        "], f32>"
    ttype = {t["name"]: f'!ember.table<{t["rows"]}x{t["dim"]}, f32>' for t in tables}
    lines = [f'ember.table @{t["name"]} : {ttype[t["name"]]}' for t in tables]
    lines.append(f"func.func @sparse(%ids: tensor<?xi64>, %lengths: tensor<?xi32>) -> {keyed} {{")
    lines.append(f"  %kjt = ember.kjt.create values(%ids : tensor<?xi64>) "
                 f"lengths(%lengths : tensor<?xi32>) -> {kjt}")
    for t in tables:
        lines.append(f'  %{t["name"]} = ember.table.ref @{t["name"]} : {ttype[t["name"]]}')
    lines.append("  %pooled = ember.embedding_bag_collection %kjt tables(" +
                 ", ".join("%" + t["name"] for t in tables) + ")")
    lines.append("      feature_tables = [" + ", ".join(str(index[t["name"]]) for _, t in features) +
                 "] pooling = [" + ", ".join("sum" for _ in tables) + "]")
    lines.append(f"      : {kjt}, " + ", ".join(ttype[t["name"]] for t in tables) + f" -> {keyed}")
    lines.append(f"  return %pooled : {keyed}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_inputs(case, work):
    os.makedirs(work, exist_ok=True)
    paths = {k: os.path.join(work, k) for k in ("model.mlir", "stats.json", "topology.json")}
    with open(paths["model.mlir"], "w") as f:
        f.write(module_text(case["tables"]))
    with open(paths["stats.json"], "w") as f:
        json.dump({"features": {name: {"pooling_factor": l} for t in case["tables"]
                                for name, l in t["features"]}}, f)
    with open(paths["topology.json"], "w") as f:
        json.dump({"world_size": case["world"], "ranks_per_node": PER_NODE,
                   "device_memory_gb": case["device"] / GB, "host_memory_gb": HOST_BYTES / GB,
                   "intra_node_bandwidth_gb_per_s": INTRA_BW / GB,
                   "inter_node_bandwidth_gb_per_s": INTER_BW / GB,
                   "host_to_device_bandwidth_gb_per_s": PCIE_BW / GB}, f)
    return paths


SCORE = re.compile(r"Score \(max per-rank cost\): ([0-9.]+) us")
TIMING = re.compile(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+EmberPlanSharding\s*$")


def ember_plan(bin_dir, paths, work, tag, options, import_file=None):
    """Runs the planner pass; returns (plan JSON or None, planning seconds, Ember's score in
    us or None, error)."""
    export = os.path.join(work, f"ember-{tag}.json")
    report = os.path.join(work, f"ember-{tag}.txt")
    pass_options = [f"topology-file={paths['topology.json']}",
                    f"stats-file={paths['stats.json']}", f"batch-size={BATCH}",
                    f"export-file={export}", f"report-file={report}"] + options
    if import_file:
        pass_options.append(f"plan-file={import_file}")
    command = [os.path.join(bin_dir, "ember-opt"), paths["model.mlir"], "-o", os.devnull,
               "--mlir-timing", "--ember-plan-sharding=" + " ".join(pass_options)]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        # The diagnostic without the file name, with the first lines under it
        # (which tables do not fit).
        lines = proc.stderr.splitlines()
        first = next((i for i, l in enumerate(lines) if "error: " in l), None)
        if first is None:
            return None, None, None, proc.stderr[:300]
        message = [lines[first].split("error: ", 1)[1]] + \
            [l.strip() for l in lines[first + 1:first + 3] if l.startswith("  ")]
        return None, None, None, " ".join(message)[:300]
    seconds = None
    for line in proc.stderr.splitlines():
        timing = TIMING.match(line)
        if timing:
            seconds = float(timing.group(1))
    with open(report) as f:
        score = float(SCORE.search(f.read()).group(1))
    with open(export) as f:
        return json.load(f), seconds, score, None


# --------------------------------------------------------------------------- the yardstick

def flatten(plan):
    """{table: ParameterSharding} from a plan nested by module path or not."""
    out = {}
    for key, value in plan.items():
        if isinstance(value, dict) and "sharding_type" not in value:
            out.update(value)
        else:
            out[key] = value
    return out


def shards_of(entry, spec, world):
    """[(rank, rows, cols, row_offset)] of a ParameterSharding; data_parallel: replicas."""
    if entry["sharding_type"] == "data_parallel":
        ranks = entry.get("ranks") or list(range(world))
        return [(r, spec["rows"], spec["dim"], 0) for r in ranks]
    result = []
    for shard in entry["sharding_spec"]["shards"]:
        rank = int(shard["placement"].split("/")[0].split(":")[1])
        result.append((rank, shard["shard_sizes"][0], shard["shard_sizes"][1],
                       shard["shard_offsets"][0]))
    return result


class Yardstick:
    """Per-rank bytes of one plan (module docstring: the formulas)."""

    def __init__(self, case, plan):
        w = case["world"]
        self.world = w
        self.case = case
        zeros = lambda: [0.0] * w
        self.lookup, self.host_read = zeros(), zeros()
        self.hbm, self.host_mem = zeros(), zeros()
        # sent / received, intra / inter, per distribution
        self.comm = {(d, s, n): zeros() for d in ("in", "out") for s in ("sent", "recv")
                     for n in ("intra", "inter")}
        self.allreduce_s = zeros()
        self._broadcast = {}
        entries = flatten(plan)
        nodes = (w + PER_NODE - 1) // PER_NODE
        for t in case["tables"]:
            e = entries[t["name"]]
            kind, kernel = e["sharding_type"], e["compute_kernel"]
            L = sum(l for _, l in t["features"])
            F = len(t["features"])
            D = t["dim"]
            shards = shards_of(e, t, w)
            if kind == "data_parallel":
                size = t["rows"] * D * 4
                replicas = len(shards)
                rep_nodes = len({r // PER_NODE for r, *_ in shards})
                per_node = min(PER_NODE, replicas)
                for r, *_ in shards:
                    self.lookup[r] += BATCH * L * D * 4
                    self.hbm[r] += size
                    if replicas > 1:
                        intra = 2 * (per_node - 1) / per_node * size
                        inter = 2 * (rep_nodes - 1) / rep_nodes * size / per_node \
                            if rep_nodes > 1 else 0
                        self.allreduce_s[r] += intra / INTRA_BW + inter / INTER_BW
                continue
            row_kinds = kind in ("row_wise", "table_row_wise")
            n = len(shards)
            for position, (r, rows, cols, _) in enumerate(shards):
                rho = rows / t["rows"] if row_kinds else 1.0
                looked = BATCH * w * L * rho * cols * 4
                weights = rows * cols * 4
                if kernel == "fused":
                    self.lookup[r] += looked
                    self.hbm[r] += weights
                else:  # fused_uvm_caching / fused_uvm: host memory, a device cache
                    cached = CACHE_FRACTION if kernel == "fused_uvm_caching" else 0.0
                    self.lookup[r] += looked * cached
                    self.host_read[r] += looked * (1 - cached)
                    self.hbm[r] += weights * cached
                    self.host_mem[r] += weights
                # input: ids and lengths from every other rank
                self._gather("in", r, BATCH * (L * rho * 8 + F * 4))
                # output
                if kind == "table_row_wise" and n > 1:
                    node_ranks = [s[0] for s in shards]
                    part = BATCH * w / n * F * D * 4
                    for q in node_ranks:
                        if q != r:
                            self._move("out", r, q, part)
                    for q in range(position, w, n):
                        if q != r:
                            self._move("out", r, q, BATCH * F * D * 4)
                else:
                    width = D if kind == "row_wise" else cols
                    self._scatter("out", r, BATCH * F * width * 4)
        self._settle()
        self.nodes = nodes

    def _gather(self, dist, receiver, nbytes):
        """Every other rank sends `nbytes` to `receiver` (the senders' side is
        settled once at the end: O(1) per call, so 512 ranks stay fast)."""
        node = receiver // PER_NODE
        peers = self._node_size(node) - 1
        self.comm[(dist, "recv", "intra")][receiver] += peers * nbytes
        self.comm[(dist, "recv", "inter")][receiver] += (self.world - 1 - peers) * nbytes
        acc = self._broadcast.setdefault((dist, "sent"), ([0.0] * self._nodes(), [0.0],
                                                         [0.0] * self.world))
        acc[0][node] += nbytes
        acc[1][0] += nbytes
        acc[2][receiver] += nbytes

    def _scatter(self, dist, sender, nbytes):
        """`sender` sends `nbytes` to every other rank."""
        node = sender // PER_NODE
        peers = self._node_size(node) - 1
        self.comm[(dist, "sent", "intra")][sender] += peers * nbytes
        self.comm[(dist, "sent", "inter")][sender] += (self.world - 1 - peers) * nbytes
        acc = self._broadcast.setdefault((dist, "recv"), ([0.0] * self._nodes(), [0.0],
                                                         [0.0] * self.world))
        acc[0][node] += nbytes
        acc[1][0] += nbytes
        acc[2][sender] += nbytes

    def _settle(self):
        """The other side of every _gather / _scatter: rank q sends to (receives
        from) each rank of its node but itself over NVLink, the rest across nodes."""
        for (dist, side), (per_node, everyone, own) in self._broadcast.items():
            for q in range(self.world):
                node_total = per_node[q // PER_NODE]
                self.comm[(dist, side, "intra")][q] += node_total - own[q]
                self.comm[(dist, side, "inter")][q] += everyone[0] - node_total
        self._broadcast = {}

    def _nodes(self):
        return (self.world + PER_NODE - 1) // PER_NODE

    def _node_size(self, node):
        return min(PER_NODE, self.world - node * PER_NODE)

    def _move(self, dist, sender, receiver, nbytes):
        where = "intra" if sender // PER_NODE == receiver // PER_NODE else "inter"
        self.comm[(dist, "sent", where)][sender] += nbytes
        self.comm[(dist, "recv", where)][receiver] += nbytes

    def comm_seconds(self, dist, r):
        c = self.comm
        intra = max(c[(dist, "sent", "intra")][r], c[(dist, "recv", "intra")][r])
        inter = max(c[(dist, "sent", "inter")][r], c[(dist, "recv", "inter")][r])
        return intra / INTRA_BW + inter / INTER_BW

    def a2a_bytes(self, r):
        c = self.comm
        return max(sum(c[(d, s, n)][r] for d in ("in", "out") for n in ("intra", "inter"))
                   for s in ("sent", "recv"))

    def inter_bytes(self, r):
        c = self.comm
        return max(sum(c[(d, s, "inter")][r] for d in ("in", "out")) for s in ("sent", "recv"))

    def figures(self):
        w = range(self.world)
        lookup = max(self.lookup[r] / HBM_LOOKUP_BW for r in w)
        host = max(self.host_read[r] / PCIE_BW for r in w)
        dist_in = max(self.comm_seconds("in", r) for r in w)
        dist_out = max(self.comm_seconds("out", r) for r in w)
        forward = lookup + host + dist_in + dist_out
        training = forward + dist_out + 2 * (lookup + host) + max(self.allreduce_s)
        mean_lookup = sum(self.lookup) / self.world
        return {
            "max_lookup_bytes": max(self.lookup),
            "max_a2a_bytes": max(self.a2a_bytes(r) for r in w),
            "max_inter_node_bytes": max(self.inter_bytes(r) for r in w),
            "max_hbm_fraction": max(self.hbm) / self.case["device"],
            "host_bytes": sum(self.host_mem),
            "imbalance": max(self.lookup) / mean_lookup if mean_lookup else 1.0,
            "forward_us": forward * 1e6,
            "training_us": training * 1e6,
        }


# --------------------------------------------------------------------------- the run

def write_fixture(path, case, plan):
    """The case and TorchRec's plan for it, as tests/unit/sharding/Inputs/torchrec_*.json
    (planner_vs_torchrec_test: no imported TorchRec plan scores better under Ember's model)."""
    with open(path, "w") as f:
        json.dump({"world_size": case["world"], "ranks_per_node": PER_NODE,
                   "device_memory_bytes": int(case["device"]), "batch_size": BATCH,
                   "tables": [{"name": t["name"], "rows": t["rows"], "dim": t["dim"],
                               "features": [[n, l] for n, l in t["features"]]}
                              for t in case["tables"]],
                   "torchrec_plan": plan}, f, separators=(",", ":"))
        f.write("\n")


def check_cached_plan(plan, seconds, error, case):
    """Raises ValueError naming what is wrong when a cached entry is not TorchRec's plan
    of `case` (every table, each sharding with its shards on ranks of the world) or its
    planning time and error are not a number and a message."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        raise ValueError(f"'seconds' must be a non-negative number, got {seconds!r}")
    if error is not None and not isinstance(error, str):
        raise ValueError(f"'error' must be a message or null, got {error!r}")
    if plan is None:
        if error is None:
            raise ValueError("no plan and no error")
        return
    if not isinstance(plan, dict):
        raise ValueError(f"'plan' must be an object, got {type(plan).__name__}")
    entries = flatten(plan)
    for t in case["tables"]:
        e = entries.get(t["name"])
        if not isinstance(e, dict):
            raise ValueError(f"table '{t['name']}' has no sharding")
        if not isinstance(e.get("sharding_type"), str) or \
                not isinstance(e.get("compute_kernel"), str):
            raise ValueError(f"table '{t['name']}': sharding_type and compute_kernel must "
                             "be strings")
        try:
            shards = shards_of(e, t, case["world"])
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as why:
            raise ValueError(f"table '{t['name']}': unreadable shards "
                             f"({type(why).__name__}: {why})")
        for rank, rows, cols, _ in shards:
            if not (isinstance(rank, int) and 0 <= rank < case["world"]):
                raise ValueError(f"table '{t['name']}': rank {rank!r} is outside the "
                                 f"world of {case['world']}")
            if not all(isinstance(v, int) and v > 0 for v in (rows, cols)):
                raise ValueError(f"table '{t['name']}': shard sizes {rows!r} x {cols!r}")


def cached_torchrec_plan(name, case, cache, timeout=None):
    """TorchRec's plan for a case, read from cache/<name>.json when an earlier run wrote it
    (TorchRec takes hours on the 1,000-table cases here), else planned (with `timeout`, see
    torchrec_plan) and written there with the timeout it had (plan, planning seconds,
    error). Without a cache: planned."""
    if not cache:
        return torchrec_plan(case, timeout)
    path = os.path.join(cache, f"{name}.json")
    if os.path.exists(path):
        try:
            with open(path) as f:
                saved = json.load(f)
            plan, seconds, error = saved["plan"], saved["seconds"], saved["error"]
            check_cached_plan(plan, seconds, error, case)
            return plan, seconds, error
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise SystemExit(f"{path}: not a TorchRec plan written by --torchrec-plans "
                             f"({type(error).__name__}: {error}); delete it to plan again")
    plan, seconds, error = torchrec_plan(case, timeout)
    os.makedirs(cache, exist_ok=True)
    partial = path + ".partial"
    with open(partial, "w") as f:
        json.dump({"plan": plan, "seconds": seconds, "error": error,
                   "timeout_seconds": timeout}, f)
    os.replace(partial, path)
    return plan, seconds, error


def capped_topology(paths, work, cap_bytes):
    """A copy of the case's topology whose ranks give at most `cap_bytes` of device memory
    to embeddings (embedding_memory_cap_gb); returns the inputs with it."""
    with open(paths["topology.json"]) as f:
        topology = json.load(f)
    topology["embedding_memory_cap_gb"] = cap_bytes / GB
    capped = dict(paths, **{"topology.json": os.path.join(work, "topology-capped.json")})
    with open(capped["topology.json"], "w") as f:
        json.dump(topology, f)
    return capped


def run_case(name, case, bin_dir, work, fixtures=None, cache=None, torchrec_only=False,
             cap_at_torchrec=False, torchrec_timeout=None, torchrec_estimates=True):
    work = os.path.join(work, name)
    paths = write_inputs(case, work)
    rows = []
    like = ["objective=training", "memory-reservation=torchrec"]
    plan, seconds, error = cached_torchrec_plan(name, case, cache, torchrec_timeout)
    if torchrec_only:
        return [{"case": name, "planner": "torchrec", "plan_seconds": seconds,
                 "error": error, "planned": plan is not None}]
    torchrec_file = os.path.join(work, "torchrec.json")
    score = None
    if plan is not None:
        with open(torchrec_file, "w") as f:
            json.dump(plan, f)
        if fixtures:
            write_fixture(os.path.join(fixtures, f"torchrec_{name.replace('-', '_')}.json"),
                          case, plan)
        _, _, score, import_error = ember_plan(bin_dir, paths, work, "import-torchrec", like,
                                               import_file=torchrec_file)
        if import_error:
            score = "not imported: " + import_error
    rows.append(("torchrec", plan, seconds, score, error))
    runs = [("ember training+torchrec-mem", like, paths),
            ("ember training-lean+torchrec-mem",
             ["objective=training-lean", "memory-reservation=torchrec"], paths),
            ("ember inference+torchrec-mem",
             ["objective=inference", "memory-reservation=torchrec"], paths)]
    if cap_at_torchrec and plan is not None:
        # Ember's embeddings (weights and buffers) capped at the HBM the yardstick
        # counts on TorchRec's fullest rank (its weights).
        cap = max(Yardstick(case, plan).hbm)
        capped = capped_topology(paths, work, cap)
        runs += [(label + "+hbm-cap", options, capped) for label, options, _ in runs]
    for label, options, inputs in runs:
        tag = label.split()[1]
        plan, seconds, score, error = ember_plan(bin_dir, inputs, work, tag, options)
        rows.append((label, plan, seconds, score, error))
    estimator = TorchRecEstimator(case) if torchrec_estimates else None
    results = []
    for label, plan, seconds, score, error in rows:
        entry = {"case": name, "planner": label, "plan_seconds": seconds,
                 "ember_model_us": score, "error": error}
        if plan is not None:
            entry.update(Yardstick(case, plan).figures())
            torchrec_score = estimator.score(case, plan) if estimator else None
            if torchrec_score is None:
                pass
            elif isinstance(torchrec_score, str):
                entry["torchrec_model_us"] = "not estimated: " + torchrec_score
            else:
                entry["torchrec_model_us"], entry["torchrec_model_hbm_bytes"] = torchrec_score
            kinds = {}
            for e in flatten(plan).values():
                kinds[e["sharding_type"]] = kinds.get(e["sharding_type"], 0) + 1
            entry["kinds"] = kinds
        results.append(entry)
    return results


def fmt(value, scale=1.0, digits=1):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"{value / scale:.{digits}f}"


def print_table(results, out=sys.stdout):
    head = ("case", "planner", "plan s", "lookup MB", "a2a MB", "inter MB", "HBM %",
            "host GB", "imbal", "fwd us", "train us", "ember us", "trec us", "trec HBM GB")
    out.write("| " + " | ".join(head) + " |\n")
    out.write("|" + "|".join("---" for _ in head) + "|\n")
    for r in results:
        if r.get("error"):
            out.write(f"| {r['case']} | {r['planner']} | {fmt(r['plan_seconds'], digits=2)} | "
                      f"no plan: {r['error']} |\n")
            continue
        score = r["ember_model_us"]
        out.write("| " + " | ".join([
            r["case"], r["planner"], fmt(r["plan_seconds"], digits=2),
            fmt(r["max_lookup_bytes"], 1e6), fmt(r["max_a2a_bytes"], 1e6),
            fmt(r["max_inter_node_bytes"], 1e6), fmt(100 * r["max_hbm_fraction"]),
            fmt(r["host_bytes"], 1e9, 2), fmt(r["imbalance"], digits=2),
            fmt(r["forward_us"]), fmt(r["training_us"]),
            fmt(score) if not isinstance(score, str) else score,
            fmt(r.get("torchrec_model_us")) if not isinstance(r.get("torchrec_model_us"), str)
            else r["torchrec_model_us"][:80],
            fmt(r.get("torchrec_model_hbm_bytes"), 1e9, 2)]) + " |\n")
    out.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bin_dir", help="build/release/bin (ember-opt)")
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES))
    parser.add_argument("--work", default=None, help="keep the inputs and plans here")
    parser.add_argument("--json", default=None, help="write the figures as JSON here")
    parser.add_argument("--fixtures", default=None,
                        help="also write each case with TorchRec's plan into this folder "
                             "(tests/unit/sharding/Inputs)")
    parser.add_argument("--torchrec-plans", default=None,
                        help="read TorchRec's plan of each case from DIR/<case>.json when "
                             "there, else plan and write it there")
    parser.add_argument("--torchrec-only", action="store_true",
                        help="only plan with TorchRec (with --torchrec-plans: fill the cache)")
    parser.add_argument("--hbm-cap", action="store_true",
                        help="also plan with Ember's embeddings capped at the HBM of "
                             "TorchRec's fullest rank (topology embedding_memory_cap_gb)")
    parser.add_argument("--torchrec-timeout", type=float, default=None, metavar="SECONDS",
                        help="TorchRec's timeout_seconds: its search stops after SECONDS and "
                             "returns the best plan found so far (default: none)")
    parser.add_argument("--no-torchrec-estimates", action="store_true",
                        help="leave out TorchRec's estimators' score of each plan (at "
                             "1,000 tables x 512 ranks they take over 15 minutes)")
    args = parser.parse_args()
    if args.torchrec_timeout is not None and not args.torchrec_timeout > 0:
        parser.error(f"--torchrec-timeout must be positive, got {args.torchrec_timeout}")
    cases = make_cases()
    names = [c for c in args.cases.split(",") if c]
    unknown = [c for c in names if c not in cases]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)} (known: {', '.join(cases)})")
    if args.torchrec_only and not args.torchrec_plans:
        parser.error("--torchrec-only needs --torchrec-plans DIR")
    if not os.access(os.path.join(args.bin_dir, "ember-opt"), os.X_OK):
        parser.error(f"no ember-opt in {args.bin_dir}")
    work = args.work or tempfile.mkdtemp(prefix="planner_vs_torchrec_")
    results = []
    for name in names:
        case_results = run_case(name, cases[name], args.bin_dir, work, args.fixtures,
                                args.torchrec_plans, args.torchrec_only, args.hbm_cap,
                                args.torchrec_timeout, not args.no_torchrec_estimates)
        if args.torchrec_only:
            print(json.dumps(case_results[0]), flush=True)
            continue
        results.extend(case_results)
        print_table(case_results, sys.stderr)
    if args.torchrec_only:
        return
    print_table(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
