"""bench/planner_vs_torchrec.py: its yardstick against hand-computed bytes, TorchRec's own
estimators applied to a plan (the adapter that lets them score Ember's plans) against
TorchRec's planner's rating of its own plan, and the TorchRec plan cache with bad input.

Optional: skipped unless TorchRec is importable (the venv of scripts/setup-torchrec-venv.sh).
"""

import json
import os
import subprocess
import sys

import pytest

torchrec = pytest.importorskip("torchrec")
pytestmark = pytest.mark.torchrec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import planner_vs_torchrec as bench  # noqa: E402


def tw(rank, rows, dim):
    return {"sharding_type": "table_wise", "compute_kernel": "fused", "ranks": [rank],
            "sharding_spec": {"shards": [{"shard_offsets": [0, 0],
                                          "shard_sizes": [rows, dim],
                                          "placement": f"rank:{rank}/cuda:{rank % 8}"}]}}


def test_yardstick_table_wise_bytes_by_hand():
    # 16 ranks on 2 nodes; one table (dim 8, 2 ids per sample) on rank 3.
    case = {"world": 16, "device": 80e9,
            "tables": [bench.table("t", 1000, 8, [2.0])]}
    y = bench.Yardstick(case, {"t": tw(3, 1000, 8)})
    B = bench.BATCH
    ids = B * (2 * 8 + 4)          # per sender: ids and lengths
    rows = B * 8 * 4               # per receiver: pooled rows
    # rank 3 receives ids from 7 node peers and 8 remote ranks, sends rows to them
    assert y.comm[("in", "recv", "intra")][3] == 7 * ids
    assert y.comm[("in", "recv", "inter")][3] == 8 * ids
    assert y.comm[("out", "sent", "inter")][3] == 8 * rows
    # rank 0 (same node) and rank 12 (other node) send ids and receive rows
    assert y.comm[("in", "sent", "intra")][0] == ids
    assert y.comm[("in", "sent", "inter")][12] == ids
    assert y.comm[("out", "recv", "inter")][12] == rows
    assert y.comm[("out", "recv", "intra")][12] == 0
    assert y.lookup[3] == B * 16 * 2 * 8 * 4
    f = y.figures()
    # the busiest rank's bytes sent or received (the larger): rank 3 sends rows
    assert f["max_a2a_bytes"] == max(15 * ids, 15 * rows) == 15 * rows
    assert f["max_inter_node_bytes"] == 8 * rows


def test_yardstick_replica_all_reduce_by_hand():
    case = {"world": 16, "device": 80e9, "tables": [bench.table("t", 1000, 8, [1.0])]}
    plan = {"t": {"sharding_type": "data_parallel", "compute_kernel": "dense",
                  "ranks": list(range(16)), "sharding_spec": None}}
    y = bench.Yardstick(case, plan)
    size = 1000 * 8 * 4
    expected = 2 * 7 / 8 * size / bench.INTRA_BW + 2 * 1 / 2 * size / 8 / bench.INTER_BW
    assert y.allreduce_s[5] == pytest.approx(expected)
    assert y.figures()["max_a2a_bytes"] == 0


def test_torchrec_estimators_rate_torchrec_plan_as_its_planner_does():
    from torchrec.distributed.planner import EmbeddingShardingPlanner
    from torchrec.distributed.planner.perf_models import NoopPerfModel

    from ember.torchrec_plan import plan_to_json

    case = {"world": 8, "device": bench.DEVICE_BYTES,
            "tables": [bench.table(f"t{i}", 10 ** (3 + i % 5), 32 * (1 + i % 4), [1.0 + i])
                       for i in range(12)]}
    model, sharders, topology, constraints = bench.torchrec_setup(case)
    planner = EmbeddingShardingPlanner(topology=topology, batch_size=bench.BATCH,
                                       constraints=constraints)
    plan = plan_to_json(planner.plan(model, sharders))
    own_rating = NoopPerfModel(topology).rate(planner.get_selected_options()) * 1e6
    perf_us, hbm = bench.TorchRecEstimator(case).score(case, plan)
    assert perf_us == pytest.approx(own_rating, rel=1e-9)
    assert hbm > 0


