#!/usr/bin/env python3
"""Per-rank compute / comm / exposed comm / step of an Ember trace.

    ember-trace-summary.py TRACE.json [OTHER.json] [--json] [--top N]

Reads a trace of either kind, measured (`ember-run --trace`) or predicted
(`ember-compile --emit timeline`), checks it against the trace format
(docs/trace-format.md) and prints per rank:

    compute      sum of the `compute` slices' durations
    comm         time with a `collective` slice in flight on any track (the
                 union: a pipelined run's two communication threads overlap)
    exposed      time on track tid 0 covered by `collective` or `wait` slices
    step         last end minus first start

A trace of several batches (args.batch: ember-run's timed runs, or
pipelined batches) also gets the figures per batch (means). With two traces
(say predicted, then measured) it lays them side by side, per batch: per
rank the figures of each and the ratio second / first, then the instructions
whose durations differ most. `--json` prints the same as one
JSON object. A malformed trace is an error naming the file and the event
(exit status 1). Standard library only.
"""

import argparse
import json
import math
import sys

KINDS = ("measured", "predicted")
CATEGORIES = ("compute", "collective", "wait")
FLOW_PHASES = ("s", "t", "f")


class TraceError(Exception):
    pass


def _is_number(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _describe(index, event):
    ph = event.get("ph") if isinstance(event, dict) else None
    name = event.get("name") if isinstance(event, dict) else None
    text = "event %d" % index
    if isinstance(ph, str):
        text += " (ph '%s'" % ph
        if isinstance(name, str):
            text += ", name '%s'" % name
        text += ")"
    return text


def load_trace(path):
    """The trace at `path`, validated: (otherData, slices, flows)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise TraceError("%s: cannot read: %s" % (path, e.strerror or e))
    except (ValueError, UnicodeDecodeError) as e:
        raise TraceError("%s: not JSON: %s" % (path, e))
    return validate(data, path)


def validate(data, path="<trace>"):
    def fail(message):
        raise TraceError("%s: %s" % (path, message))

    if not isinstance(data, dict):
        fail("the trace must be a JSON object with 'traceEvents'")
    events = data.get("traceEvents")
    if not isinstance(events, list):
        fail("'traceEvents' is missing or not a list")
    other = data.get("otherData")
    if not isinstance(other, dict):
        fail("'otherData' is missing or not an object")
    if other.get("ember_trace") != 1:
        fail("otherData.ember_trace must be 1 (got %r)"
             % (other.get("ember_trace"),))
    if other.get("kind") not in KINDS:
        fail("otherData.kind must be 'measured' or 'predicted' (got %r)"
             % (other.get("kind"),))
    ranks = other.get("ranks")
    if not _is_int(ranks) or ranks < 1:
        fail("otherData.ranks must be a positive integer (got %r)" % (ranks,))

    processes, threads = set(), set()
    slices, flows = [], []
    for index, event in enumerate(events):
        where = _describe(index, event)

        def bad(message):
            fail("%s: %s" % (where, message))

        if not isinstance(event, dict):
            bad("not an object")
        ph = event.get("ph")
        if not isinstance(ph, str):
            bad("'ph' is missing")
        if ph not in ("M", "X") + FLOW_PHASES:
            bad("unknown ph '%s' (expected M, X, s, t or f)" % ph)
        for key in ("pid", "name"):
            if key not in event:
                bad("'%s' is missing" % key)
        pid = event["pid"]
        if not _is_int(pid) or pid < 0 or pid >= ranks:
            bad("pid %r is not a rank of %d" % (pid, ranks))
        if not isinstance(event["name"], str):
            bad("'name' must be a string")
        if ph == "M":
            args = event.get("args")
            if not isinstance(args, dict) or not isinstance(args.get("name"),
                                                            str):
                bad("metadata needs args.name")
            if event["name"] == "process_name":
                processes.add(pid)
            elif event["name"] == "thread_name":
                if not _is_int(event.get("tid")):
                    bad("thread_name needs an integer 'tid'")
                threads.add((pid, event["tid"]))
            continue
        for key in ("tid", "ts", "cat"):
            if key not in event:
                bad("'%s' is missing" % key)
        if not _is_int(event["tid"]) or event["tid"] < 0:
            bad("'tid' must be a non-negative integer")
        if not _is_number(event["ts"]):
            bad("'ts' must be a finite number")
        if ph == "X":
            if "dur" not in event:
                bad("'dur' is missing")
            if not _is_number(event["dur"]):
                bad("'dur' must be a finite number")
            if event["dur"] < 0:
                bad("negative dur (%r)" % event["dur"])
            cat = event["cat"]
            if cat not in CATEGORIES:
                bad("unknown cat %r (expected compute, collective or wait)"
                    % (cat,))
            args = event.get("args")
            if not isinstance(args, dict):
                bad("'args' is missing")
            if not _is_int(args.get("instruction")):
                bad("args.instruction is missing or not an integer")
            if cat != "wait":
                if not _is_number(args.get("bytes")) or args["bytes"] < 0:
                    bad("args.bytes is missing or negative")
                if not isinstance(args.get("location"), str):
                    bad("args.location is missing")
            elif not event["name"].startswith("wait "):
                bad("a wait slice's name must be 'wait <kernel>'")
            batch = args.get("batch", 0)
            if not _is_int(batch) or batch < 0:
                bad("args.batch must be a non-negative integer")
            slices.append({
                "index": index, "rank": pid, "tid": event["tid"],
                "start": float(event["ts"]),
                "end": float(event["ts"]) + float(event["dur"]),
                "dur": float(event["dur"]), "cat": cat,
                "name": event["name"], "instruction": args["instruction"],
                "batch": batch, "location": args.get("location", ""),
            })
        else:
            if event["cat"] != "collective":
                bad("a flow event's cat must be 'collective'")
            if not _is_int(event.get("id")):
                bad("'id' is missing or not an integer")
            if ph == "f" and event.get("bp") != "e":
                bad("a flow's end needs \"bp\": \"e\"")
            flows.append({"index": index, "ph": ph, "id": event["id"],
                          "rank": pid, "tid": event["tid"],
                          "ts": float(event["ts"]), "name": event["name"]})

    for s in slices:
        if s["rank"] not in processes:
            fail("%s: rank %d has no process_name metadata"
                 % (_describe(s["index"], events[s["index"]]), s["rank"]))
        if (s["rank"], s["tid"]) not in threads:
            fail("%s: track pid %d tid %d has no thread_name metadata"
                 % (_describe(s["index"], events[s["index"]]), s["rank"],
                    s["tid"]))
    _check_flows(flows, slices, events, fail)
    return other, slices, flows


def _check_flows(flows, slices, events, fail):
    """One chain per id: one s, one f, and each inside a collective slice
    of its own track."""
    chains = {}
    for flow in flows:
        chains.setdefault(flow["id"], []).append(flow)
    collectives = {}
    for s in slices:
        if s["cat"] == "collective":
            collectives.setdefault((s["rank"], s["tid"]), []).append(s)
    for chain_id, chain in sorted(chains.items()):
        starts = [f for f in chain if f["ph"] == "s"]
        ends = [f for f in chain if f["ph"] == "f"]
        if len(starts) != 1 or len(ends) != 1:
            first = chain[0]
            fail("%s: flow id %d has %d start(s) ('s') and %d end(s) ('f'); "
                 "a chain needs exactly one of each"
                 % (_describe(first["index"], events[first["index"]]),
                    chain_id, len(starts), len(ends)))
        for flow in chain:
            track = collectives.get((flow["rank"], flow["tid"]), [])
            slack = 1e-3  # us: rounding of ts in the writer
            if not any(s["start"] - slack <= flow["ts"] <= s["end"] + slack
                       for s in track):
                fail("%s: flow id %d at ts %g is inside no collective slice "
                     "of pid %d tid %d"
                     % (_describe(flow["index"], events[flow["index"]]),
                        chain_id, flow["ts"], flow["rank"], flow["tid"]))


def _union_length(intervals):
    total, end = 0.0, -math.inf
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def _figures(mine):
    """compute, comm, exposed comm and span of a set of slices (us)."""
    row = {"compute_us": 0.0, "comm_us": 0.0, "exposed_comm_us": 0.0,
           "step_us": 0.0}
    if mine:
        row["compute_us"] = sum(s["dur"] for s in mine if s["cat"] == "compute")
        row["comm_us"] = _union_length(
            [(s["start"], s["end"]) for s in mine if s["cat"] == "collective"])
        row["exposed_comm_us"] = _union_length(
            [(s["start"], s["end"]) for s in mine
             if s["tid"] == 0 and s["cat"] in ("collective", "wait")])
        row["step_us"] = (max(s["end"] for s in mine)
                          - min(s["start"] for s in mine))
    return row


def summarize(other, slices):
    """Per rank: compute, comm, exposed comm and step (us) over the whole
    trace, the number of batches (args.batch: runs or pipelined batches) and
    the same figures per batch (means; a batch's step is its span)."""
    ranks = []
    for rank in range(other["ranks"]):
        mine = [s for s in slices if s["rank"] == rank]
        row = {"rank": rank}
        row.update(_figures(mine))
        row["slices"] = len(mine)
        batches = sorted({s["batch"] for s in mine}) or [0]
        row["batches"] = len(batches)
        per = [_figures([s for s in mine if s["batch"] == b]) for b in batches]
        row["per_batch"] = {key: sum(f[key] for f in per) / len(per)
                            for key in per[0]}
        ranks.append(row)
    return ranks


def instruction_times(slices):
    """(rank, kernel, location, n) -> [instruction, mean dur per batch]
    for the n-th instruction of that kernel and location on that rank: the
    same instruction in two traces of one plan, and still the same one when
    the other plan ran in another order (the communication stream reorders
    the program)."""
    seen, out = {}, {}
    for s in sorted(slices, key=lambda s: (s["rank"], s["instruction"])):
        if s["cat"] == "wait":
            continue
        base = (s["rank"], s["name"], s["location"])
        numbers = seen.setdefault(base, {})
        n = numbers.setdefault(s["instruction"], len(numbers))
        entry = out.setdefault(base + (n,), [s["instruction"], 0.0, set()])
        entry[1] += s["dur"]
        entry[2].add(s["batch"])
    # The mean over the batches it ran in.
    return {key: [i, total / len(batches)]
            for key, (i, total, batches) in out.items()}


def _ratio(a, b):
    return b / a if a > 0 else None


def compare(first, second, top):
    (other_a, slices_a), (other_b, slices_b) = first, second
    if other_a["ranks"] != other_b["ranks"]:
        raise TraceError("the traces have %d and %d ranks"
                         % (other_a["ranks"], other_b["ranks"]))
    rows_a, rows_b = summarize(other_a, slices_a), summarize(other_b, slices_b)
    per_rank = []
    for a, b in zip(rows_a, rows_b):
        entry = {"rank": a["rank"], "batches": [a["batches"], b["batches"]]}
        pa, pb = a["per_batch"], b["per_batch"]
        for key in ("compute_us", "comm_us", "exposed_comm_us", "step_us"):
            entry[key] = [pa[key], pb[key], _ratio(pa[key], pb[key])]
        per_rank.append(entry)
    times_a, times_b = instruction_times(slices_a), instruction_times(slices_b)
    differences = []
    for key in sorted(set(times_a) & set(times_b)):
        ia, da = times_a[key]
        ib, db = times_b[key]
        differences.append({
            "rank": key[0], "instruction": ia, "second_instruction": ib,
            "kernel": key[1], "location": key[2], "first_us": da,
            "second_us": db, "difference_us": db - da,
            "ratio": _ratio(da, db),
        })
    differences.sort(key=lambda d: -abs(d["difference_us"]))
    only = {"first": len(set(times_a) - set(times_b)),
            "second": len(set(times_b) - set(times_a))}
    return per_rank, differences[:top], only


def _fmt(value):
    return "-" if value is None else "%.3f" % value


def print_summary(path, other, rows, out):
    out.write("%s: %s trace, %d rank(s)\n" % (path, other["kind"],
                                              other["ranks"]))
    out.write("%-6s %14s %14s %14s %14s\n"
              % ("rank", "compute us", "comm us", "exposed us", "step us"))
    for row in rows:
        out.write("%-6d %14.3f %14.3f %14.3f %14.3f\n"
                  % (row["rank"], row["compute_us"], row["comm_us"],
                     row["exposed_comm_us"], row["step_us"]))
    if any(row["batches"] > 1 for row in rows):
        out.write("per batch (mean over the batches; a batch's step is its "
                  "span):\n")
        for row in rows:
            p = row["per_batch"]
            out.write("%-6d %14.3f %14.3f %14.3f %14.3f  (%d batches)\n"
                      % (row["rank"], p["compute_us"], p["comm_us"],
                         p["exposed_comm_us"], p["step_us"], row["batches"]))


def print_comparison(paths, kinds, per_rank, differences, only, out):
    out.write("first:  %s (%s)\nsecond: %s (%s)\n"
              % (paths[0], kinds[0], paths[1], kinds[1]))
    out.write("per batch (mean over each trace's batches):\n")
    out.write("%-6s %-10s %14s %14s %10s\n"
              % ("rank", "figure", "first us", "second us", "2nd/1st"))
    for entry in per_rank:
        for key, label in (("compute_us", "compute"), ("comm_us", "comm"),
                           ("exposed_comm_us", "exposed"),
                           ("step_us", "step")):
            a, b, ratio = entry[key]
            out.write("%-6d %-10s %14.3f %14.3f %10s\n"
                      % (entry["rank"], label, a, b, _fmt(ratio)))
    out.write("instructions that differ most (rank, index, kernel, "
              "location: first us -> second us):\n")
    for d in differences:
        out.write("  rank %d #%d %s %s: %.3f -> %.3f (%s)\n"
                  % (d["rank"], d["instruction"], d["kernel"],
                     d["location"] or "-", d["first_us"], d["second_us"],
                     "x" + _fmt(d["ratio"])))
    if only["first"] or only["second"]:
        out.write("instructions in one trace only: %d in the first, %d in "
                  "the second\n" % (only["first"], only["second"]))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Per-rank compute / comm / exposed comm / step of an "
                    "Ember trace (docs/trace-format.md); two traces side by "
                    "side.")
    parser.add_argument("trace")
    parser.add_argument("other", nargs="?",
                        help="a second trace to compare with the first")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object")
    parser.add_argument("--top", type=int, default=10,
                        help="instructions to list that differ most "
                             "(default 10)")
    args = parser.parse_args(argv)
    if args.top < 0:
        parser.error("--top must not be negative")
    try:
        first = load_trace(args.trace)
        if args.other is None:
            rows = summarize(first[0], first[1])
            if args.json:
                json.dump({"trace": args.trace, "kind": first[0]["kind"],
                           "ranks": rows}, sys.stdout, indent=1)
                sys.stdout.write("\n")
            else:
                print_summary(args.trace, first[0], rows, sys.stdout)
            return 0
        second = load_trace(args.other)
        per_rank, differences, only = compare(first[:2], second[:2], args.top)
    except TraceError as e:
        sys.stderr.write("ember-trace-summary: %s\n" % e)
        return 1
    kinds = (first[0]["kind"], second[0]["kind"])
    if args.json:
        json.dump({"traces": [args.trace, args.other], "kinds": list(kinds),
                   "ranks": per_rank, "differences": differences,
                   "only_in_one": only}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_comparison((args.trace, args.other), kinds, per_rank,
                         differences, only, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
