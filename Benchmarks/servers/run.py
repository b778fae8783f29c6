#!/usr/bin/env python3
"""The external server benchmark (scripts/bench --servers): echo servers as separate processes,
each pinned to CPU 0, driven by the C load generator (loadgen.c) pinned to CPU 1.

Sections (--only, comma-separated; default all):
  echo     TCP and Unix socket, 1 and 50 connections, 64 B / 1 KiB / 64 KiB messages: messages
           per second, p50/p99/p99.9 round trip, the server's user and system CPU per message,
           ratios against raw C libuv (libuv_c).
  group    group_echo_scaling: UVLoop's LoopGroup.listen echo server with 1 and 2 loops, 50
           connections, a 2-thread load generator; on 2 CPUs both share them, on 4 or more the
           server has CPUs 0-1 and the load generator CPUs 2-3.
  churn    connections per second (connect, one 64 B echo, close; 10 at a time) and the
           server's CPU per connection.
  memory   resident memory per idle connection: the server's RSS growth over 10,000 idle
           connections (each echoed once), after a warm-up of 100.

Run Benchmarks/servers/prepare first (scripts/bench --servers does).
"""
import argparse
import json
import os
import resource
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "Benchmarks", ".build", "servers")
RELEASE = os.path.join(ROOT, "Benchmarks", ".build", "release")
LOADGEN = os.path.join(OUT, "loadgen")
SERVER_CPU, CLIENT_CPU = "0", "1"

IMPLS = {
    "libuv_c": [os.path.join(OUT, "echo-libuv")],
    "uvloop": [os.path.join(RELEASE, "bench-echo-uvloop"), "--face", "callback"],
    "uvloop_async": [os.path.join(RELEASE, "bench-echo-uvloop"), "--face", "async"],
    "uvloop_async_loop": [os.path.join(RELEASE, "bench-echo-uvloop"), "--face", "async-loop"],
    "nio": [os.path.join(RELEASE, "bench-echo-nio")],
    "python_uvloop": [os.path.join(OUT, "venv", "bin", "python"), os.path.join(HERE, "echo_uvloop.py")],
    "node": ["node", os.path.join(HERE, "echo_node.js")],
}
SIZES = [64, 1024, 65536]
CONNECTIONS = [1, 50]


def raise_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


class Server:
    """One echo server process, pinned with taskset; `address` is its port or socket path."""

    def __init__(self, impl, transport, workdir, cpus=SERVER_CPU, extra=()):
        self.impl = impl
        self.transport = transport
        command = list(IMPLS[impl]) + list(extra)
        if transport == "tcp":
            command += ["--port", "0"]
        else:
            self.path = os.path.join(workdir, f"{impl}.sock")
            command += ["--unix", self.path]
        # Standard error goes to a file: a pipe nobody reads could fill up and stop the server.
        self.log = os.path.join(workdir, f"{impl}-{transport}-{time.monotonic_ns()}.log")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(["taskset", "-c", cpus] + command, stdout=subprocess.PIPE,
                                            stderr=log, preexec_fn=raise_descriptor_limit)
        self.pid = self.process.pid   # taskset execs the server: same pid
        line = b""
        deadline = time.monotonic() + 30
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                self.stop()
                raise RuntimeError(f"{impl} ({transport}): no 'listening on' line within 30 s")
            chunk = os.read(self.process.stdout.fileno(), 1)
            if not chunk:
                raise RuntimeError(f"{impl} ({transport}) exited: {self.log_tail()}")
            line += chunk
        text = line.decode().strip()
        if not text.startswith("listening on "):
            raise RuntimeError(f"{impl}: unexpected first line {text!r}")
        self.address = text[len("listening on "):]

    def log_tail(self, lines=10):
        with open(self.log, errors="replace") as log:
            return "".join(log.readlines()[-lines:]).strip()

    def target(self):
        return ["--tcp", f"127.0.0.1:{self.address}"] if self.transport == "tcp" else ["--unix", self.address]

    def rss_kib(self):
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def loadgen(server, mode, connections, size, duration, warmup, cpus=CLIENT_CPU, threads=1):
    command = ["taskset", "-c", cpus, LOADGEN, *server.target(), "--mode", mode, "--connections", str(connections),
               "--size", str(size), "--duration", str(duration), "--warmup", str(warmup), "--threads", str(threads),
               "--pid", str(server.pid)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=duration + warmup + 120,
                            preexec_fn=raise_descriptor_limit)
    if result.returncode != 0:
        raise RuntimeError(f"loadgen against {server.impl}: {result.stderr.strip()}")
    return json.loads(result.stdout)


