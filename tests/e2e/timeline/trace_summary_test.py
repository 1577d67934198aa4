"""scripts/ember-trace-summary.py on hand-made traces with known figures, and on
malformed ones (each a clear error naming the event, exit status 1).

usage: trace_summary_test.py   (stdlib only; run by ctest e2e.timeline.summary)

Inputs/measured_tiny.json (two streams) and Inputs/predicted_tiny.json (program order)
are 2-rank traces whose figures were computed by hand (their otherData.note):
  measured   rank 0: compute 50, comm 40, exposed 25, step 75
             rank 1: compute 50, comm 40, exposed 28, step 78
  predicted  rank 0: compute 50, comm 40, exposed 40, step 90
             rank 1: compute 48, comm 40, exposed 40, step 88
"""
import copy
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "scripts", "ember-trace-summary.py")
MEASURED = os.path.join(HERE, "Inputs", "measured_tiny.json")
PREDICTED = os.path.join(HERE, "Inputs", "predicted_tiny.json")

spec = importlib.util.spec_from_file_location("trace_summary", SCRIPT)
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True,
                          text=True)


def load(path):
    with open(path) as f:
        return json.load(f)


def figures(rows):
    return [(r["compute_us"], r["comm_us"], r["exposed_comm_us"], r["step_us"])
            for r in rows]


