"""Multi-host faults: ranks as separate hosts in network namespaces.

Each case makes its own namespaces (a hub with a bridge, one namespace per
rank with a veth to the hub: 10.77.0.R+1/24), runs every rank as
`ember-run` with the launcher variables (RANK, WORLD_SIZE, MASTER_ADDR=rank
0's address, MASTER_PORT, EMBER_COMM_HOST=its own address, --split-batch,
--timeout T) and injects one fault: a rank killed in a collective, a rank
that stops (SIGSTOP), a link
that drops every packet (`ip link set DEV down`: this kernel has no netem), a
partition during the rendezvous, a straggler behind a `tc tbf` rate limit, a
peer sending garbage to the rendezvous store and to the collective ports, a
forged store key, a rank with another world size or another model's plan.

What must hold: every survivor exits by itself within T (+ slack for a
loaded 2-core machine) with status 1 and an error naming the rank at fault
and the collective (or the rendezvous); no process is left in any namespace;
rank 0's output directory stays empty (nothing written, nothing partial);
and where the fault leaves the job able to run (garbage the store refuses)
the job succeeds with the reference outputs.

usage: netns_faults_test.py CASE EMBER_RUN MAKE_SHARDED WORKDIR
       (CASE: baseline rank_killed rank_stopped link_down partition_rendezvous
              partition_connect straggler garbage_store garbage_ports
              crafted_gloo_frame forged_key wrong_world_size
              wrong_world_plan other_model)
Exit 0 pass, 1 fail, 77 skipped (not root, no `ip`, or namespaces cannot
be made here).
"""
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

T = 4.0            # --timeout of every rank (seconds)
SLACK = 4.0        # a loaded 2-core machine: process start, scheduling
PORT = 29500
SKIP = 77


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def sh(*cmd, check=True):
    p = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip()))
    return p.stdout