def test_torchrec_estimators_say_what_they_cannot_take():
    case = {"world": 8, "device": bench.DEVICE_BYTES,
            "tables": [bench.table("t0", 1000, 32, [1.0])]}
    plan = {"t0": dict(tw(0, 1000, 32), compute_kernel="no_such_kernel")}
    why = bench.TorchRecEstimator(case).score(case, plan)
    assert isinstance(why, str) and "no table_wise / no_such_kernel option for t0" in why


def run_script(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "bench", "planner_vs_torchrec.py"),
                           *args], capture_output=True, text=True)


def test_torchrec_plan_cache_is_reused(tmp_path):
    case = bench.make_cases()["criteo-8"]
    plan = {"ebc": {t["name"]: tw(0, t["rows"], t["dim"]) for t in case["tables"]}}
    (tmp_path / "criteo-8.json").write_text(json.dumps(
        {"plan": plan, "seconds": 123.0, "error": None}))
    got = bench.cached_torchrec_plan("criteo-8", case, str(tmp_path))
    assert got == (plan, 123.0, None)


def test_bad_cache_and_arguments_are_errors(tmp_path):
    (tmp_path / "criteo-8.json").write_text("{not json")
    with pytest.raises(SystemExit, match="not a TorchRec plan written by --torchrec-plans"):
        bench.cached_torchrec_plan("criteo-8", bench.make_cases()["criteo-8"], str(tmp_path))
    proc = run_script(str(tmp_path), "--torchrec-only")
    assert proc.returncode == 2 and "--torchrec-only needs --torchrec-plans DIR" in proc.stderr
    proc = run_script(str(tmp_path), "--cases", "criteo-9")
    assert proc.returncode == 2 and "unknown case(s) criteo-9" in proc.stderr
    for bad, why in (("0", "--torchrec-timeout must be positive, got 0.0"),
                     ("-5", "--torchrec-timeout must be positive, got -5.0"),
                     ("nan", "--torchrec-timeout must be positive, got nan"),
                     ("soon", "argument --torchrec-timeout: invalid float value")):
        proc = run_script(str(tmp_path), "--torchrec-timeout", bad)
        assert proc.returncode == 2 and why in proc.stderr, (bad, proc.stderr)
    assert not (tmp_path / "criteo-8.json.partial").exists()


def test_torchrec_timeout_reaches_the_planner_and_the_cache(tmp_path, monkeypatch):
    case = bench.make_cases()["criteo-8"]
    plan = {"ebc": {t["name"]: tw(0, t["rows"], t["dim"]) for t in case["tables"]}}
    seen = []
    monkeypatch.setattr(bench, "torchrec_plan",
                        lambda c, timeout=None: seen.append(timeout) or (plan, 7.0, None))
    got = bench.cached_torchrec_plan("criteo-8", case, str(tmp_path), 30.0)
    assert got == (plan, 7.0, None) and seen == [30.0]
    saved = json.loads((tmp_path / "criteo-8.json").read_text())
    assert saved["timeout_seconds"] == 30.0
    # The cache is read back as it was, timeout or not.
    assert bench.cached_torchrec_plan("criteo-8", case, str(tmp_path)) == (plan, 7.0, None)
    assert seen == [30.0]


@pytest.mark.parametrize("content, why", [
    ("{not json", "JSONDecodeError"),
    ("", "JSONDecodeError"),
    ("[]", "TypeError"),
    ('{"plan": {}, "seconds": 1.0}', "KeyError: 'error'"),
    ('{"plan": null, "seconds": 1.0, "error": null}', "no plan and no error"),
    ('{"plan": {}, "seconds": "fast", "error": null}', "'seconds' must be a non-negative"),
    ('{"plan": [], "seconds": 1.0, "error": null}', "'plan' must be an object"),
    ('{"plan": {}, "seconds": 1.0, "error": null}', "table 'criteo_0' has no sharding"),
])
def test_corrupt_cached_plan_is_refused(tmp_path, content, why):
    (tmp_path / "criteo-8.json").write_text(content)
    with pytest.raises(SystemExit) as raised:
        bench.cached_torchrec_plan("criteo-8", bench.make_cases()["criteo-8"], str(tmp_path))
    message = str(raised.value)
    assert "criteo-8.json: not a TorchRec plan written by --torchrec-plans" in message
    assert why in message and "delete it to plan again" in message


