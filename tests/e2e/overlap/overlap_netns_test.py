"""bench/overlap_netns.py on one small configuration: ranks as hosts in network namespaces,
a rate-limited link, every overlap mode this ember-run has.

usage: overlap_netns_test.py CASE BIN_DIR WORKDIR
  pass      the DLRM example on 2 ranks behind a 25 Gb/s link (tbf at 250 Mbit/s): every
            mode that runs gives outputs byte-identical to program order (mode off); the
            JSON report has a row per mode (skipped ones say why); namespaces left by a
            run that was SIGKILLed (a dead pid in the name) are removed first; afterwards
            `ip netns list` and the root namespace's `ip link` are what they were and no
            ember-run is left
  failure   rank 1 killed in the middle of the run (--fail-rank 1): the benchmark exits 1
            naming the failed rank, writes no JSON, and leaves nothing behind
  sigterm   SIGTERM while the ranks run (then SIGINT and SIGHUP in two more runs): exit
            143 / 130 / 129, the namespaces, veths, bridge and ranks gone
  bad_args  bad arguments: exit 2 naming the argument, before anything is made (no root)
  full      the whole benchmark (bench/overlap_netns.py defaults, several minutes): only
            with EMBER_LONG_BENCH=1, otherwise skipped (77)
Exit 0 pass, 1 fail, 77 skipped (not root, or namespaces cannot be made here).
"""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BENCH = os.path.join(REPO, "bench", "overlap_netns.py")
sys.path.insert(0, os.path.join(REPO, "bench"))
import netns_hosts  # noqa: E402

SKIP = 77


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def root_links():
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return sorted(line.split(":")[1].strip() for line in out.splitlines())


def snapshot():
    """The benchmark's namespaces (its tag, embov<pid>...: other tests and sessions make
    their own) and the root namespace's links (the benchmark makes none there)."""
    return sorted(n for n in netns_hosts.namespaces() if n.startswith("embov")), root_links()


def ember_runs_left(bin_dir):
    """ember-run processes the benchmark started (its ranks carry EMBER_COMM_HOST in its
    subnet, 10.78.0.x); other sessions' ember-run processes are not ours to count."""
    run = os.path.realpath(os.path.join(bin_dir, "ember-run"))
    left = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.path.realpath("/proc/%s/exe" % pid) != run:
                    continue
                with open("/proc/%s/environ" % pid, "rb") as f:
                    if b"EMBER_COMM_HOST=10.78.0." in f.read():
                        left.append(int(pid))
            except OSError:
                pass
    return left


def check_clean(before, bin_dir, when):
    after = snapshot()
    if after[0] != before[0]:
        fail("%s: namespaces %s, before %s" % (when, after[0], before[0]))
    if after[1] != before[1]:
        fail("%s: root namespace links %s, before %s" % (when, after[1], before[1]))
    left = ember_runs_left(bin_dir)
    if left:
        fail("%s: ember-run still running: %s" % (when, left))
    print("%s: namespaces and links as before (%d namespaces), no ember-run left"
          % (when, len(after[0])))


def small(bin_dir, work, *extra):
    return [sys.executable, BENCH, "--bin", bin_dir, "--work", work, "--models", "dlrm",
            "--ranks", "2", "--links", "25", "--batch-per-rank", "256", "--warmup", "2", "--rounds", "2",
            "--timeout", "10"] + list(extra)


def run_bench(cmd, limit):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    print(p.stdout + p.stderr)
    return p


def case_pass(bin_dir, work):
    stale = "%s%dr0" % ("embov", 4194302)  # a pid above pid_max's default: never alive
    subprocess.run(["ip", "netns", "add", stale], check=True)
    before = snapshot()
    before = ([n for n in before[0] if n != stale], before[1])
    out = os.path.join(work, "report.json")
    p = run_bench(small(bin_dir, work, "--repeat", "5", "--json", out), 240)
    if p.returncode != 0:
        fail("the benchmark exited %d" % p.returncode)
    if "removed namespaces left by a killed run: " + stale not in p.stdout:
        fail("the stale namespace %s was not reported removed" % stale)
    check_clean(before, bin_dir, "after a pass")
    with open(out) as f:
        doc = json.load(f)
    rows = doc["results"]
    modes = {r["mode"]: r for r in rows if r["link_gbps"] == 25}
    if set(modes) != {"off", "streams", "pipeline"}:
        fail("rows for modes %s at 25 Gb/s" % sorted(modes))
    ran = [r for r in modes.values() if "skipped" not in r]
    if "off" not in [r["mode"] for r in ran] or len(ran) < 2:
        fail("fewer than two modes ran: %s" % [r["mode"] for r in ran])
    for r in ran:
        if not r.get("identical_to_off"):
            fail("mode %s: outputs not compared identical to mode off" % r["mode"])
        if not r["step_ms_median"] > 0 or r["throughput"] <= 0:
            fail("mode %s: no step time" % r["mode"])
    for r in modes.values():
        if "skipped" in r and not r["skipped"]:
            fail("mode %s skipped without a reason" % r["mode"])
    # The link really was limited: 25 Gb/s at 1/100 = 250 Mbit/s; the pooled all_to_all
    # of 256 samples x 2 tables x 16 floats per peer alone takes 0.5 ms at that rate.
    if modes["off"]["step_ms_min"] < 0.5:
        fail("a step took %.3f ms: the link was not rate-limited" % modes["off"]["step_ms_min"])
    if modes["off"]["link_counters"]["overlimits"] <= 0:
        fail("tbf never held a packet back: the link was not rate-limited")
    sent = modes["off"]["link_counters"]["sent_bytes_per_step"]
    if min(sent) < 16 * 256 * 4:  # at least rank 0's pooled rows of one table for the peer
        fail("%s bytes sent per step and rank: the collectives did not cross the link" % sent)
    print("modes: " + ", ".join("%s %s" % (m, "skipped (%s)" % r["skipped"] if "skipped" in r
                                           else "%.3f ms identical" % r["step_ms_median"])
                                for m, r in sorted(modes.items())))