def measure(runs, server, *arguments, **options):
    """Appends one load-generator run to `runs`; a failed run is reported and left out, so that
    one server's failure does not end the whole benchmark."""
    try:
        runs.append(loadgen(server, *arguments, **options))
    except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as error:
        print(f"FAILED: {error}" + (f" (server log: {server.log_tail(3)})" if server.log_tail(3) else ""), file=sys.stderr)


def median_of(runs):
    keys = ["per_second", "p50_us", "p99_us", "p999_us", "server_user_ns", "server_system_ns", "client_cpu_s", "seconds",
            "server_cpu_s", "server_user_s", "server_system_s"]
    merged = {k: statistics.median(r[k] for r in runs) for k in keys}
    merged["server_cpu_share"] = statistics.median(r["server_cpu_s"] / r["seconds"] for r in runs)
    merged["client_cpu_share"] = statistics.median(r["client_cpu_s"] / r["seconds"] for r in runs)
    merged["runs"] = len(runs)
    return merged


def size_name(size):
    return f"{size // 1024} KiB" if size >= 1024 else f"{size} B"


def ratio(value, floor):
    return f"{value / floor:.2f}x" if floor else "-"


def run_echo(args, impls, workdir, results):
    for transport in args.transports:
        servers = {}
        try:
            for impl in impls:
                servers[impl] = Server(impl, transport, workdir)
            for connections in CONNECTIONS:
                for size in args.sizes:
                    runs = {impl: [] for impl in impls}
                    for rep in range(args.reps):
                        order = impls if rep % 2 == 0 else list(reversed(impls))
                        for impl in order:
                            measure(runs[impl], servers[impl], "echo", connections, size, args.duration, args.warmup)
                    cell = {"transport": transport, "connections": connections, "size": size,
                            "impls": {impl: median_of(runs[impl]) for impl in impls if runs[impl]}}
                    results["echo"].append(cell)
                    print_echo_cell(cell)
        finally:
            for server in servers.values():
                server.stop()


