#!/usr/bin/env python3
"""Queueing rate of the batch start route (docs/server.md, *Batch starts*) against the same
number of single starts, on one server (`--clients N`: the single starts sent by N concurrent
clients, each on its own connection, as many API users would):

    scripts/bench-batch-start.py HENSUC [--runs 2000] [--batch 500] [--clients 1] [--store URL]
    scripts/pg-test.sh sh -c 'scripts/bench-batch-start.py target/release/hensuc --store "$HENSU_TEST_DATABASE_URL"'

A dev-mode server (`--stub`) with the 2-node stub workflow `linear`; the runs queued are run by
the server's own workers meanwhile, as in production. Prints one JSON line per way of starting:
runs, seconds, runs/s (requests' wall time only). On PostgreSQL each way gets a fresh schema.
Not in CI: the figures depend on the machine's load.
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKFLOW = os.path.join(ROOT, "crates/hensu-server/tests/server/fixtures/linear.json")


def start_server(hensuc, work, store):
    log_path = os.path.join(work, "log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [hensuc, "serve", "--listen", "127.0.0.1:0", "--stub", "-d", work, "--store", store],
            stderr=log, stdout=subprocess.DEVNULL)
    for _ in range(600):
        text = open(log_path).read()
        if "listening on http://" in text:
            return proc, int(text.split("listening on ")[1].split()[0].rsplit(":", 1)[1])
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the server did not start:\n{open(log_path).read()}")


def request(conn, method, path, body):
    conn.request(method, path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    return r.status, json.loads(data) if data else None


def store_for(base, work, way):
    if base is None:
        return os.path.join(work, f"{way}.db")
    schema = f"b_{uuid.uuid4().hex[:12]}"
    subprocess.run(["psql", base, "-qc", f"CREATE SCHEMA {schema}"], check=True)
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-c%20search_path%3D{schema}"


def single_starts(port, contexts):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for c in contexts:
        status, body = request(conn, "POST", "/api/v1/executions",
                               {"workflowId": "linear", "context": c})
        assert status == 202, (status, body)


def measure(hensuc, base, runs, batch, clients, way):
    work = tempfile.mkdtemp()
    proc, port = start_server(hensuc, work, store_for(base, work, way))
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        with open(WORKFLOW) as f:
            status, body = request(conn, "POST", "/api/v1/workflows", json.load(f))
        assert status in (200, 201), (status, body)
        contexts = [{"topic": f"t{i}"} for i in range(runs)]
        t = time.perf_counter()
        if way == "batch":
            for i in range(0, runs, batch):
                status, body = request(conn, "POST", "/api/v1/executions/batch",
                                       {"workflowId": "linear", "contexts": contexts[i:i + batch]})
                assert status == 202, (status, body)
        else:
            with concurrent.futures.ThreadPoolExecutor(clients) as pool:
                for f in [pool.submit(single_starts, port, contexts[i::clients])
                          for i in range(clients)]:
                    f.result()
        seconds = time.perf_counter() - t
        print(json.dumps({"way": way, "store": "postgres" if base else "sqlite", "runs": runs,
                          "batch": batch if way == "batch" else 1,
                          "clients": 1 if way == "batch" else clients, "seconds": round(seconds, 3),
                          "runs_per_s": round(runs / seconds, 1)}), flush=True)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("hensuc")
    p.add_argument("--runs", type=int, default=2000)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--clients", type=int, default=1, help="concurrent clients of single starts")
    p.add_argument("--store", default=None, help="a PostgreSQL URL (default: SQLite)")
    a = p.parse_args()
    for way in ("single", "batch"):
        measure(os.path.abspath(a.hensuc), a.store, a.runs, a.batch, a.clients, way)


if __name__ == "__main__":
    main()
