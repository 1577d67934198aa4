"""Hosts in network namespaces on this machine, for benchmarks that need a real network.

A hub namespace holds a bridge; each host is a namespace with one veth (`eth0`, MTU 9000,
address SUBNET.(i+1)/24) whose other end is a port of the bridge. `rate_limit` puts a
`tc tbf` on both directions of every host's link (this kernel has no netem): a
non-blocking switch with one NIC of that rate per host.

Everything made is removed by `close()`: the processes started through `spawn` and any
other process left in the namespaces (SIGKILL), then the namespaces, which takes their
veths and the bridge with them. Nothing is made in the root namespace. Names are
TAG<pid>h and TAG<pid>r<i>, so `remove_stale()` can find what a run that was SIGKILLed
(and so could not clean up) left behind: namespaces of a TAG whose pid is no longer
alive.

`install_signal_cleanup()` turns SIGTERM and SIGHUP into SystemExit (SIGINT already raises
KeyboardInterrupt), so the `finally:` that calls close() also runs on those.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time

SKIP = 77


def sh(*cmd, check=True):
    p = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip()))
    return p.stdout


def namespaces():
    """The names `ip netns list` shows."""
    out = sh("ip", "netns", "list", check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def cannot_make_namespaces():
    """None when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "not root (network namespaces need root)"
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            return "no `%s` (iproute2)" % tool
    name = "embprobe%d" % os.getpid()
    p = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if p.returncode != 0:
        return "ip netns add failed: " + p.stderr.strip()
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_namespace_processes(ns):
    for pid in sh("ip", "netns", "pids", ns, check=False).split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def remove_stale(tag):
    """Removes the namespaces TAG<pid>... of runs whose pid is gone; returns their names."""
    pattern = re.compile(r"^%s(\d+)(h|r\d+)$" % re.escape(tag))
    removed = []
    for ns in namespaces():
        m = pattern.match(ns)
        if m and not _alive(int(m.group(1))):
            _kill_namespace_processes(ns)
            sh("ip", "netns", "del", ns, check=False)
            removed.append(ns)
    return removed


def _raise_exit(signum, _frame):
    raise SystemExit(128 + signum)


def install_signal_cleanup():
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _raise_exit)


class Hosts:
    """N hosts h0..h(N-1) on one bridge."""

    def __init__(self, count, tag="embov", subnet="10.78.0", mtu=9000):
        self.prefix = "%s%d" % (tag, os.getpid())
        self.hub = self.prefix + "h"
        self.subnet = subnet
        self.made = []
        self.procs = []
        self.hosts = []
        self.rate = None
        self.mtu = mtu
        try:
            sh("ip", "netns", "add", self.hub)
            self.made.append(self.hub)
            sh("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
            sh("ip", "-n", self.hub, "link", "set", "br0", "mtu", str(mtu), "up")
            for i in range(count):
                self._add(i, mtu)
        except BaseException:
            self.close()
            raise

    def _add(self, i, mtu):
        ns = "%sr%d" % (self.prefix, i)
        sh("ip", "netns", "add", ns)
        self.made.append(ns)
        dev = "v%d" % i
        sh("ip", "link", "add", dev, "netns", self.hub, "mtu", str(mtu), "type", "veth", "peer",
           "name", "eth0", "netns", ns, "mtu", str(mtu))
        sh("ip", "-n", self.hub, "link", "set", dev, "master", "br0", "up")
        addr = "%s.%d" % (self.subnet, i + 1)
        sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        self.hosts.append((ns, addr, dev))

    def ns(self, i):
        return self.hosts[i][0]

    def addr(self, i):
        return self.hosts[i][1]

    def rate_limit(self, rate_bps):
        """tc tbf at rate_bps (bits/s) on both directions of every host's link; None removes
        the limits. The bucket holds one packet of the MTU (or 20 us at the rate, if more):
        a larger bucket would let a short message through at the veth's own speed (a
        64 KiB bucket passes a DLRM step's whole all_to_all unthrottled at 250 Mbit/s);
        tbf cuts GSO segments to fit. The queue holds 200 ms."""
        for ns, _, dev in self.hosts:
            for n, d in ((ns, "eth0"), (self.hub, dev)):
                if self.rate is not None:
                    sh("ip", "netns", "exec", n, "tc", "qdisc", "del", "dev", d, "root")
                if rate_bps is not None:
                    burst = max(self.mtu + 100, int(rate_bps / 8 * 20e-6))
                    sh("ip", "netns", "exec", n, "tc", "qdisc", "add", "dev", d, "root", "tbf",
                       "rate", "%dbit" % rate_bps, "burst", str(burst), "latency", "200ms")
        self.rate = rate_bps

    def link_counters(self, i):
        """Host i's eth0: bytes and packets sent (`ip -s link`), and how often its qdisc held
        a packet back for the rate (tbf's overlimits, `tc -s qdisc`; 0 without a limit)."""
        out = json.loads(sh("ip", "-n", self.ns(i), "-s", "-j", "link", "show", "eth0"))
        tx = out[0]["stats64"]["tx"]
        counters = {"bytes": tx["bytes"], "packets": tx["packets"], "dropped": tx["dropped"],
                    "overlimits": 0}
        text = sh("ip", "netns", "exec", self.ns(i), "tc", "-s", "qdisc", "show", "dev", "eth0",
                  check=False)
        m = re.search(r"dropped (\d+), overlimits (\d+)", text)
        if m:
            counters["dropped"] += int(m.group(1))
            counters["overlimits"] = int(m.group(2))
        return counters

    def spawn(self, i, cmd, env, stdout, stderr):
        """Starts cmd in host i's namespace with env added to the environment."""
        envs = ["%s=%s" % kv for kv in env.items()]
        p = subprocess.Popen(["ip", "netns", "exec", self.ns(i), "env"] + envs + list(cmd),
                             stdout=stdout, stderr=stderr)
        self.procs.append(p)
        return p

    def leftover_processes(self):
        left = []
        for ns in self.made:
            left += [int(p) for p in sh("ip", "netns", "pids", ns, check=False).split()]
        return left

    def close(self):
        """Kills every process it started or that runs in its namespaces and removes the
        namespaces (their veths and the bridge go with them). Safe to call twice; signals
        are held off meanwhile so that a second Ctrl-C does not leave half of it."""
        old = {}
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                old[s] = signal.signal(s, signal.SIG_IGN)
            except ValueError:  # not the main thread
                pass
        try:
            for p in self.procs:
                if p.poll() is None:
                    p.kill()
            for p in self.procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            self.procs = []
            for ns in self.made:
                _kill_namespace_processes(ns)
            for ns in reversed(self.made):
                for _ in range(50):
                    if subprocess.run(["ip", "netns", "del", ns], capture_output=True).returncode == 0 \
                            or ns not in namespaces():
                        break
                    time.sleep(0.1)
            self.made = []
        finally:
            for s, h in old.items():
                signal.signal(s, h)
