"""Communication/compute overlap on a real network (issue 14): N ranks as separate hosts in
network namespaces on this machine, their links rate-limited with tc tbf, running a sharded
plan with `ember-run` and the launcher variables, in each overlap mode.

usage: python3 bench/overlap_netns.py [--models dlrm,many] [--ranks 2,4]
           [--links 25,100,400] [--scale 100|auto] [--modes off,streams,pipeline]
           [--batch-per-rank 1024] [--repeat 20] [--rounds 3] [--warmup 5] [--threads 1]
           [--pipeline-depth 3[,5,...]] [--mtu 9000]
           [--work DIR] [--json FILE] [--bin build/release/bin]
           [--fail-rank R --fail-after S]    (test hook: kill rank R S seconds into a run)
Needs root (namespaces); exits 77 saying why when it cannot make them.

Hosts: one namespace per rank, a veth (MTU 9000) to a bridge in a hub namespace; `--links`
are the modelled NIC rates in Gb/s, divided by `--scale` and applied with tc tbf to both
directions of every host's link, so every rank has one NIC of that rate to a non-blocking
switch. The link without a limit (the veth's own speed) always runs first.
--mtu (default 9000, up to 65000): the veths' and the bridge's MTU; tbf's bucket holds one
packet of it. Every packet costs this machine's CPU a trip through tbf, two veths, the
bridge and TCP (and an ACK every second one): at 9000 the 26-table models spend ~40 ms of
the ranks' ~140 ms of CPU per step on it, at 65000 (the 64 KiB segments a NIC with TSO/GRO
hands the host) a fraction; the tbf bucket then lets one 64 KiB packet through at the
veth's speed, which matters for the DLRM example's small steps, not for the 26-table models
(docs/performance.md, "Where the ranks' CPU goes").
--scale 100 (default): 25 / 100 / 400 Gb/s become 250 Mb/s / 1 Gb/s / 4 Gb/s. Why 1/100:
an H100 reads its HBM at ~3 TB/s, a core of this machine streams ~30 GB/s, and a DLRM
step's compute is dominated by memory traffic (lookups, MLP weights), so slowing the links
by the same ratio keeps the ratio of communication to compute time those links give a
real step. --scale auto: per model and world size, the ratio of the compute time measured
here (the trace's, without a limit) to the compute time of the compiler's predicted
timeline on H100s (ember-compile --emit timeline): exact by construction, but only as good
as the cost model. Every row also carries the predicted H100 comm/compute ratio and
exposed share at its link rate, to set beside the measured ones.

Models (built once under --work):
  dlrm  examples/dlrm (3 tables of 1k-5k rows, dim 16, exported with torch.onnx), table-wise
  many  26 tables of 20,000 x 64 (ember.EmbeddingBagCollection, a KJT input with 0-16 ids
        per bag), bottom MLP 13-128-64, top MLP 1728-256-64-1; table-wise, so each rank's
        kjt_all_to_all sends the ids of the other ranks' tables and its pooled all_to_all
        sends B x 64 x (its tables) floats per peer
  wide  the same with a bottom MLP of 13-512-512-64 (not in the default --models): compute
        that needs no collective, to show what streams hide when a plan has some
Each is compiled per world size twice: with --comm-stream=false (mode off: one stream,
program order) and --comm-stream=true (collectives on stream 1, reordered; modes streams
and pipeline). Each rank takes batch-per-rank samples of one global batch (--split-batch).

Modes:
  off       the --comm-stream=false plan; `--overlap off` when ember-run has --overlap
  streams   the --comm-stream plan with `--overlap streams` (when ember-run has --overlap;
            without it the run is the reordered plan in program order, and says so)
  pipeline  `--overlap streams --pipeline-depth D` (--pipeline-depth, default 3: the input
            distribution two batches ahead, the compute that needs no collective one batch
            ahead, so that a batch's pooled all-to-all runs while the caller computes the
            batch before it and the one after; docs/runtime.md) when ember-run has
            --pipeline-depth
            (skipped, with the reason, when it has not). Several depths (--pipeline-depth
            3,5) make one mode each, "pipeline d3", "pipeline d5", run in the same rounds

Per configuration: the step time of every rank (ember-run --report-json: median, min, p90
over --repeat steps after --warmup), throughput = global batch / max over ranks of the
median step; with a trace (`ember-run --trace`, when it exists) per rank compute, comm (time
in collectives) and exposed comm (time the compute stream spends in collectives or waiting
for them) per step, from the trace-event JSON (docs/trace-format.md); without one the
communication is estimated as the off-mode step at that rate minus the off-mode step with
no limit (labelled "est."). Pipelined rows split their exposed communication into fill (the
caller's waits before its first compute), drain (the last batch's once every other batch is
computed: neither can be hidden within one call) and steady (the rest: one rank waiting for a
lagging one, mostly). Every row gives the ranks' CPU time per step (user + system, startup
included), the cores that is over the run's wall time, rank 0's own CPU per step over its
timed steps only (ember-run's cpu_ms_per_run: every thread, no startup, no warm-up; "rank 0
steady"), and the whole machine's busy share.
Every mode's outputs must be byte-identical to mode off's at the same rate: a difference is
an error (exit 1).
Every namespace, veth, bridge and rank it made is removed on exit, also on an error,
Ctrl-C, SIGTERM or SIGHUP (SIGKILL cannot be caught: the next run removes what a killed
run left, by the pid in the namespace names).
"""
import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import netns_hosts  # noqa: E402

PORT_BASE = 29600
TAG = "embov"
MODES = ("off", "streams", "pipeline")


class BenchError(Exception):
    pass


