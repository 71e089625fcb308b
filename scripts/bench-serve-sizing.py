#!/usr/bin/env python3
"""Sizing figures of one `hensuc serve` on SQLite (docs/deploy.md, *Sizing*):

    scripts/bench-serve-sizing.py HENSUC [--runs N] [--clients K]

Starts the server (`--stub`, dev mode, SQLite in a temporary directory, the 2-node stub
workflow `linear` of the server's test fixtures pushed with `hensuc push`), then reports its
resident memory idle, the time K client threads take to start N executions over HTTP and until
all of them completed, the start latencies (p50, p99), the peak resident memory (VmHWM), and the
store's size afterwards. One JSON line. Not in CI: the figures depend on the machine's load.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

FIXTURE = "crates/hensu-server/tests/server/fixtures/linear.hwf"


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def request(url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read() or b"null")


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    hensuc = os.path.abspath(args[0])
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 400
    clients = int(args[args.index("--clients") + 1]) if "--clients" in args else 8
    tmp = tempfile.mkdtemp()
    try:
        os.makedirs(f"{tmp}/workflows")
        shutil.copy(FIXTURE, f"{tmp}/workflows/linear.hwf")
        server = subprocess.Popen(
            [hensuc, "serve", "--listen", "127.0.0.1:0", "--stub", "-d", tmp],
            stderr=subprocess.PIPE, text=True)
        url = None
        for line in server.stderr:
            if "listening on " in line:
                url = line.split("listening on ")[1].split()[0]
                break
        threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
        subprocess.run([hensuc, "push", f"{tmp}/workflows/linear.hwf", "--server", url],
                       check=True, stdout=subprocess.DEVNULL)
        time.sleep(2)
        idle_rss = status_kb(server.pid, "VmRSS")
        latencies, ids, lock = [], [], threading.Lock()

        def client(n):
            for _ in range(n):
                t = time.perf_counter()
                answer = request(f"{url}/api/v1/executions",
                                 {"workflowId": "linear", "context": {"topic": "sizing"}})
                with lock:
                    latencies.append(time.perf_counter() - t)
                    ids.append(answer["executionId"])

        start = time.perf_counter()
        threads = [threading.Thread(target=client, args=(runs // clients,)) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        started = time.perf_counter() - start
        pending = set(ids)
        while pending:
            for i in list(pending):
                if request(f"{url}/api/v1/executions/{i}")["status"] in ("completed", "failed"):
                    pending.discard(i)
            time.sleep(0.05)
        done = time.perf_counter() - start
        latencies.sort()
        peak = status_kb(server.pid, "VmHWM")
        server.terminate()
        server.wait(timeout=30)
        print(json.dumps({
            "binary": hensuc, "executions": len(ids), "clients": clients,
            "idle_rss_mb": round(idle_rss / 1024, 1), "peak_rss_mb": round(peak / 1024, 1),
            "started_s": round(started, 2), "completed_s": round(done, 2),
            "executions_per_s": round(len(ids) / done, 1),
            "start_p50_ms": round(latencies[len(latencies) // 2] * 1000, 1),
            "start_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 1),
            "store_mb": round(os.path.getsize(f"{tmp}/.hensu/state.db") / 1e6, 2),
        }))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