def case_failure(bin_dir, work):
    before = snapshot()
    out = os.path.join(work, "report.json")
    p = run_bench(small(bin_dir, work, "--repeat", "1000000", "--modes", "off", "--fail-rank", "1",
                        "--fail-after", "3", "--json", out), 120)
    if p.returncode != 1:
        fail("exit %d after a rank was killed, expected 1" % p.returncode)
    if "killed rank 1" not in p.stdout or "rank 1 exit" not in p.stderr:
        fail("the failure is not reported naming rank 1")
    if os.path.exists(out) or os.path.exists(out + ".tmp"):
        fail("a JSON report was written for a failed run")
    check_clean(before, bin_dir, "after an injected failure")


def case_signal(bin_dir, work, sig, code):
    before = snapshot()
    p = subprocess.Popen(small(bin_dir, work, "--repeat", "1000000", "--modes", "off"),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    prefix = "embov%d" % p.pid
    deadline = time.time() + 90
    running = False
    while time.time() < deadline and p.poll() is None:
        ours = [n for n in netns_hosts.namespaces() if n.startswith(prefix + "r")]
        if len(ours) == 2 and all(netns_hosts.sh("ip", "netns", "pids", n, check=False).split()
                                  for n in ours):
            running = True
            break
        time.sleep(0.1)
    if not running:
        p.kill()
        print(p.communicate()[0])
        fail("the ranks did not start in namespaces %s*" % prefix)
    time.sleep(1.0)
    p.send_signal(sig)
    try:
        text = p.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        fail("still running 30 s after signal %d" % sig)
    print(text)
    if p.returncode != code:
        fail("exit %s after signal %d, expected %d" % (p.returncode, sig, code))
    check_clean(before, bin_dir, "after signal %d in the middle of a run" % sig)


def case_bad_args(bin_dir, work):
    bad = [(["--models", "dlrm,bogus"], "unknown model 'bogus'"),
           (["--modes", "streams"], "--modes must include off"),
           (["--modes", "off,fast"], "unknown mode 'fast'"),
           (["--ranks", "1"], "--ranks: 1 is not between 2 and 16"),
           (["--ranks", "2,x"], "--ranks: not a comma-separated list"),
           (["--links", "-5"], "--links: -5 Gb/s"),
           (["--scale", "0"], "--scale must be auto or a number > 0"),
           (["--repeat", "0"], "--repeat and --rounds must be >= 1"),
           (["--rounds", "0"], "--repeat and --rounds must be >= 1"),
           (["--nice", "-30"], "--nice must be between -20 and 19"),
           (["--mtu", "100"], "--mtu must be between 1280 and 65000"),
           (["--mtu", "70000"], "--mtu must be between 1280 and 65000"),
           (["--pipeline-depth", "1"], "--pipeline-depth must be >= 2"),
           (["--pipeline-depth", "two"], "--pipeline-depth: not a comma-separated list"),
           (["--pipeline-depth", "3,2,1"], "--pipeline-depth must be >= 2"),
           (["--pipeline-depth", "3,3"], "--pipeline-depth: a depth given twice"),
           (["--scale", "fast"], "--scale must be auto or a number > 0"),
           (["--fail-rank", "7"], "--fail-rank 7 is not a rank"),
           (["--bin", "/nonexistent"], "no ember-run in --bin /nonexistent")]
    for extra, message in bad:
        cmd = [sys.executable, BENCH, "--bin", bin_dir, "--work", work] + extra
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or message not in p.stderr:
            fail("%s: exit %d, stderr %r (expected 2 and %r)" % (extra, p.returncode, p.stderr, message))
    if os.path.exists(work) and os.listdir(work):
        fail("bad arguments left files in %s" % work)
    print("%d bad argument lists refused" % len(bad))


def case_full(bin_dir, work):
    if os.environ.get("EMBER_LONG_BENCH") != "1":
        print("SKIP: the full benchmark runs with EMBER_LONG_BENCH=1 (several minutes)")
        sys.exit(SKIP)
    before = snapshot()
    p = run_bench([sys.executable, BENCH, "--bin", bin_dir, "--work", work, "--json",
                   os.path.join(work, "report.json")], 3600)
    if p.returncode != 0:
        fail("the benchmark exited %d" % p.returncode)
    check_clean(before, bin_dir, "after the full benchmark")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    case, bin_dir, work = sys.argv[1:4]
    import shutil
    shutil.rmtree(work, ignore_errors=True)
    if case == "bad_args":
        case_bad_args(bin_dir, work)
        print("PASS (bad_args)")
        return
    why = netns_hosts.cannot_make_namespaces()
    if why:
        print("SKIP: network namespaces cannot be made here: %s" % why)
        sys.exit(SKIP)
    os.makedirs(work)
    if case == "pass":
        case_pass(bin_dir, work)
    elif case == "failure":
        case_failure(bin_dir, work)
    elif case == "sigterm":
        case_signal(bin_dir, work, signal.SIGTERM, 143)
        case_signal(bin_dir, work, signal.SIGINT, 130)
        case_signal(bin_dir, work, signal.SIGHUP, 129)
    elif case == "full":
        case_full(bin_dir, work)
    else:
        fail("unknown case " + case)
    print("PASS (%s)" % case)


if __name__ == "__main__":
    main()