class UsageRefused(BenchError):
    """Every rank refused the command line (ember-run's exit status 2, usage): this
    ember-run does not take a mode's flags the way this benchmark passes them."""


# --- models ---------------------------------------------------------------------------------

MANY_TABLES, MANY_ROWS, MANY_DIM, MANY_MAX_BAG = 26, 20000, 64, 16
DLRM_IDS_PER_BAG = 2  # examples/dlrm/export.py: 0..4 ids per bag


def build_dlrm(work, batch):
    d = os.path.join(work, "dlrm")
    if not os.path.exists(os.path.join(d, "model.onnx")) or _batch_of(d) < batch:
        p = subprocess.run([sys.executable, os.path.join(REPO, "examples", "dlrm", "export.py"), d,
                            "--batch", str(batch)], capture_output=True, text=True)
        if p.returncode != 0:
            raise BenchError("examples/dlrm/export.py failed:\n" + p.stderr)
    return d


BOTTOM_MLPS = {"many": (128,), "wide": (512, 512)}  # hidden widths of the bottom MLP


def build_many(work, batch, name="many"):
    """The 26-table model; `wide`: the same with a bottom MLP of 13-512-512-64, compute
    that does not depend on the embeddings (what streams can hide the input dist behind)."""
    d = os.path.join(work, name)
    if os.path.exists(os.path.join(d, "model.onnx")) and _batch_of(d) >= batch:
        return d
    os.makedirs(d, exist_ok=True)
    sys.path.insert(0, os.path.join(REPO, "compiler", "frontends", "torch"))
    import torch
    import torch.nn as nn
    import ember
    from ember import EmbeddingBagCollection, EmbeddingBagConfig, KeyedJaggedTensor

    class ManyTables(nn.Module):
        def __init__(self):
            super().__init__()
            layers, width = [], 13
            for hidden in BOTTOM_MLPS[name] + (MANY_DIM,):
                layers += [nn.Linear(width, hidden), nn.ReLU()]
                width = hidden
            self.bottom = nn.Sequential(*layers)
            self.ebc = EmbeddingBagCollection([
                EmbeddingBagConfig("t%d" % i, MANY_ROWS, MANY_DIM, ["f%d" % i], "sum")
                for i in range(MANY_TABLES)])
            self.top = nn.Sequential(nn.Linear(MANY_DIM * (MANY_TABLES + 1), 256), nn.ReLU(),
                                     nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 1), nn.Sigmoid())

        def forward(self, dense, kjt):
            return self.top(torch.cat([self.bottom(dense), self.ebc(kjt).values()], 1))

    torch.manual_seed(0)
    model = ManyTables().eval()
    gen = torch.Generator().manual_seed(1)
    dense = torch.randn(batch, 13, generator=gen)
    lengths = torch.randint(0, MANY_MAX_BAG + 1, (MANY_TABLES * batch,), generator=gen)
    values = torch.randint(0, MANY_ROWS, (int(lengths.sum()),), generator=gen)
    kjt = KeyedJaggedTensor(["f%d" % i for i in range(MANY_TABLES)], values, lengths)
    ember.export(model, (dense, kjt), os.path.join(d, "model.onnx"))
    np.savez(os.path.join(d, "inputs.npz"), **{"dense": dense.numpy(), "kjt.values": values.numpy(),
                                              "kjt.lengths": lengths.numpy()})
    return d


def _batch_of(model_dir):
    path = os.path.join(model_dir, "inputs.npz")
    if not os.path.exists(path):
        return 0
    with np.load(path) as z:
        return int(z["dense"].shape[0])


def slice_inputs(model, model_dir, batch, out):
    """The first `batch` samples of the model's inputs (dense rows, bags) as out."""
    with np.load(os.path.join(model_dir, "inputs.npz")) as z:
        arrays = {k: z[k] for k in z.files}
    full = arrays["dense"].shape[0]
    res = {"dense": arrays["dense"][:batch]}
    if model == "dlrm":
        t = 0
        while "ids%d" % t in arrays:
            offsets = arrays["offsets%d" % t]
            end = int(offsets[batch]) if batch < full else arrays["ids%d" % t].shape[0]
            res["offsets%d" % t] = offsets[:batch]
            res["ids%d" % t] = arrays["ids%d" % t][:end]
            t += 1
    else:
        lengths = arrays["kjt.lengths"].reshape(MANY_TABLES, full)  # key-major
        keep = lengths[:, :batch]
        starts = np.concatenate([[0], np.cumsum(lengths.sum(axis=1))[:-1]])
        values = [arrays["kjt.values"][s:s + int(keep[k].sum())] for k, s in enumerate(starts)]
        res["kjt.lengths"] = np.ascontiguousarray(keep).reshape(-1)
        res["kjt.values"] = np.concatenate(values)
    np.savez(out, **res)
    return out