def test_cached_plan_with_bad_shards_is_refused(tmp_path):
    case = bench.make_cases()["criteo-8"]
    good = {t["name"]: tw(0, t["rows"], t["dim"]) for t in case["tables"]}
    for table, entry, why in [
            ("criteo_3", dict(tw(9, 7420, 128)), "rank 9 is outside the world of 8"),
            ("criteo_3", {"sharding_type": "table_wise", "compute_kernel": "fused",
                          "sharding_spec": {"shards": [{"placement": "cuda:0"}]}},
             "table 'criteo_3': unreadable shards"),
            ("criteo_3", {"sharding_type": 5, "compute_kernel": "fused"},
             "sharding_type and compute_kernel must be strings")]:
        plan = dict(good, **{table: entry})
        (tmp_path / "criteo-8.json").write_text(json.dumps(
            {"plan": plan, "seconds": 1.0, "error": None}))
        with pytest.raises(SystemExit, match=why):
            bench.cached_torchrec_plan("criteo-8", case, str(tmp_path))


def test_script_refuses_corrupt_cache_and_writes_nothing(tmp_path):
    bin_dir = os.path.dirname(os.environ.get("EMBER_COMPILE", os.path.join(
        ROOT, "build", "release", "bin", "ember-compile")))
    if not os.access(os.path.join(bin_dir, "ember-opt"), os.X_OK):
        pytest.skip("no ember-opt next to EMBER_COMPILE")
    cache = tmp_path / "plans"
    cache.mkdir()
    (cache / "criteo-8.json").write_text('{"plan": {"ebc": {}}, "seconds": 1.0, "error": null}')
    out = tmp_path / "table.json"
    proc = run_script(bin_dir, "--cases", "criteo-8", "--torchrec-plans", str(cache),
                      "--work", str(tmp_path / "work"), "--json", str(out))
    assert proc.returncode == 1
    assert "criteo-8.json: not a TorchRec plan written by --torchrec-plans" in proc.stderr
    assert "table 'criteo_0' has no sharding" in proc.stderr
    assert not out.exists()
    # the cache is left as it was (the user decides to delete it)
    assert json.loads((cache / "criteo-8.json").read_text())["plan"] == {"ebc": {}}


def test_hbm_cap_rows_use_no_more_hbm_than_torchrec(tmp_path):
    # criteo-8 with TorchRec's plan from the unit test's fixture: --hbm-cap adds Ember's
    # training, training-lean and inference plans with each rank's embeddings capped at the
    # HBM of TorchRec's fullest rank; the yardstick's HBM of each is at most TorchRec's.
    bin_dir = os.path.dirname(os.environ.get("EMBER_COMPILE", os.path.join(
        ROOT, "build", "release", "bin", "ember-compile")))
    if not os.access(os.path.join(bin_dir, "ember-opt"), os.X_OK):
        pytest.skip("no ember-opt next to EMBER_COMPILE")
    fixture = os.path.join(ROOT, "tests", "unit", "sharding", "Inputs", "torchrec_criteo_8.json")
    with open(fixture) as f:
        plan = json.load(f)["torchrec_plan"]
    cache = tmp_path / "plans"
    cache.mkdir()
    (cache / "criteo-8.json").write_text(json.dumps({"plan": plan, "seconds": 1.0,
                                                     "error": None}))
    out = tmp_path / "table.json"
    proc = run_script(bin_dir, "--cases", "criteo-8", "--torchrec-plans", str(cache),
                      "--work", str(tmp_path / "work"), "--json", str(out), "--hbm-cap")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["planner"]: r for r in json.loads(out.read_text())}
    assert set(rows) == {"torchrec", "ember training+torchrec-mem",
                         "ember training-lean+torchrec-mem",
                         "ember inference+torchrec-mem",
                         "ember training+torchrec-mem+hbm-cap",
                         "ember training-lean+torchrec-mem+hbm-cap",
                         "ember inference+torchrec-mem+hbm-cap"}
    for label in ("ember training+torchrec-mem+hbm-cap",
                  "ember training-lean+torchrec-mem+hbm-cap",
                  "ember inference+torchrec-mem+hbm-cap"):
        assert rows[label]["error"] is None
        assert rows[label]["max_hbm_fraction"] <= rows["torchrec"]["max_hbm_fraction"]
    capped = json.loads((tmp_path / "work" / "criteo-8" / "topology-capped.json").read_text())
    assert capped["embedding_memory_cap_gb"] == pytest.approx(
        rows["torchrec"]["max_hbm_fraction"] * bench.DEVICE_BYTES / bench.GB)