class Net:
    """A hub namespace with a bridge; one namespace per host."""

    def __init__(self, hosts):
        self.tag = "emb%d" % (os.getpid() % 100000)
        self.hub = self.tag + "h"
        self.hosts = {}
        self.made = []
        try:
            sh("ip", "netns", "add", self.hub)
            self.made.append(self.hub)
            sh("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
            sh("ip", "-n", self.hub, "link", "set", "br0", "up")
            for name, addr in hosts:
                self.add(name, addr)
        except Exception:
            self.close(check=False)
            raise

    def add(self, name, addr):
        ns = self.tag + name
        sh("ip", "netns", "add", ns)
        self.made.append(ns)
        dev = "v" + name
        sh("ip", "link", "add", dev, "netns", self.hub, "type", "veth", "peer", "name", "eth0",
           "netns", ns)
        sh("ip", "-n", self.hub, "link", "set", dev, "master", "br0", "up")
        sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        self.hosts[name] = (ns, addr, dev)

    def ns(self, name):
        return self.hosts[name][0]

    def addr(self, name):
        return self.hosts[name][1]

    def link_down(self, name):
        """Drops every packet to and from the host (the hub's end of its cable)."""
        sh("ip", "-n", self.hub, "link", "set", self.hosts[name][2], "down")

    def rate_limit(self, name, rate):
        """tc tbf on both directions of the host's link."""
        ns, _, dev = self.hosts[name]
        for n, d in ((ns, "eth0"), (self.hub, dev)):
            sh("ip", "netns", "exec", n, "tc", "qdisc", "add", "dev", d, "root", "tbf", "rate", rate,
               "burst", "4kb", "latency", "60s")

    def listening(self, name):
        """TCP ports listening in the host's namespace."""
        out = sh("ip", "netns", "exec", self.ns(name), "ss", "-ltnH", check=False)
        ports = set()
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 4:
                ports.add(int(fields[3].rsplit(":", 1)[1]))
        return ports

    def established(self, name):
        """Established TCP connections in the host's namespace (local ports)."""
        out = sh("ip", "netns", "exec", self.ns(name), "ss", "-tnH", "state", "established",
                 check=False)
        ports = set()
        for line in out.splitlines():
            fields = line.split()
            if len(fields) >= 4:
                ports.add(int(fields[2].rsplit(":", 1)[1]))
        return ports

    def pids(self):
        left = []
        for ns in self.made:
            out = sh("ip", "netns", "pids", ns, check=False)
            left += [int(p) for p in out.split()]
        return left

    def close(self, check=True):
        left = self.pids() if check else []
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for ns in reversed(self.made):
            sh("ip", "netns", "del", ns, check=False)
        return left


def can_make_namespaces():
    if os.geteuid() != 0:
        return "not root"
    if not shutil.which("ip") or not shutil.which("tc") or not shutil.which("ss"):
        return "no ip/tc/ss (iproute2)"
    name = "embprobe%d" % os.getpid()
    p = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if p.returncode != 0:
        return "ip netns add failed: " + p.stderr.strip()
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


class Rank:
    def __init__(self, net, host, env, cmd, work, label):
        self.label = label
        self.err_path = os.path.join(work, label + ".stderr")
        self.out_path = os.path.join(work, label + ".stdout")
        envs = ["%s=%s" % kv for kv in env.items()]
        self.p = subprocess.Popen(["ip", "netns", "exec", net.ns(host), "env"] + envs + cmd,
                                  stdout=open(self.out_path, "w"), stderr=open(self.err_path, "w"))
        self.started = time.time()
        self.ended = None

    def poll(self):
        if self.ended is None and self.p.poll() is not None:
            self.ended = time.time()
        return self.ended is not None

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()


class Job:
    """The ranks of one job in a Net."""

    def __init__(self, args, net, work, world, plan, inputs):
        self.args, self.net, self.work = args, net, work
        self.world, self.plan, self.inputs = world, plan, inputs
        self.out = os.path.join(work, "out")
        self.ranks = {}

    def start(self, r, host=None, env=None, plan=None, extra=()):
        host = host or "r%d" % r
        e = {"RANK": str(r), "WORLD_SIZE": str(self.world), "LOCAL_RANK": "0",
             "MASTER_ADDR": self.net.addr("r0"), "MASTER_PORT": str(PORT),
             "EMBER_COMM_HOST": self.net.addr(host)}
        e.update(env or {})
        cmd = [self.args.run, plan or self.plan, "--inputs", self.inputs, "--split-batch",
               "--timeout", "%g" % T, "--output-dir", self.out if r == 0 else self.out + str(r)]
        cmd += list(extra)
        self.ranks[r] = Rank(self.net, host, e, cmd, self.work, "rank%d" % r)
        return self.ranks[r]

    def wait_running(self, limit=20):
        """Until the ranks met and run their collectives: rank 0's store no
        longer listens (it closes after the rendezvous) and rank 0 has its
        pairs' connections."""
        deadline = time.time() + limit
        while time.time() < deadline:
            if any(r.poll() for r in self.ranks.values()):
                self.report()
                fail("a rank exited before the fault was injected")
            if PORT not in self.net.listening("r0") and self.net.established("r0") - {PORT}:
                time.sleep(0.3)
                return
            time.sleep(0.02)
        self.report()
        fail("the ranks did not meet within %ds" % limit)

    def wait_port(self, host, port, limit=20):
        deadline = time.time() + limit
        while port not in self.net.listening(host):
            if time.time() > deadline:
                fail("nothing listens on %s:%d" % (host, port))
            time.sleep(0.02)

    def wait_all(self, limit):
        deadline = time.time() + limit
        while not all(r.poll() for r in self.ranks.values()):
            if time.time() > deadline:
                hung = [k for k, r in self.ranks.items() if not r.poll()]
                self.report()
                for k in hung:
                    self.ranks[k].p.kill()
                fail("ranks %s still running %.0f s after the fault" % (hung, limit))
            time.sleep(0.02)

    def report(self, fault_at=None):
        for k in sorted(self.ranks):
            r = self.ranks[k]
            r.poll()
            when = ("%.1f s after the fault" % (r.ended - fault_at)) if (r.ended and fault_at) else \
                   ("%.1f s after start" % (r.ended - r.started) if r.ended else "running")
            print("  rank %d: exit %s, %s" % (k, r.p.returncode, when))
            for line in r.stderr().strip().splitlines():
                print("    " + line)


def check_outcome(job, fault_at, expect, survivors, limit=T + SLACK):
    """Every rank has exited; each survivor with status 1 within `limit` of
    the fault and every fragment of expect[rank] on stderr; no output."""
    job.wait_all(limit + 10)
    print("fault at t=%.1f s:" % (fault_at - min(r.started for r in job.ranks.values())))
    job.report(fault_at)
    for k in survivors:
        r = job.ranks[k]
        took = r.ended - fault_at
        if r.p.returncode != 1:
            fail("rank %d: exit status %s, expected 1" % (k, r.p.returncode))
        if took > limit:
            fail("rank %d exited %.1f s after the fault (limit %.1f)" % (k, took, limit))
        err = r.stderr()
        for fragment in expect.get(k, []):
            if fragment not in err:
                fail("rank %d: stderr lacks '%s'" % (k, fragment))
        if "terminate called" in err or "Aborted" in err or "fatal" in err:
            fail("rank %d crashed" % k)
    for k, r in job.ranks.items():
        if r.p.returncode is not None and r.p.returncode < 0 and k in survivors:
            fail("rank %d was killed by signal %d" % (k, -r.p.returncode))
    if os.path.isdir(job.out) and os.listdir(job.out):
        fail("outputs left in %s: %s" % (job.out, os.listdir(job.out)))
    for k in job.ranks:
        d = job.out + str(k)
        if os.path.isdir(d) and os.listdir(d):
            fail("rank %d wrote outputs" % k)


def blamed(text):
    """The ranks an error blames: 'lost rank R', 'not heard from rank(s) R, S'."""
    import re
    out = set()
    for m in re.finditer(r"lost rank (\d+)", text):
        out.add(int(m.group(1)))
    for m in re.finditer(r"not heard from ranks? ([\d, ]+)", text):
        out |= {int(x) for x in m.group(1).replace(" ", "").split(",") if x}
    return out


def check_blame(job, culprit, survivors):
    """Each survivor's error leads to the culprit: it names it, or names a
    rank that stopped on its own error first (which leads there)."""
    for k in survivors:
        seen, frontier = set(), {k}
        while frontier and culprit not in frontier:
            nxt = set()
            for r in frontier - seen:
                seen.add(r)
                if r in job.ranks and r != culprit:
                    nxt |= blamed(job.ranks[r].stderr())
            frontier = nxt - seen
        if culprit not in frontier:
            fail("rank %d's error does not lead to rank %d" % (k, culprit))


def check_success(job, reference):
    job.wait_all(T * 4 + 20)
    job.report()
    for k, r in job.ranks.items():
        if r.p.returncode != 0:
            fail("rank %d: exit status %s" % (k, r.p.returncode))
    for name in ("pooled.npy", "dense_relu.npy"):
        with open(os.path.join(job.out, name), "rb") as a, open(os.path.join(reference, name), "rb") as b:
            if a.read() != b.read():
                fail("%s differs from the single-rank reference" % name)


# --- garbage peers (run inside their own namespace) ------------------------------

GREETING = b"EMBRSTO1"


def garbage_store(host, port, seconds):
    """Everything a confused or hostile peer might send to the store."""
    rng = random.Random(16)
    sent = 0
    end = time.time() + seconds

    def conn():
        s = socket.create_connection((host, port), timeout=2)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def attempt(payload, hold=0.0):
        nonlocal sent
        try:
            s = conn()
            s.sendall(payload)
            time.sleep(hold)
            s.close()
            sent += 1
        except OSError:
            pass

    held = []
    while time.time() < end:
        attempt(bytes(rng.getrandbits(8) for _ in range(4096)))                    # noise
        attempt(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")                              # another protocol
        attempt(GREETING + b"S" + struct.pack("<IQ", 0xFFFFFFFF, 8))              # huge key
        attempt(GREETING + b"S" + struct.pack("<IQ", 5, 1 << 40) + b"hello")      # huge value
        attempt(GREETING + b"C" + struct.pack("<I", 1 << 30))                     # huge check
        attempt(GREETING + b"Z")                                                  # unknown request
        attempt(GREETING + b"S" + struct.pack("<IQ", 8, 1 << 20) + b"ember/x" + b"\0" * 1000)  # half
        attempt(GREETING[:4])                                                     # half greeting
        try:
            for _ in range(50):                                                   # many idle connections
                held.append(conn())
        except OSError:
            pass
        if len(held) > 1100:
            for s in held:
                s.close()
            held = []
        time.sleep(0.05)
    for s in held:
        s.close()
    print("garbage_store: %d malformed connections to %s:%d" % (sent, host, port))


def garbage_ports(targets, seconds):
    """Random bytes to every host:port in targets (the collective ports)."""
    rng = random.Random(17)
    hits = 0
    end = time.time() + seconds
    done = set()
    while time.time() < end:
        for t in targets:
            if t in done:
                continue
            host, port = t.rsplit(":", 1)
            try:
                s = socket.create_connection((host, int(port)), timeout=1)
                s.sendall(bytes(rng.getrandbits(8) for _ in range(1 << 16)))
                hits += 1
                done.add(t)
                time.sleep(0.5)
                s.close()
            except OSError:
                pass
        time.sleep(0.05)
    print("garbage_ports: sent 64 KiB of noise to %d of %s" % (hits, targets))


def crafted_frame(target):
    """One frame in Gloo's own framing (tcp/pair.h, Op::preamble: six
    size_t) that sends 8 bytes to an unbound buffer on a slot nobody posted:
    Gloo's network thread throws on it (GLOO_ENFORCE), which ends the
    process. What a peer that speaks Gloo can do: docs/reliability.md."""
    host, port = target.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    preamble = struct.pack("<6Q", 48 + 8, 1, 12345, 0, 8, 0)
    s.sendall(preamble + b"\0" * 8)
    time.sleep(1.0)
    s.close()
    print("crafted_frame: sent a SEND_UNBOUND_BUFFER frame for slot 12345 to " + target)


def forge_key(host, port, key):
    """A peer that speaks the store's protocol and publishes a key first."""
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(GREETING)
    assert s.recv(8) == GREETING
    value = os.urandom(64)
    s.sendall(b"S" + struct.pack("<IQ", len(key), len(value)) + key.encode() + value)
    print("forge_key: set %s -> reply %r" % (key, s.recv(1)))
    s.close()


# --- cases --------------------------------------------------------------------------

def setup(args):
    why = can_make_namespaces()
    if why:
        print("SKIP: network namespaces cannot be made here (%s)" % why)
        sys.exit(SKIP)
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    p = subprocess.run([args.make_sharded, os.path.join(work, "plans"), "64"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        fail("ember-make-sharded-plan: " + p.stderr)
    return os.path.join(work, "plans")


def reference(args, plans, work, model="tw", inputs=None):
    d = os.path.join(work, "ref_" + model)
    p = subprocess.run([args.run, os.path.join(plans, model + ".plan"), "--inputs",
                        inputs or os.path.join(plans, model + "_inputs.npz"), "--output-dir", d],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail("single-rank reference failed: " + p.stderr)
    return d


def run_case(args):
    plans = setup(args)
    work = args.work
    case = args.case
    world = 4 if case in ("rank_killed", "rank_stopped") else 2
    hosts = [("r%d" % r, "10.77.0.%d" % (r + 1)) for r in range(world)]
    if case in ("garbage_store", "garbage_ports", "forged_key", "crafted_gloo_frame"):
        hosts.append(("g", "10.77.0.200"))
    net = Net(hosts)
    try:
        inputs = os.path.join(plans, "tw_inputs.npz")
        plan = os.path.join(plans, "tw%d.plan" % world)
        job = Job(args, net, work, world, plan, inputs)
        many = ["--repeat", "100000000"]
        me = os.path.abspath(__file__)

        if case == "baseline":
            ref = reference(args, plans, work)
            for r in range(world):
                job.start(r)
            check_success(job, ref)

        elif case == "rank_killed":
            # Rank 2 of 4 SIGKILLed while every rank loops over the collectives.
            for r in range(world):
                job.start(r, extra=many)
            job.wait_running()
            fault = time.time()
            job.ranks[2].p.kill()
            check_outcome(job, fault, {r: ["instruction"] for r in (0, 1, 3)},
                          survivors=[0, 1, 3], limit=SLACK)
            check_blame(job, 2, [0, 1, 3])

        elif case == "rank_stopped":
            # Rank 2 of 4 stops (SIGSTOP: a hung process; its kernel still
            # acknowledges): the others time out naming it.
            for r in range(world):
                job.start(r, extra=many)
            job.wait_running()
            fault = time.time()
            job.ranks[2].p.send_signal(signal.SIGSTOP)
            deadline = time.time() + T + SLACK + 10
            while not all(job.ranks[r].poll() for r in (0, 1, 3)) and time.time() < deadline:
                time.sleep(0.02)
            job.ranks[2].p.kill()  # the hung one: what an operator does
            check_outcome(job, fault, {r: ["instruction", "timed out after 4.0 s"] for r in (0, 1, 3)},
                          survivors=[0, 1, 3])
            check_blame(job, 2, [0, 1, 3])

        elif case == "link_down":
            for r in range(world):
                job.start(r, extra=many)
            job.wait_running()
            fault = time.time()
            net.link_down("r1")
            check_outcome(job, fault, {0: ["not heard from rank 1", "instruction"],
                                       1: ["not heard from rank 0", "instruction"]},
                          survivors=[0, 1])

        elif case == "partition_rendezvous":
            # Rank 1's cable is cut before it starts: it never reaches the store.
            net.link_down("r1")
            fault = time.time()
            job.start(0)
            job.start(1)
            check_outcome(job, fault, {0: ["not heard from rank 1", "rendezvous of rank 0 of 2"],
                                       1: ["cannot reach the rendezvous store at 10.77.0.1:29500",
                                           "rendezvous of rank 1 of 2"]},
                          survivors=[0, 1])

        elif case == "partition_connect":
            # Both ranks said hello; rank 1's cable is cut while they connect.
            env = {"EMBER_TEST_RENDEZVOUS_DELAY": "1:1.5"}
            job.start(0, env=env)
            job.start(1, env=env)
            job.wait_port("r0", PORT)
            deadline = time.time() + 10
            while len(net.listening("r0") - {PORT}) == 0 and time.time() < deadline:
                time.sleep(0.02)
            time.sleep(0.2)
            fault = time.time()
            net.link_down("r1")
            check_outcome(job, fault, {0: ["rank 1", "rendezvous of rank 0 of 2"],
                                       1: ["rank 0", "rendezvous of rank 1 of 2"]},
                          survivors=[0, 1])

        elif case == "straggler":
            # Rank 1's link is rate-limited to 16 kbit/s: its share of a
            # collective takes longer than the timeout.
            big = os.path.join(work, "big")
            p = subprocess.run([args.make_sharded, big, "4096"], capture_output=True, text=True)
            if p.returncode != 0:
                fail("ember-make-sharded-plan: " + p.stderr)
            job.inputs = os.path.join(big, "tw_inputs.npz")
            job.plan = os.path.join(big, "tw2.plan")
            net.rate_limit("r1", "16kbit")
            fault = time.time()
            job.start(0)
            job.start(1)
            check_outcome(job, fault, {0: ["timed out after", "not heard from rank 1"],
                                       1: ["rank 0", "instruction"]},
                          survivors=[0, 1], limit=2 * T + SLACK)

        elif case == "garbage_store":
            # A peer floods the store with garbage while the ranks meet; the
            # store refuses it and the job runs.
            ref = reference(args, plans, work)
            job.start(0)
            job.wait_port("r0", PORT)
            g = subprocess.Popen(["ip", "netns", "exec", net.ns("g"), sys.executable, me, "garbage-store",
                                  net.addr("r0"), str(PORT), "2.5"], stdout=subprocess.PIPE, text=True)
            time.sleep(1.5)
            job.start(1)
            check_success(job, ref)
            print(g.communicate(timeout=30)[0].strip())
            err = job.ranks[0].stderr()
            if "rendezvous store 10.77.0.1:29500: closed the connection of 10.77.0.200" not in err:
                fail("rank 0 did not report the garbage")

        elif case == "garbage_ports":
            # Rank 1 waits between publishing its addresses and connecting;
            # meanwhile a peer sends noise to every port rank 0 listens on
            # (the store and rank 0's collective pair waiting for rank 1).
            env = {"EMBER_TEST_RENDEZVOUS_DELAY": "1:2"}
            job.start(0, env=env)
            job.start(1, env=env)
            job.wait_port("r0", PORT)
            deadline = time.time() + 10
            ports = set()
            while time.time() < deadline and not ports:
                ports = net.listening("r0") - {PORT}
                time.sleep(0.02)
            fault = time.time()
            targets = ["%s:%d" % (net.addr("r0"), p) for p in sorted(ports | {PORT})]
            g = subprocess.Popen(["ip", "netns", "exec", net.ns("g"), sys.executable, me, "garbage-ports",
                                  "1.5"] + targets, stdout=subprocess.PIPE, text=True)
            check_outcome(job, fault, {0: ["rank 1", "rendezvous of rank 0 of 2"],
                                       1: ["rank 0", "rendezvous of rank 1 of 2"]},
                          survivors=[0, 1])
            print(g.communicate(timeout=30)[0].strip())

        elif case == "crafted_gloo_frame":
            # Not survivable, documented: a peer that speaks Gloo's framing
            # and reaches a listening pair makes Gloo's thread throw; rank 0
            # dies (SIGABRT) saying where; rank 1 names rank 0.
            env = {"EMBER_TEST_RENDEZVOUS_DELAY": "1:2"}
            job.start(0, env=env)
            job.start(1, env=env)
            job.wait_port("r0", PORT)
            deadline = time.time() + 10
            ports = set()
            while time.time() < deadline and not ports:
                ports = net.listening("r0") - {PORT}
                time.sleep(0.02)
            fault = time.time()
            out = sh("ip", "netns", "exec", net.ns("g"), sys.executable, me, "crafted-frame",
                     "%s:%d" % (net.addr("r0"), min(ports)))
            print(out.strip())
            job.wait_all(T + SLACK + 10)
            job.report(fault)
            r0, r1 = job.ranks[0], job.ranks[1]
            if r0.p.returncode != -signal.SIGABRT:
                fail("rank 0: expected SIGABRT, got %s" % r0.p.returncode)
            if "ember: rank 0: fatal: Gloo's network thread failed during rendezvous of rank 0 of 2" \
                    not in r0.stderr():
                fail("rank 0 did not say where it died")
            if r1.p.returncode != 1 or "rank 0" not in r1.stderr():
                fail("rank 1 did not fail naming rank 0")
            if r1.ended - fault > T + SLACK:
                fail("rank 1 took %.1f s" % (r1.ended - fault))
            if os.path.isdir(job.out) and os.listdir(job.out):
                fail("outputs written")

        elif case == "forged_key":
            # A peer that speaks the store's protocol publishes rank 1's key
            # before rank 1: keys are set once, so rank 1 is refused, and
            # rank 0 finds the forged hello malformed; both name rank 1.
            job.start(0)
            job.wait_port("r0", PORT)
            fault = time.time()
            out = sh("ip", "netns", "exec", net.ns("g"), sys.executable, me, "forge-key", net.addr("r0"),
                     str(PORT), "ember/hello/1")
            print(out.strip())
            job.start(1)
            check_outcome(job, fault, {0: ["rank 1 published malformed rendezvous data"],
                                       1: ["refused setting 'ember/hello/1'"]},
                          survivors=[0, 1])

        elif case == "wrong_world_size":
            # Rank 1 is started with WORLD_SIZE=3: its plan (for 2) refuses
            # it, and it tells rank 0 why through the store.
            fault = time.time()
            job.start(0)
            job.start(1, env={"WORLD_SIZE": "3"})
            check_outcome(job, fault, {0: ["rank 1 (on ", "cannot take part",
                                           "the plan is for 2 rank(s) but this session's "
                                           "world has 3 ranks"],
                                       1: ["the plan is for 2 rank(s)"]},
                          survivors=[0, 1])

        elif case == "wrong_world_plan":
            # Rank 1 is started with WORLD_SIZE=4 and a 4-rank plan.
            fault = time.time()
            job.start(0)
            job.start(1, env={"WORLD_SIZE": "4"}, plan=os.path.join(plans, "tw4.plan"))
            check_outcome(job, fault, {0: ["rank 1 (on ", "was started for a world of 4 ranks, this rank "
                                           "for 2"],
                                       1: ["rank 0 (on ", "was started for a world of 2 ranks, this rank "
                                           "for 4"]},
                          survivors=[0, 1])

        elif case == "other_model":
            # Rank 1 loads the row-wise model's 2-rank plan.
            fault = time.time()
            job.start(0)
            job.start(1, plan=os.path.join(plans, "rw2.plan"))
            check_outcome(job, fault, {0: ["rank 1 (on ", "loaded another plan: 'rw2.plan'"],
                                       1: ["rank 0 (on ", "loaded another plan: 'tw2.plan'"]},
                          survivors=[0, 1])
        else:
            fail("unknown case " + case)
    finally:
        left = net.close()
    if left:
        fail("processes left in the namespaces: %s" % left)
    print("PASS (%s)" % case)


class Args:
    pass


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "garbage-store":
        garbage_store(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
        return
    if len(sys.argv) >= 2 and sys.argv[1] == "garbage-ports":
        garbage_ports(sys.argv[3:], float(sys.argv[2]))
        return
    if len(sys.argv) >= 2 and sys.argv[1] == "crafted-frame":
        crafted_frame(sys.argv[2])
        return
    if len(sys.argv) >= 2 and sys.argv[1] == "forge-key":
        forge_key(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    if len(sys.argv) != 5:
        print(__doc__)
        sys.exit(2)
    args = Args()
    args.case, args.run, args.make_sharded, args.work = sys.argv[1:5]
    run_case(args)


if __name__ == "__main__":
    main()