class KnownFigures(unittest.TestCase):
    def test_measured(self):
        out = run(MEASURED, "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        data = json.loads(out.stdout)
        self.assertEqual(data["kind"], "measured")
        self.assertEqual(figures(data["ranks"]),
                         [(50, 40, 25, 75), (50, 40, 28, 78)])

    def test_predicted(self):
        out = run(PREDICTED, "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(figures(json.loads(out.stdout)["ranks"]),
                         [(50, 40, 40, 90), (48, 40, 40, 88)])

    def test_text(self):
        out = run(MEASURED)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("measured trace, 2 rank(s)", out.stdout)
        self.assertRegex(out.stdout, r"\n1 +50\.000 +40\.000 +28\.000 +78\.000\n")

    def test_side_by_side(self):
        out = run(PREDICTED, MEASURED, "--json", "--top", "2")
        self.assertEqual(out.returncode, 0, out.stderr)
        data = json.loads(out.stdout)
        self.assertEqual(data["kinds"], ["predicted", "measured"])
        rank1 = data["ranks"][1]
        self.assertEqual(rank1["step_us"][:2], [88, 78])
        self.assertAlmostEqual(rank1["step_us"][2], 78 / 88)
        self.assertEqual(rank1["exposed_comm_us"][:2], [40, 28])
        # Rank 1's lookup took 5 us longer than predicted, its linear 3 us less.
        top = [(d["rank"], d["kernel"], d["difference_us"]) for d in data["differences"]]
        self.assertEqual(top, [(1, "grouped_embedding_bag", 5.0), (1, "linear", -3.0)])
        text = run(PREDICTED, MEASURED, "--top", "1")
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("rank 1 #3 grouped_embedding_bag bags: 20.000 -> 25.000", text.stdout)

    def test_batches(self):
        # The measured trace twice, batch 1 100 us after batch 0: totals double,
        # the per-batch figures are batch 0's, the comparison is per batch.
        trace = load(MEASURED)
        second = []
        for e in trace["traceEvents"]:
            if e["ph"] == "M":
                continue
            e = copy.deepcopy(e)
            e["ts"] += 100
            if e["ph"] == "X":
                e["args"]["batch"] = 1
            else:
                e["id"] += 1000000
            second.append(e)
        trace["traceEvents"] += second
        other, slices, _ = summary.validate(trace)
        rows = summary.summarize(other, slices)
        self.assertEqual(figures(rows), [(100, 80, 50, 175), (100, 80, 56, 178)])
        self.assertEqual([r["batches"] for r in rows], [2, 2])
        self.assertEqual([tuple(r["per_batch"][k] for k in ("compute_us", "comm_us",
                                                             "exposed_comm_us", "step_us"))
                          for r in rows], [(50, 40, 25, 75), (50, 40, 28, 78)])
        per_rank, differences, _ = summary.compare(
            summary.validate(load(PREDICTED))[:2], (other, slices), 1)
        self.assertEqual(per_rank[1]["step_us"][:2], [88, 78])
        self.assertEqual(per_rank[1]["batches"], [1, 2])
        self.assertEqual((differences[0]["kernel"], differences[0]["second_us"]),
                         ("grouped_embedding_bag", 25))

    def test_overlapping_exposed_slices_count_once(self):
        trace = load(MEASURED)
        # A second wait over the same interval adds no exposed time.
        extra = copy.deepcopy([e for e in trace["traceEvents"]
                               if e.get("cat") == "wait" and e["pid"] == 0][0])
        trace["traceEvents"].append(extra)
        other, slices, _ = summary.validate(trace)
        self.assertEqual(summary.summarize(other, slices)[0]["exposed_comm_us"], 25)

    def test_collectives_of_two_threads_count_once(self):
        trace = load(MEASURED)
        # A pipelined run's collective thread (tid 2) in a collective during
        # rank 0's first collective: comm counts the time with one in flight.
        first = sorted((e for e in trace["traceEvents"]
                        if e.get("cat") == "collective" and e["pid"] == 0),
                       key=lambda e: e["ts"])[0]
        extra = copy.deepcopy(first)
        extra["tid"] = 2
        extra["ts"] = first["ts"] + first["dur"] / 2
        trace["traceEvents"].append(extra)
        trace["traceEvents"].append({"ph": "M", "name": "thread_name", "pid": 0, "tid": 2,
                                     "args": {"name": "stream 1 (output collectives, "
                                                      "pipelined)"}})
        other, slices, _ = summary.validate(trace)
        row = summary.summarize(other, slices)[0]
        self.assertEqual(row["comm_us"], 40 + first["dur"] / 2)
        self.assertEqual(row["exposed_comm_us"], 25)


class Malformed(unittest.TestCase):
    def setUp(self):
        self.trace = load(MEASURED)
        self.events = self.trace["traceEvents"]
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def index(self, **match):
        for i, e in enumerate(self.events):
            if all(e.get(k) == v for k, v in match.items()):
                return i
        raise AssertionError("no event %r" % match)

    def fails(self, *expected):
        path = os.path.join(self.tmp.name, "bad.json")
        with open(path, "w") as f:
            json.dump(self.trace, f)
        out = run(path)
        self.assertEqual(out.returncode, 1, out.stdout)
        self.assertEqual(out.stdout, "")
        for text in expected:
            self.assertIn(text, out.stderr)
        return out.stderr

    def test_missing_dur(self):
        i = self.index(ph="X", name="linear", pid=0)
        del self.events[i]["dur"]
        self.fails("event %d (ph 'X', name 'linear'): 'dur' is missing" % i)

    def test_missing_ts(self):
        i = self.index(ph="X", name="concat", pid=1)
        del self.events[i]["ts"]
        self.fails("event %d (ph 'X', name 'concat'): 'ts' is missing" % i)

    def test_missing_instruction(self):
        i = self.index(ph="X", name="linear", pid=1)
        del self.events[i]["args"]["instruction"]
        self.fails("event %d" % i, "args.instruction")

    def test_missing_bytes(self):
        i = self.index(ph="X", name="kjt_all_to_all", pid=0)
        del self.events[i]["args"]["bytes"]
        self.fails("event %d" % i, "args.bytes")

    def test_missing_kind(self):
        del self.trace["otherData"]["kind"]
        self.fails("otherData.kind")

    def test_missing_trace_events(self):
        del self.trace["traceEvents"]
        self.fails("'traceEvents' is missing")

    def test_negative_dur(self):
        i = self.index(ph="X", name="grouped_embedding_bag", pid=1)
        self.events[i]["dur"] = -1
        self.fails("event %d (ph 'X', name 'grouped_embedding_bag'): negative dur" % i)

    def test_unknown_ph(self):
        i = self.index(ph="X", name="linear", pid=0)
        self.events[i]["ph"] = "B"
        self.fails("event %d (ph 'B', name 'linear'): unknown ph 'B'" % i)

    def test_unknown_cat(self):
        i = self.index(ph="X", name="linear", pid=0)
        self.events[i]["cat"] = "gpu"
        self.fails("event %d" % i, "unknown cat 'gpu'")

    def test_pid_beyond_ranks(self):
        i = self.index(ph="X", name="linear", pid=1)
        self.events[i]["pid"] = 2
        self.fails("event %d" % i, "pid 2 is not a rank of 2")

    def test_flow_without_end(self):
        i = self.index(ph="f", id=1)
        del self.events[i]
        self.fails("flow id 1 has 1 start(s) ('s') and 0 end(s) ('f')")

    def test_flow_ids_unmatched(self):
        i = self.index(ph="f", id=1)
        self.events[i]["id"] = 7
        err = self.fails("flow id 1 has 1 start(s)")
        self.assertIn("event", err)

    def test_flow_outside_its_collective(self):
        i = self.index(ph="s", id=0)
        self.events[i]["ts"] = 5
        self.fails("event %d" % i, "flow id 0 at ts 5 is inside no collective slice")

    def test_flow_end_without_binding_point(self):
        i = self.index(ph="f", id=0)
        del self.events[i]["bp"]
        self.fails("event %d" % i, "\"bp\": \"e\"")

    def test_track_without_thread_name(self):
        i = self.index(ph="M", name="thread_name", pid=1, tid=1)
        del self.events[i]
        self.fails("track pid 1 tid 1 has no thread_name metadata")

    def test_wait_named_otherwise(self):
        i = self.index(ph="X", cat="wait", pid=0)
        self.events[i]["name"] = "blocked"
        self.fails("event %d" % i, "'wait <kernel>'")

    def test_not_json(self):
        path = os.path.join(self.tmp.name, "bad.json")
        with open(path, "w") as f:
            f.write("{\"traceEvents\": [")
        out = run(path)
        self.assertEqual(out.returncode, 1)
        self.assertIn("not JSON", out.stderr)

    def test_missing_file(self):
        out = run(os.path.join(self.tmp.name, "absent.json"))
        self.assertEqual(out.returncode, 1)
        self.assertIn("cannot read", out.stderr)

    def test_rank_counts_differ(self):
        path = os.path.join(self.tmp.name, "one.json")
        one = {"traceEvents": [], "otherData": {"ember_trace": 1, "kind": "measured",
                                                "ranks": 1}}
        with open(path, "w") as f:
            json.dump(one, f)
        out = run(MEASURED, path)
        self.assertEqual(out.returncode, 1)
        self.assertIn("the traces have 2 and 1 ranks", out.stderr)


if __name__ == "__main__":
    unittest.main()
