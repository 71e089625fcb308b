#!/usr/bin/env python3
"""First-event latency of the tenant stream (docs/server.md, *Events*) over a long history, for
one or more binaries in one run:

    scripts/bench-tenant-stream.py NAME=HENSUC [NAME=HENSUC ...] [--runs N] [--subscribers K,K]
                                   [--streams-per-tenant N]
    scripts/bench-tenant-stream.py main=/tmp/hensuc-main now=target/release/hensuc

One SQLite store is seeded once, with the first binary: N executions (default 10,000) of the
2-node stub workflow `linear` started over HTTP (dev mode, `--stub`) and run to the end. Then,
for each binary, on a copy of that store: a server is started, K clients open the tenant
stream (`GET /api/v1/executions/events`) and at once one execution is started: the time from
the start request until each client shows it (30 s at most) is the first-event latency of a
new subscriber; then the server's CPU use over 5 s of nothing happening; then the same latency
for a second execution (streams settled). Then all of it again with one more client that opens
the stream and never reads. Prints one JSON line per binary and case: the latencies' median
and maximum (null: not every client within 30 s), the idle CPU use (% of one core), the RSS.
More than 32 subscribers need `--streams-per-tenant N` (the server's default cap of a tenant's
streams is 32; the option writes `[server.limits] max_streams_per_tenant` into the project's
hensu.toml, which builds older than the connection limits refuse — run those without it).
Not in CI: the figures depend on the machine's load.
"""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKFLOW = os.path.join(ROOT, "crates/hensu-server/tests/server/fixtures/linear.json")
WAIT = 30.0
IDLE = 5.0


# The `[server.limits]` lines of the servers' hensu.toml (`--streams-per-tenant`), if any.
LIMITS = None


def start_server(hensuc, work):
    if LIMITS:
        with open(os.path.join(work, "hensu.toml"), "w") as f:
            f.write(LIMITS)
    log_path = os.path.join(work, "log")
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [hensuc, "serve", "--listen", "127.0.0.1:0", "--stub", "-d", work, "--store",
         os.path.join(work, "s.db")],
        stderr=log, stdout=subprocess.DEVNULL)
    for _ in range(600):
        text = open(log_path).read()
        if "listening on http://" in text:
            url = text.split("listening on ")[1].split()[0]
            return proc, int(url.rsplit(":", 1)[1])
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{hensuc}: the server did not start:\n{open(log_path).read()}")


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def request(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    c.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data) if data else None


def seed(hensuc, work, runs):
    proc, port = start_server(hensuc, work)
    try:
        with open(WORKFLOW) as f:
            status, body = request(port, "POST", "/api/v1/workflows", json.load(f))
        assert status in (200, 201), (status, body)
        done = [0]
        lock = threading.Lock()

        def worker(n):
            for _ in range(n):
                s, b = request(port, "POST", "/api/v1/executions",
                               {"workflowId": "linear", "context": {"topic": "x"}})
                assert s == 202, (s, b)
                with lock:
                    done[0] += 1

        threads = [threading.Thread(target=worker, args=(runs // 8 + (i < runs % 8),))
                   for i in range(8)]
        t = time.time()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        while True:
            _, page = request(port, "GET", "/api/v1/executions?status=running&limit=1")
            if not page:
                break
            time.sleep(0.5)
        print(json.dumps({"seeded": done[0], "seconds": round(time.time() - t, 1)}), flush=True)
    finally:
        stop(proc)


def open_stream(port, read_head=True):
    """A tenant stream; with `read_head`, once its response head is back (the stream is
    open on the server), with what came after the head."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /api/v1/executions/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
              .encode())
    buf = b""
    s.settimeout(WAIT)
    while read_head and b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return s, buf.partition(b"\r\n\r\n")[2]


class Reader(threading.Thread):
    """Reads one stream until it closes; records when each execution id is first seen."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.sock, self.buf = stream
        self.seen = {}
        self.lock = threading.Lock()

    def run(self):
        self.sock.settimeout(None)
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            now = time.time()
            with self.lock:
                self.buf += chunk
                for part in self.buf.split(b'"executionId":"')[1:]:
                    self.seen.setdefault(part.split(b'"', 1)[0].decode(), now)
                # Keep the tail only (an id may span two chunks).
                self.buf = self.buf[-200:]

    def first(self, execution_id):
        with self.lock:
            return self.seen.get(execution_id)


def latencies(port, readers):
    """Starts one execution; the delay until each reader shows it (None: not within 30 s)."""
    t0 = time.time()
    status, body = request(port, "POST", "/api/v1/executions",
                           {"workflowId": "linear", "context": {"topic": "x"}})
    assert status == 202, (status, body)
    run = body["executionId"]
    while time.time() - t0 < WAIT and any(r.first(run) is None for r in readers):
        time.sleep(0.001)
    got = sorted(r.first(run) - t0 for r in readers if r.first(run) is not None)
    return {
        "got_event": len(got),
        "ms_median": round(got[len(got) // 2] * 1000, 1) if got else None,
        "ms_max": round(got[-1] * 1000, 1) if len(got) == len(readers) else None,
    }


def cpu_seconds(pid):
    """User + system CPU time of the process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None


def case(name, hensuc, seeded, subscribers, stalled):
    work = tempfile.mkdtemp(prefix="hensu-tenant-stream-")
    for f in os.listdir(seeded):
        if f.startswith("s.db"):
            shutil.copy(os.path.join(seeded, f), work)
    proc, port = start_server(hensuc, work)
    try:
        stall = open_stream(port, read_head=False)[0] if stalled else None
        socks = [open_stream(port) for _ in range(subscribers)]
        readers = [Reader(st) for st in socks]
        for r in readers:
            r.start()
        first = latencies(port, readers)
        # What the open streams cost while nothing happens (main re-lists every 500 ms).
        c0 = cpu_seconds(proc.pid)
        time.sleep(IDLE)
        idle_cpu = round((cpu_seconds(proc.pid) - c0) / IDLE * 100, 1)
        steady = latencies(port, readers)
        print(json.dumps({
            "binary": name, "subscribers": subscribers, "stalled_client": stalled,
            "first_event_after_open": first, "idle_cpu_percent": idle_cpu,
            "event_when_settled": steady, "rss_mb": rss_mb(proc.pid),
        }), flush=True)
        for s, _ in socks:
            s.close()
        if stall:
            stall.close()
    finally:
        stop(proc)
        shutil.rmtree(work, ignore_errors=True)


def main():
    args = sys.argv[1:]
    runs, subs = 10_000, [1, 20]
    bins = []
    i = 0
    while i < len(args):
        if args[i] == "--runs":
            runs = int(args[i + 1])
            i += 2
        elif args[i] == "--streams-per-tenant":
            global LIMITS
            LIMITS = f"[server.limits]\nmax_streams_per_tenant = {int(args[i + 1])}\n"
            i += 2
        elif args[i] == "--subscribers":
            subs = [int(x) for x in args[i + 1].split(",")]
            i += 2
        else:
            name, _, path = args[i].partition("=")
            bins.append((name, os.path.abspath(path)))
            i += 1
    if not bins:
        raise SystemExit(__doc__)
    seeded = tempfile.mkdtemp(prefix="hensu-tenant-seed-")
    try:
        seed(bins[0][1], seeded, runs)
        for k in subs:
            for name, path in bins:
                case(name, path, seeded, k, False)
        for name, path in bins:
            case(name, path, seeded, max(subs), True)
    finally:
        shutil.rmtree(seeded, ignore_errors=True)


if __name__ == "__main__":
    main()