def print_echo_cell(cell):
    impls = cell["impls"]
    floor = impls.get("libuv_c")
    print(f"\n{cell['transport'].upper()}, {cell['connections']} connection(s), {size_name(cell['size'])} messages")
    print("| impl | msg/s | p50 µs | p99 µs | p99.9 µs | server CPU/msg user + sys ns | CPU/msg vs C | msg/s vs C | server CPU | client CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for impl, r in impls.items():
        cpu = r["server_user_ns"] + r["server_system_ns"]
        floor_cpu = floor["server_user_ns"] + floor["server_system_ns"] if floor else 0
        print(f"| {impl} | {r['per_second']:,.0f} | {r['p50_us']:.1f} | {r['p99_us']:.1f} | {r['p999_us']:.1f} | "
              f"{cpu:,.0f} ({r['server_user_ns']:,.0f} + {r['server_system_ns']:,.0f}) | "
              f"{ratio(cpu, floor_cpu)} | {ratio(r['per_second'], floor['per_second'] if floor else 0)} | "
              f"{r['server_cpu_share'] * 100:.0f}% | {r['client_cpu_share'] * 100:.0f}% |")
    sys.stdout.flush()


def print_echo_summary(cells):
    """One table: each cell's server CPU per message, raw C libuv's in ns and the others as ratios."""
    if not cells:
        return
    impls = list(dict.fromkeys(i for cell in cells for i in cell["impls"]))
    others = [i for i in impls if i != "libuv_c"]
    print("\nserver CPU per message (user + system), vs raw C libuv; msg/s vs C in brackets")
    print("| cell | libuv_c ns | " + " | ".join(others) + " |")
    print("|---|---|" + "---|" * len(others))
    for cell in cells:
        r = cell["impls"]
        cpu = {i: r[i]["server_user_ns"] + r[i]["server_system_ns"] for i in r}
        floor = r.get("libuv_c")
        name = f"{cell['transport'].upper()} {cell['connections']}c {size_name(cell['size'])}"
        row = ["failed" if i not in r else
               f"{cpu[i] / cpu['libuv_c']:.2f}x ({r[i]['per_second'] / floor['per_second']:.2f}x)" if floor else f"{cpu[i]:,.0f} ns"
               for i in others]
        floor_text = f"{cpu['libuv_c']:,.0f}" if floor else "failed"
        print(f"| {name} | {floor_text} | " + " | ".join(row) + " |")
    sys.stdout.flush()


def run_group(args, workdir, results):
    """LoopGroup.listen with 1 and 2 loops. With 4 CPUs or more the server gets CPUs 0-1 and a
    2-thread load generator CPUs 2-3; on fewer, both share CPUs 0-1 (see Benchmarks/README.md)."""
    server_cpus, client_cpus = ("0,1", "2,3") if (os.cpu_count() or 1) >= 4 else ("0,1", "0,1")
    print(f"\ngroup_echo_scaling: LoopGroup.listen echo server, TCP, 50 connections; server on CPUs {server_cpus}, "
          f"2-thread loadgen on CPUs {client_cpus}")
    print("| loops | size | msg/s | p99 µs | server CPU/msg ns | server CPU | client CPU |")
    print("|---|---|---|---|---|---|---|")
    for size in [64, 1024]:
        cells = {}
        for loops in (1, 2):
            runs = []
            server = Server("uvloop", "tcp", workdir, cpus=server_cpus, extra=["--loops", str(loops)])
            try:
                for _ in range(args.reps):
                    measure(runs, server, "echo", 50, size, args.duration, args.warmup, cpus=client_cpus, threads=2)
            finally:
                server.stop()
            if not runs:
                break
            cells[loops] = median_of(runs)
            r = cells[loops]
            print(f"| {loops} | {size_name(size)} | {r['per_second']:,.0f} | {r['p99_us']:.1f} | "
                  f"{r['server_user_ns'] + r['server_system_ns']:,.0f} | {r['server_cpu_share'] * 100:.0f}% | "
                  f"{r['client_cpu_share'] * 100:.0f}% |")
            sys.stdout.flush()
        if len(cells) < 2:
            continue
        speedup = cells[2]["per_second"] / cells[1]["per_second"]
        print(f"| 2 loops / 1 loop | {size_name(size)} | {speedup:.2f}x | | | | |")
        results["group"].append({"size": size, "loops1": cells[1], "loops2": cells[2], "speedup": speedup})


def run_churn(args, impls, workdir, results):
    for transport in args.transports:
        print(f"\nconnection churn, {transport.upper()}: connect, one 64 B echo, close; 10 at a time")
        print("| impl | connections/s | p99 µs (connect to echo) | server CPU/connection user + sys µs | CPU vs C | conn/s vs C | server CPU |")
        print("|---|---|---|---|---|---|---|")
        servers = {impl: Server(impl, transport, workdir) for impl in impls}
        try:
            runs = {impl: [] for impl in impls}
            for rep in range(args.reps):
                for impl in (impls if rep % 2 == 0 else list(reversed(impls))):
                    measure(runs[impl], servers[impl], "churn", 10, 64, args.duration, args.warmup)
        finally:
            for server in servers.values():
                server.stop()
        cell = {impl: median_of(runs[impl]) for impl in impls if runs[impl]}
        floor = cell.get("libuv_c")
        for impl, r in cell.items():
            cpu = r["server_user_ns"] + r["server_system_ns"]
            floor_cpu = floor["server_user_ns"] + floor["server_system_ns"] if floor else 0
            print(f"| {impl} | {r['per_second']:,.0f} | {r['p99_us']:.1f} | {cpu / 1e3:.1f} ({r['server_user_ns'] / 1e3:.1f} + "
                  f"{r['server_system_ns'] / 1e3:.1f}) | {ratio(cpu, floor_cpu)} | "
                  f"{ratio(r['per_second'], floor['per_second'] if floor else 0)} | {r['server_cpu_share'] * 100:.0f}% |")
        sys.stdout.flush()
        results["churn"].append({"transport": transport, "impls": cell})


def hold_idle(server, count):
    """Opens `count` idle connections (each echoed once); returns the loadgen process, holding them."""
    process = subprocess.Popen(["taskset", "-c", CLIENT_CPU, LOADGEN, *server.target(), "--mode", "idle",
                                "--connections", str(count), "--size", "64"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=raise_descriptor_limit)
    line = process.stdout.readline()
    if '"ready":true' not in line:
        process.kill()
        raise RuntimeError(f"loadgen idle against {server.impl}: {process.stderr.read().strip()}")
    return process


def release(process):
    process.stdin.close()
    process.wait(timeout=60)


def run_memory(args, impls, workdir, results):
    count = min(args.idle, raise_descriptor_limit() - 100)
    print(f"\nmemory per idle connection, TCP: the server's RSS growth over {count:,} idle connections (each echoed once)")
    print("| impl | RSS before | RSS with the connections | per connection | vs C | RSS after closing them |")
    print("|---|---|---|---|---|---|")
    cell = {}
    for impl in impls:
        server = Server(impl, "tcp", workdir)
        try:
            release(hold_idle(server, 100))     # warm-up: pools, first-connection allocations
            time.sleep(0.5)
            before = server.rss_kib()
            holder = hold_idle(server, count)
            time.sleep(0.5)
            loaded = server.rss_kib()
            release(holder)
            time.sleep(1.0)
            after = server.rss_kib()
        finally:
            server.stop()
        cell[impl] = {"before_kib": before, "loaded_kib": loaded, "after_kib": after, "connections": count,
                      "per_connection_bytes": (loaded - before) * 1024 / count}
    floor = cell.get("libuv_c")
    for impl, r in cell.items():
        print(f"| {impl} | {r['before_kib'] / 1024:.1f} MiB | {r['loaded_kib'] / 1024:.1f} MiB | "
              f"{r['per_connection_bytes'] / 1024:.2f} KiB | "
              f"{ratio(r['per_connection_bytes'], floor['per_connection_bytes'] if floor else 0)} | {r['after_kib'] / 1024:.1f} MiB |")
    sys.stdout.flush()
    results["memory"] = cell


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 s per cell after 0.5 s of warm-up, 1 repetition")
    parser.add_argument("--duration", type=float, help="measured seconds per cell (default 5; quick 2)")
    parser.add_argument("--warmup", type=float, help="warm-up seconds per cell (default 1; quick 0.5)")
    parser.add_argument("--reps", type=int, help="interleaved repetitions per cell, median shown (default 3; quick 1)")
    parser.add_argument("--impl", help="comma-separated impls (default all): " + ",".join(IMPLS))
    parser.add_argument("--only", default="echo,group,churn,memory", help="sections: echo,group,churn,memory")
    parser.add_argument("--transports", default="tcp,unix")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--idle", type=int, default=10000, help="idle connections for the memory section")
    parser.add_argument("--json", help="also write the results as JSON to this file")
    args = parser.parse_args()
    args.duration = args.duration or (2.0 if args.quick else 5.0)
    args.warmup = args.warmup if args.warmup is not None else (0.5 if args.quick else 1.0)
    args.reps = args.reps or (1 if args.quick else 3)
    args.transports = args.transports.split(",")
    args.sizes = [int(s) for s in args.sizes.split(",")]
    impls = args.impl.split(",") if args.impl else list(IMPLS)
    for impl in impls:
        if impl not in IMPLS:
            sys.exit(f"unknown impl {impl}; known: {', '.join(IMPLS)}")
    if "libuv_c" in impls:   # the floor first
        impls.remove("libuv_c")
        impls.insert(0, "libuv_c")
    sections = args.only.split(",")
    raise_descriptor_limit()
    print(f"servers pinned to CPU {SERVER_CPU}, loadgen to CPU {CLIENT_CPU}; {args.duration:g} s per cell after "
          f"{args.warmup:g} s warm-up, median of {args.reps}; load average {os.getloadavg()[0]:.2f}")
    results = {"echo": [], "group": [], "churn": [], "memory": {}, "settings": vars(args),
               "loadavg_start": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="uvloop-servers-") as workdir:
        if "echo" in sections:
            run_echo(args, impls, workdir, results)
            print_echo_summary(results["echo"])
        if "group" in sections:
            run_group(args, workdir, results)
        churn_impls = [i for i in impls if i in ("libuv_c", "uvloop", "uvloop_async", "nio", "python_uvloop", "node")]
        if "churn" in sections:
            run_churn(args, churn_impls, workdir, results)
        if "memory" in sections:
            run_memory(args, churn_impls, workdir, results)
    results["loadavg_end"] = os.getloadavg()
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