def compile_plan(args, model_dir, world, comm_stream, out):
    """The model's plan for `world` ranks, table-wise; with the communication stream or
    (comm_stream False) explicitly without it: program order on one stream. Reused while
    newer than the model and ember-compile."""
    compiler, model = os.path.join(args.bin, "ember-compile"), os.path.join(model_dir, "model.onnx")
    if os.path.exists(out) and os.path.getmtime(out) > max(os.path.getmtime(compiler),
                                                           os.path.getmtime(model)):
        return out
    cmd = [compiler, model, "-o", out, "--world-size", str(world), "--sharding", "table_wise",
           "--comm-stream=%s" % ("true" if comm_stream else "false")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise BenchError("ember-compile failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return out


_PREDICTION_WARNED = []


def predicted_split(args, model, model_dir, world, gbps, comm_stream, batch_per_rank):
    """The compiler's predicted timeline (ember-compile --emit timeline) of the same model
    and sharding on `world` H100s, one per host, each with one NIC of `gbps` Gb/s (the
    topology's defaults otherwise): mean over ranks of compute, comm and exposed comm (ms),
    or None when this ember-compile has no timeline."""
    if gbps == 0:
        return None
    topo = os.path.join(args.work, "topology_%g.json" % gbps)
    with open(topo, "w") as f:
        json.dump({"ranks_per_node": 1, "inter_node_bandwidth_gb_per_s": gbps / 8}, f)
    out = os.path.join(args.work, "predicted_%s_w%d_l%g_%s.json" % (
        model, world, gbps, "streams" if comm_stream else "off"))
    cmd = [os.path.join(args.bin, "ember-compile"), os.path.join(model_dir, "model.onnx"), "-o", out,
           "--world-size", str(world), "--sharding", "table_wise", "--emit", "timeline",
           "--topology", topo, "--batch-per-rank", str(batch_per_rank),
           "--ids-per-bag", str(DLRM_IDS_PER_BAG if model == "dlrm" else MANY_MAX_BAG / 2)]
    cmd.append("--comm-stream=%s" % ("true" if comm_stream else "false"))
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        # The prediction is context, not the measurement: say so once and go on without it.
        if not _PREDICTION_WARNED:
            print("note: no predicted timeline (%s): %s" % (" ".join(cmd[:2] + ["..."]),
                                                            (p.stderr.strip().splitlines() or ["?"])[-1]),
                  flush=True)
            _PREDICTION_WARNED.append(True)
        return None
    try:
        split = trace_split([out], world)
    except BenchError as e:
        print("note: the predicted timeline is not readable: %s" % e, flush=True)
        return None
    n = len(split)
    return {k: sum(v[k] for v in split.values()) / n for k in ("compute_ms", "comm_ms", "exposed_ms")}


# --- what this ember-run can do -------------------------------------------------------------

def run_features(args):
    p = subprocess.run([os.path.join(args.bin, "ember-run"), "--help"], capture_output=True,
                       text=True)
    text = p.stdout + p.stderr
    return {"overlap": "--overlap" in text, "pipeline": "--pipeline-depth" in text,
            "trace": "--trace" in text}


def mode_flags(mode, features, depth=3):
    """ember-run flags of a mode, or (None, reason) when this build cannot run it."""
    if mode == "off":
        return (["--overlap", "off"] if features["overlap"] else []), None
    if mode == "streams":
        if features["overlap"]:
            return ["--overlap", "streams"], None
        return [], "ember-run has no --overlap: the --comm-stream plan ran in program order"
    if not features["pipeline"]:
        return None, "ember-run has no --pipeline-depth"
    return ["--overlap", "streams", "--pipeline-depth", str(depth)], None


# --- traces ---------------------------------------------------------------------------------

SUMMARY = os.path.join(REPO, "scripts", "ember-trace-summary.py")


def trace_steps(path):
    """Steps in a trace: the most runs of one instruction on one rank (one per step, or per
    batch when pipelining)."""
    with open(path) as f:
        doc = json.load(f)
    runs = {}
    for ev in doc.get("traceEvents", []):
        if ev.get("ph") == "X" and ev.get("cat") in ("compute", "collective"):
            key = (ev.get("pid"), ev.get("args", {}).get("instruction"))
            runs[key] = runs.get(key, 0) + 1
    return max(runs.values()) if runs else 1, doc.get("otherData", {}).get("ranks", 0)


def trace_split(paths, world):
    """Per rank: compute, comm, exposed comm and step in ms per step, from
    scripts/ember-trace-summary.py (which also checks the trace against
    docs/trace-format.md). `paths`: one trace per rank, or one holding every rank."""
    paths = [p for p in paths if os.path.exists(p)]
    if not paths:
        return None
    if trace_steps(paths[0])[1] == world:
        paths = paths[:1]
    out = {}
    for path in paths:
        steps, _ = trace_steps(path)
        p = subprocess.run([sys.executable, SUMMARY, path, "--json"], capture_output=True, text=True)
        if p.returncode != 0:
            raise BenchError("ember-trace-summary.py %s: %s" % (path, p.stderr.strip()))
        for row in json.loads(p.stdout)["ranks"]:
            if row["slices"] == 0:
                continue
            out[row["rank"]] = {"steps": steps,
                                "compute_ms": row["compute_us"] / 1000 / steps,
                                "comm_ms": row["comm_us"] / 1000 / steps,
                                "exposed_ms": row["exposed_comm_us"] / 1000 / steps,
                                "span_ms": row["step_us"] / 1000 / steps}
    return out


def hideable_compute(path):
    """Compute the schedule puts in the shadow of its collectives, per step (ms, mean over
    ranks), from a trace with a communication stream. Stream 0 runs its instructions in
    index order; a collective c on stream 1 overlaps at most the stream-0 compute between
    c's index and its consumer's (the compute instruction that follows stream 0's wait for
    c, in any step; a collective stream 0 never waited for counts as all hidden). Exposed
    communication is at least comm minus this."""
    with open(path) as f:
        doc = json.load(f)
    by_rank = {}
    for ev in doc.get("traceEvents", []):
        if ev.get("ph") == "X":
            by_rank.setdefault(ev["pid"], []).append(ev)
    per_rank = []
    for evs in by_rank.values():
        evs.sort(key=lambda e: e["ts"])
        durations, runs, consumer, comm = {}, {}, {}, {}
        for i, e in enumerate(evs):
            instr = e.get("args", {}).get("instruction")
            if e["tid"] == 0 and e.get("cat") == "compute":
                durations[instr] = durations.get(instr, 0.0) + float(e["dur"])
                runs[instr] = runs.get(instr, 0) + 1
            elif e["tid"] >= 1 and e.get("cat") == "collective":
                comm[instr] = comm.get(instr, 0.0) + float(e["dur"])
            elif e["tid"] == 0 and e.get("cat") == "wait":
                nxt = [x for x in evs[i + 1:] if x["tid"] == 0 and x.get("cat") == "compute"]
                if nxt:
                    consumer.setdefault(instr, nxt[0]["args"].get("instruction"))
        steps = max(runs.values()) if runs else 1
        hidden = 0.0
        for c, total in comm.items():
            if c not in consumer:
                hidden += total  # never waited for: all of it was hidden
                continue
            hidden += sum(d for i, d in durations.items() if c < i < consumer[c])
        per_rank.append(hidden / steps / 1000)
    return sum(per_rank) / len(per_rank) if per_rank else 0.0


def pipeline_exposure(path):
    """A pipelined call's exposed communication split three ways, per step (ms, mean over
    ranks): `fill`, the caller's waits before its first compute (batch 0's input
    distribution: nothing to hide it under), `drain`, the last batch's waits once every
    other batch's compute is done (its output distribution, likewise), and `steady`, the
    rest: waits with other batches' work still to do, which a deeper pipeline or a
    balanced machine can remove. Fill and drain are a fixed cost per call: over N batches
    they add (input + output distribution) / N per step."""
    with open(path) as f:
        doc = json.load(f)
    by_rank = {}
    for ev in doc.get("traceEvents", []):
        if ev.get("ph") == "X" and ev.get("tid") == 0:
            by_rank.setdefault(ev["pid"], []).append(ev)
    parts = {"fill": [], "drain": [], "steady": []}
    for evs in by_rank.values():
        batches = max(e.get("args", {}).get("batch", 0) for e in evs) + 1
        compute = [e for e in evs if e.get("cat") == "compute"]
        if not compute:
            continue
        first = min(e["ts"] for e in compute)
        others = [e["ts"] + e["dur"] for e in compute if e.get("args", {}).get("batch", 0) != batches - 1]
        last_other = max(others) if others else first
        split = {"fill": 0.0, "drain": 0.0, "steady": 0.0}
        for e in evs:
            if e.get("cat") != "wait":
                continue
            if e["ts"] + e["dur"] <= first:
                split["fill"] += e["dur"]
            elif e.get("args", {}).get("batch", 0) == batches - 1 and e["ts"] >= last_other:
                split["drain"] += e["dur"]
            else:
                split["steady"] += e["dur"]
        for k, v in split.items():
            parts[k].append(v / batches / 1000)
    return {k: sum(v) / len(v) for k, v in parts.items() if v}


def handoff_latencies(path):
    """Thread hand-offs of a trace with a communication stream, in us: issue = from the end
    of the instruction a collective waited for (on stream 0) to the collective's start on
    stream 1; return = from the collective's end to the end of stream 0's wait for it.
    {"issue": [...], "return": [...]}: what each collective costs in wake-ups beyond its
    own time (exposed communication includes it)."""
    with open(path) as f:
        doc = json.load(f)
    steps = {}
    for ev in doc.get("traceEvents", []):
        if ev.get("ph") == "X":
            steps.setdefault((ev["pid"], ev.get("args", {}).get("batch", 0)), []).append(ev)
    out = {"issue": [], "return": []}
    for evs in steps.values():
        evs.sort(key=lambda e: e["ts"])
        for i, c in enumerate(evs):
            if c["tid"] < 1 or c.get("cat") != "collective":
                continue
            instr = c["args"].get("instruction")
            # Its own thread's last wait: the communication thread (tid 1), or a
            # pipelined run's collective thread (tid 2).
            waits1 = [e for e in evs[:i] if e["tid"] == c["tid"] and e.get("cat") == "wait"]
            if waits1:
                dep = [e for e in evs if e["tid"] == 0 and e.get("cat") == "compute" and
                       e["args"].get("instruction") == waits1[-1]["args"].get("instruction")]
                if dep:
                    out["issue"].append(c["ts"] - (dep[-1]["ts"] + dep[-1]["dur"]))
            waits0 = [e for e in evs if e["tid"] == 0 and e.get("cat") == "wait" and
                      e["args"].get("instruction") == instr]
            if waits0:
                out["return"].append(waits0[0]["ts"] + waits0[0]["dur"] - (c["ts"] + c["dur"]))
    return out


# --- one configuration ----------------------------------------------------------------------

class Runner:
    def __init__(self, args, hosts, features):
        self.args, self.hosts, self.features = args, hosts, features
        self.port = PORT_BASE

    def run(self, label, plan, inputs, world, flags, workdir):
        """Runs every rank; returns (per-rank report dicts, rank 0's output dir, traces)."""
        a = self.args
        shutil.rmtree(workdir, ignore_errors=True)
        os.makedirs(workdir)
        self.port += 1
        procs, reports, traces = [], [], []
        for r in range(world):
            env = {"RANK": str(r), "WORLD_SIZE": str(world), "LOCAL_RANK": "0",
                   "MASTER_ADDR": self.hosts.addr(0), "MASTER_PORT": str(self.port),
                   "EMBER_COMM_HOST": self.hosts.addr(r), "EMBER_QUIET": "1"}
            report = os.path.join(workdir, "report%d.json" % r)
            cmd = ([] if a.nice == 0 else ["nice", "-n", str(a.nice)]) + [
                   os.path.join(a.bin, "ember-run"), plan, "--inputs", inputs, "--split-batch",
                   "--repeat", str(a.repeat), "--warmup", str(a.warmup), "--threads", str(a.threads),
                   "--timeout", str(a.timeout), "--report-json", report,
                   "--output-dir", os.path.join(workdir, "out%d" % r)] + flags
            if self.features["trace"]:  # one path: rank 0 merges the other ranks' parts into it
                traces = [os.path.join(workdir, "trace.json")]
                cmd += ["--trace", traces[0]]
            reports.append(report)
            with open(os.path.join(workdir, "rank%d.out" % r), "w") as out, \
                    open(os.path.join(workdir, "rank%d.err" % r), "w") as err:
                procs.append(self.hosts.spawn(r, cmd, env, out, err))
        counters = [self.hosts.link_counters(r) for r in range(world)]
        started = time.time()
        # CPU: the ranks' own (user + system, counted when they are reaped) and the whole
        # machine's busy share, over the run (startup included).
        usage0, jiffies0 = resource.getrusage(resource.RUSAGE_CHILDREN), machine_jiffies()
        deadline = started + a.timeout + 30 + a.repeat * 2.0
        killed = False
        while any(p.poll() is None for p in procs):
            if a.fail_rank is not None and not killed and time.time() - started > a.fail_after:
                procs[a.fail_rank].kill()
                killed = True
                print("  (test hook) killed rank %d after %.1f s" % (a.fail_rank, a.fail_after),
                      flush=True)
            if time.time() > deadline:
                for p in procs:
                    p.kill()
                raise BenchError("%s: ranks still running after %.0f s" % (label, deadline - started))
            time.sleep(0.02)
        usage1, jiffies1 = resource.getrusage(resource.RUSAGE_CHILDREN), machine_jiffies()
        wall = time.time() - started
        bad = [(r, p.returncode) for r, p in enumerate(procs) if p.returncode != 0]
        if bad:
            msg = ["%s: rank(s) failed:" % label]
            for r, rc in bad:
                with open(os.path.join(workdir, "rank%d.err" % r)) as f:
                    msg.append("  rank %d exit %s: %s" % (r, rc, f.read().strip()[-2000:]))
            if len(bad) == world and all(rc == 2 for _, rc in bad):
                with open(os.path.join(workdir, "rank0.err")) as f:
                    lines = [line.strip() for line in f if line.strip()]
                raise UsageRefused(lines[0] if lines else "usage error")
            raise BenchError("\n".join(msg))
        out = []
        for path in reports:  # ember-run writes the report on rank 0 (the other ranks: when it does)
            if os.path.exists(path):
                with open(path) as f:
                    out.append(json.load(f))
        if not out:
            raise BenchError("%s: rank 0 wrote no --report-json" % label)
        after = [self.hosts.link_counters(r) for r in range(world)]
        steps = self.args.repeat + self.args.warmup
        cpu_s = (usage1.ru_utime + usage1.ru_stime) - (usage0.ru_utime + usage0.ru_stime)
        cpu = {"ranks_cpu_ms_per_step": cpu_s * 1000 / steps, "wall_s": wall,
               "ranks_cores": cpu_s / wall if wall > 0 else 0.0,
               "machine_busy": ((jiffies1[0] - jiffies0[0]) / (jiffies1[1] - jiffies0[1])
                                if jiffies1[1] > jiffies0[1] else 0.0)}
        # Rank 0's own CPU per step over its timed steps (ember-run's cpu_ms_per_run: every
        # thread of the process, no startup, no warm-up), when its ember-run reports it.
        if "cpu_ms_per_run" in out[0]:
            cpu["rank0_steady_cpu_ms_per_step"] = out[0]["cpu_ms_per_run"]
        link = {"sent_bytes_per_step": [(b["bytes"] - a["bytes"]) / steps for a, b in zip(counters, after)],
                "overlimits": sum(b["overlimits"] - a["overlimits"] for a, b in zip(counters, after)),
                "dropped": sum(b["dropped"] - a["dropped"] for a, b in zip(counters, after))}
        link["cpu"] = cpu
        return out, os.path.join(workdir, "out0"), traces, link


def machine_jiffies():
    """(busy, total) CPU time of the whole machine so far, in jiffies (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def read_outputs(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


def link_label(gbps, scale):
    if gbps == 0:
        return "no limit"
    return "%g Gb/s (%s)" % (gbps, rate_text(gbps * 1e9 / scale))


def auto_scale(args, model, model_dir, world, results):
    """How much slower a step computes here than on an H100 (the compiler's predicted
    timeline, compute only): the links are slowed by as much, so that communication takes
    the same share of a step as on H100s with those NICs. Compute here is the trace's (mean
    over ranks) of the off run without a limit, or that run's median step when there is no
    trace (an upper bound: it includes the veth's own transfer time)."""
    base = [r for r in results if r["model"] == model and r["ranks"] == world and
            r["link_gbps"] == 0 and r["mode"] == "off"][-1]
    if base.get("trace"):
        here = sum(v["compute_ms"] for v in base["trace"].values()) / len(base["trace"])
        how = "trace compute"
    else:
        here = base["step_ms_median"]
        how = "median step without a limit"
    pred = predicted_split(args, model, model_dir, world, 100, False, args.batch_per_rank)
    if not pred or pred["compute_ms"] <= 0:
        return 100.0, "no predicted timeline: 1/100"
    return here / pred["compute_ms"], "%s %.3f ms here / %.4f ms predicted on an H100" % (
        how, here, pred["compute_ms"])


def rate_text(bps):
    if bps >= 1e9:
        return "%.3g Gbit/s" % (bps / 1e9)
    return "%.3g Mbit/s" % (bps / 1e6)


def bench_world(args, features, model_dirs, world, results):
    hosts = None
    try:
        hosts = netns_hosts.Hosts(world, tag=TAG, mtu=args.mtu)
        runner = Runner(args, hosts, features)
        for model in args.models:
            mdir = model_dirs[model]
            batch = args.batch_per_rank * world
            inputs = slice_inputs(model, mdir, batch, os.path.join(args.work, "%s_in_b%d.npz" % (model, batch)))
            plans = {False: compile_plan(args, mdir, world, False,
                                         os.path.join(args.work, "%s_w%d_off.plan" % (model, world))),
                     True: compile_plan(args, mdir, world, True,
                                        os.path.join(args.work, "%s_w%d_streams.plan" % (model, world)))}
            baseline_step = {}
            # No limit first: the scale (auto) and the estimate of communication need it.
            links = [0] + [g for g in args.links if g != 0]
            scale = args.scale if args.scale != "auto" else None
            for gbps in links:
                if gbps != 0 and scale is None:
                    scale, why_scale = auto_scale(args, model, mdir, world, results)
                    print("%-5s %d ranks: scale 1/%.0f (%s)" % (model, world, scale, why_scale), flush=True)
                hosts.rate_limit(None if gbps == 0 else gbps * 1e9 / scale)
                # A configuration per mode, and per depth for pipeline: "pipeline" with one
                # --pipeline-depth, "pipeline d5" with several.
                keys = {}
                for m in args.modes:
                    if gbps not in args.links and m != "off":
                        continue
                    if m != "pipeline":
                        keys[m] = (m, None)
                    for d in (args.pipeline_depth if m == "pipeline" else []):
                        keys[m if len(args.pipeline_depth) == 1 else "%s d%d" % (m, d)] = (m, d)
                modes = list(keys)
                rows, runs = {}, {m: [] for m in modes}
                for key in modes:
                    mode, depth = keys[key]
                    flags, why = mode_flags(mode, features, depth or 3)
                    rows[key] = row = {"model": model, "ranks": world, "link_gbps": gbps,
                                       "link": link_label(gbps, scale), "mode": mode,
                                       "batch": batch, "scale": scale, "flags": flags}
                    if depth:
                        row["pipeline_depth"] = depth
                    if flags is None:
                        row["skipped"] = why
                    elif why:
                        row["note"] = why
                    if flags is not None and gbps != 0 and mode != "pipeline":
                        row["predicted_h100"] = predicted_split(args, model, mdir, world, gbps, mode != "off",
                                                                args.batch_per_rank)
                # Rounds: every mode once per round, so that a change of load hits all.
                reference = None
                for rnd in range(args.rounds):
                    for key in modes:
                        row = rows[key]
                        mode = row["mode"]
                        if "skipped" in row:
                            continue
                        label = "%s %d ranks %s %s (round %d)" % (model, world, row["link"], key, rnd + 1)
                        try:
                            reports, outdir, traces, linkstats = runner.run(
                                label, plans[mode != "off"], inputs, world, row["flags"],
                                os.path.join(args.work, "runs", "%s_w%d_l%g_%s_r%d" % (
                                    model, world, gbps, key.replace(" ", "_"), rnd)))
                        except UsageRefused as e:
                            if mode == "off":
                                raise
                            # A mode whose flags this ember-run takes otherwise: reported, not fatal.
                            row["skipped"] = "ember-run refused %s: %s" % (" ".join(row["flags"]), str(e)[:300])
                            runs[key] = []
                            continue
                        outputs = read_outputs(outdir)
                        if reference is None:
                            reference = outputs  # mode off of round 1
                        elif outputs != reference:
                            raise BenchError("%s: outputs differ from mode off's" % label)
                        med = [rep["latency_ms"]["median"] for rep in reports]
                        slow = int(np.argmax(med))
                        run = {"median": max(med), "min": reports[slow]["latency_ms"]["min"],
                               "p90": reports[slow]["latency_ms"]["p90"], "link": linkstats}
                        split = trace_split(traces, world) if traces else None
                        if split:
                            run["trace_file"] = [t for t in traces if os.path.exists(t)][0]
                            run["trace"] = {str(k): v for k, v in sorted(split.items())}
                            run["comm_ms"] = sum(v["comm_ms"] for v in split.values()) / len(split)
                            run["exposed_ms"] = sum(v["exposed_ms"] for v in split.values()) / len(split)
                            run["compute_ms"] = sum(v["compute_ms"] for v in split.values()) / len(split)
                            if mode == "streams":  # one batch at a time: the in-step bound
                                run["hideable_ms"] = hideable_compute(run["trace_file"])
                            if mode != "off":
                                run["handoff_us"] = handoff_latencies(run["trace_file"])
                            if mode == "pipeline":
                                run["exposed_split_ms"] = pipeline_exposure(run["trace_file"])
                        runs[key].append(run)
                for key in modes:
                    row = rows[key]
                    mode = row["mode"]
                    row.pop("flags", None)
                    if "skipped" not in row:
                        summarize_runs(row, runs[key], runs["off"])
                        row["identical_to_off"] = True
                        if "comm_ms" not in row and mode == "off":
                            baseline_step.setdefault(gbps, row["step_ms_median"])
                            if 0 in baseline_step:
                                row["comm_ms_est"] = row["step_ms_median"] - baseline_step[0]
                    results.append(row)
                    print_row(row)
    finally:
        if hosts is not None:
            hosts.close()


def _median(values):
    return float(np.median(values)) if values else None


def summarize_runs(row, runs, off_runs):
    """A mode's row from its runs (one per round): the median over rounds of each run's
    median step, the spread of those medians, the fastest step and the median p90; the
    per-round speed-up over mode off's run of the same round; comm, exposed comm and
    compute per step from the traces (median over rounds)."""
    medians = [r["median"] for r in runs]
    row["rounds"] = len(runs)
    row["step_ms_median"] = _median(medians)
    row["step_ms_round_medians"] = medians
    row["step_ms_min"] = min(r["min"] for r in runs)
    row["step_ms_p90"] = _median([r["p90"] for r in runs])
    row["throughput"] = row["batch"] / (row["step_ms_median"] / 1000)
    ratios = [o["median"] / r["median"] for o, r in zip(off_runs, runs)]
    row["speedup_vs_off"] = {"median": _median(ratios), "min": min(ratios), "max": max(ratios)}
    row["link_counters"] = runs[-1]["link"]
    cpus = [r["link"]["cpu"] for r in runs if "cpu" in r["link"]]
    if cpus:
        # What the ranks and the machine used: with the machine's cores all busy, a step
        # cannot get shorter by any schedule of the same work.
        row["cpu"] = {k: _median([c[k] for c in cpus]) for k in ("ranks_cpu_ms_per_step", "ranks_cores",
                                                                 "machine_busy")}
        if all("rank0_steady_cpu_ms_per_step" in c for c in cpus):
            row["cpu"]["rank0_steady_cpu_ms_per_step"] = _median(
                [c["rank0_steady_cpu_ms_per_step"] for c in cpus])
    if all("comm_ms" in r for r in runs):
        for key in ("comm_ms", "exposed_ms", "compute_ms"):
            row[key] = _median([r[key] for r in runs])
        row["trace"] = runs[-1]["trace"]
        row["trace_file"] = runs[-1]["trace_file"]
        if all("hideable_ms" in r for r in runs):
            row["hideable_ms"] = _median([r["hideable_ms"] for r in runs])
        if all(r.get("exposed_split_ms") for r in runs):
            row["exposed_split_ms"] = {k: _median([r["exposed_split_ms"][k] for r in runs])
                                       for k in ("fill", "drain", "steady")}
        if all("handoff_us" in r for r in runs):
            row["handoff_us"] = {}
            for kind in ("issue", "return"):
                values = sorted(v for r in runs for v in r["handoff_us"][kind])
                if values:
                    row["handoff_us"][kind] = {"median": _median(values), "p90": values[int(0.9 * (len(values) - 1))],
                                               "max": values[-1], "n": len(values)}
        if row["comm_ms"] > 0:
            # What no schedule of this plan can hide, and what pipelining could at best.
            c, m = row["compute_ms"], row["comm_ms"]
            row["bounds"] = {"pipelined_exposed_share_min": max(0.0, m - c) / m,
                             "pipelined_speedup_max": (c + m) / max(c, m)}
            if "hideable_ms" in row:
                row["bounds"]["streams_exposed_share_min"] = max(0.0, m - row["hideable_ms"]) / m


def print_row(row):
    if "skipped" in row:
        print("%-5s %d ranks %-28s %-8s skipped: %s" % (row["model"], row["ranks"], row["link"], row["mode"],
                                                     row["skipped"]), flush=True)
        return
    mode = row["mode"] + (" d%d" % row["pipeline_depth"] if "pipeline_depth" in row else "")
    text = "%-5s %d ranks %-26s %-11s step %8.3f ms (rounds %s; min %.3f, p90 %.3f) %8.0f/s x%.2f" % (
        row["model"], row["ranks"], row["link"], mode, row["step_ms_median"],
        "-".join("%.3g" % m for m in sorted(row["step_ms_round_medians"])),
        row["step_ms_min"], row["step_ms_p90"], row["throughput"], row["speedup_vs_off"]["median"])
    lc = row.get("link_counters")
    if lc:
        text += "  sent %.0f KB/step/rank" % (sum(lc["sent_bytes_per_step"]) / len(lc["sent_bytes_per_step"]) / 1000)
    pred = row.get("predicted_h100")
    if pred and pred["compute_ms"] > 0:
        text += "  H100 model: comm/compute %.2f, exposed %.0f%%" % (
            pred["comm_ms"] / pred["compute_ms"], 100 * pred["exposed_ms"] / pred["comm_ms"] if pred["comm_ms"] else 0)
    if "comm_ms" in row:
        text += "  comm %.3f ms exposed %.3f ms (%.0f%%)" % (
            row["comm_ms"], row["exposed_ms"], 100 * row["exposed_ms"] / row["comm_ms"] if row["comm_ms"] else 0)
    elif "comm_ms_est" in row:
        text += "  comm added by the link (est.) %.3f ms" % row["comm_ms_est"]
    if "exposed_split_ms" in row:
        e = row["exposed_split_ms"]
        text += " [fill %.2f, drain %.2f, steady %.2f ms]" % (e["fill"], e["drain"], e["steady"])
    if "hideable_ms" in row:
        text += "  hideable %.3f ms (exposed >= %.0f%%)" % (
            row["hideable_ms"], 100 * row["bounds"]["streams_exposed_share_min"])
    h = row.get("handoff_us", {})
    if h.get("issue") and h.get("return"):
        text += "  hand-offs: issue %.0f/%.0f us, return %.0f/%.0f us (median/p90)" % (
            h["issue"]["median"], h["issue"]["p90"], h["return"]["median"], h["return"]["p90"])
    cpu = row.get("cpu")
    if cpu:
        text += "  cpu: ranks %.0f ms/step (%.2f of %d cores)" % (
            cpu["ranks_cpu_ms_per_step"], cpu["ranks_cores"], os.cpu_count())
        if "rank0_steady_cpu_ms_per_step" in cpu:
            text += ", rank 0 steady %.1f ms/step" % cpu["rank0_steady_cpu_ms_per_step"]
        text += ", machine %.0f%% busy" % (100 * cpu["machine_busy"])
    if row.get("mode") == "off" and "bounds" in row and row["link_gbps"]:
        text += "  pipelined at best: exposed >= %.0f%%, x%.2f" % (
            100 * row["bounds"]["pipelined_exposed_share_min"], row["bounds"]["pipelined_speedup_max"])
    if row.get("note"):
        text += "  [%s]" % row["note"]
    print(text, flush=True)


def parse_list(text, conv, what):
    try:
        items = [conv(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("%s: not a comma-separated list: '%s'" % (what, text))
    if not items:
        raise argparse.ArgumentTypeError("%s: empty" % what)
    return items


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="dlrm,many")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--links", default="25,100,400")
    ap.add_argument("--scale", default="100")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--batch-per-rank", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--pipeline-depth", default="3")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--work", default=os.path.join(REPO, "build", "bench_overlap_netns"))
    ap.add_argument("--json")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "release", "bin"))
    ap.add_argument("--nice", type=int, default=0)
    ap.add_argument("--mtu", type=int, default=9000)
    ap.add_argument("--fail-rank", type=int)
    ap.add_argument("--fail-after", type=float, default=1.0)
    args = ap.parse_args(argv)
    try:
        args.models = parse_list(args.models, str, "--models")
        args.ranks = parse_list(args.ranks, int, "--ranks")
        args.links = parse_list(args.links, float, "--links")
        args.modes = parse_list(args.modes, str, "--modes")
        args.pipeline_depth = parse_list(args.pipeline_depth, int, "--pipeline-depth")
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    for m in args.models:
        if m not in ("dlrm", "many", "wide"):
            ap.error("--models: unknown model '%s' (dlrm, many, wide)" % m)
    for m in args.modes:
        if m not in MODES:
            ap.error("--modes: unknown mode '%s' (%s)" % (m, ", ".join(MODES)))
    if "off" not in args.modes:
        ap.error("--modes must include off (the reference every other mode's outputs are checked against)")
    if args.modes[0] != "off":
        args.modes = ["off"] + [m for m in args.modes if m != "off"]
    for w in args.ranks:
        if w < 2 or w > 16:
            ap.error("--ranks: %d is not between 2 and 16" % w)
    for g in args.links:
        if g < 0 or g > 100000:
            ap.error("--links: %g Gb/s is not between 0 (no limit) and 100000" % g)
    if args.scale != "auto":
        try:
            args.scale = float(args.scale)
        except ValueError:
            ap.error("--scale must be auto or a number > 0, not '%s'" % args.scale)
        if not (args.scale > 0):
            ap.error("--scale must be auto or a number > 0, not '%s'" % args.scale)
    if min(args.pipeline_depth) < 2:
        ap.error("--pipeline-depth must be >= 2 (depth 1 is mode streams)")
    if len(set(args.pipeline_depth)) != len(args.pipeline_depth):
        ap.error("--pipeline-depth: a depth given twice")
    if args.batch_per_rank < 1 or args.repeat < 1 or args.rounds < 1 or args.warmup < 0 or args.threads < 0:
        ap.error("--batch-per-rank, --repeat and --rounds must be >= 1, --warmup and --threads >= 0")
    if not -20 <= args.nice <= 19:
        ap.error("--nice must be between -20 and 19")
    if not 1280 <= args.mtu <= 65000:
        ap.error("--mtu must be between 1280 and 65000")
    if not (args.timeout > 0):
        ap.error("--timeout must be > 0")
    if args.fail_rank is not None and not 0 <= args.fail_rank < min(args.ranks):
        ap.error("--fail-rank %d is not a rank of every world" % args.fail_rank)
    for tool in ("ember-run", "ember-compile"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            ap.error("no %s in --bin %s" % (tool, args.bin))
    return args


def main(argv):
    args = parse_args(argv)
    why = netns_hosts.cannot_make_namespaces()
    if why:
        print("SKIP: network namespaces cannot be made here: %s" % why)
        return netns_hosts.SKIP
    netns_hosts.install_signal_cleanup()
    stale = netns_hosts.remove_stale(TAG)
    if stale:
        print("removed namespaces left by a killed run: %s" % ", ".join(stale))
    os.makedirs(args.work, exist_ok=True)
    features = run_features(args)
    started = time.time()
    load = os.getloadavg()
    print("overlap_netns: %s, %d cores, load %.2f %.2f %.2f, %s, MTU %d; ember-run: %s" % (
        platform.node(), os.cpu_count(), load[0], load[1], load[2],
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), args.mtu,
        ", ".join("%s %s" % (k, "yes" if v else "no") for k, v in sorted(features.items()))), flush=True)
    results = []
    try:
        batch = args.batch_per_rank * max(args.ranks)
        model_dirs = {}
        for m in args.models:
            model_dirs[m] = build_dlrm(args.work, batch) if m == "dlrm" else build_many(args.work, batch, m)
        for world in args.ranks:
            bench_world(args, features, model_dirs, world, results)
    except BenchError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: namespaces and ranks removed", file=sys.stderr)
        return 130
    if args.json:
        doc = {"command": " ".join([os.path.basename(sys.argv[0])] + list(argv)),
               "host": platform.node(), "cores": os.cpu_count(),
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
               "load_start": load, "load_end": os.getloadavg(), "scale": args.scale, "mtu": args.mtu,
               "features": features, "results": results}
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.json)
    load_end = os.getloadavg()
    print("done in %.0f s; load at the end %.2f %.2f %.2f" % (time.time() - started, *load_end))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
