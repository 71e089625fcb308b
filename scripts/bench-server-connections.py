#!/usr/bin/env python3
"""Idle and slow clients against `hensuc serve` (docs/server.md, *Connections and limits*),
for one or more binaries in one run:

    scripts/bench-server-connections.py NAME=HENSUC [NAME=HENSUC ...] [--idle N] [--slow N]
    scripts/bench-server-connections.py before=/tmp/old/hensuc now=target/debug/hensuc

For each binary, a server (`--stub`, dev mode, SQLite in a temporary directory) is started with
`ulimit -n 1024`, then:

* idle: N sockets (default 1,100) are opened and send nothing; every 5 s for 45 s a new client
  from another address (127.0.0.2) asks `/health` (4 s timeout) and the script counts the idle
  sockets the server still holds;
* header: N sockets (default 300) send a partial request head, then one byte every 2 s;
* body: N sockets send a full head of a POST with `Content-Length: 1000`, then one body byte
  every 2 s;

each slow mode for 40 s, with the same `/health` samples and counts. Prints one JSON line per
binary and mode: the `/health` latencies (null: no answer), and the sockets still open at each
sample. Not in CI: the figures depend on the machine's load.
"""

import http.client
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def start_server(hensuc, work):
    port_file = os.path.join(work, "log")
    log = open(port_file, "w")
    proc = subprocess.Popen(
        ["bash", "-c", 'ulimit -n 1024; exec "$0" serve --listen 127.0.0.1:0 --stub -d "$1" --store "$1/s.db"',
         hensuc, work],
        stderr=log, stdout=subprocess.DEVNULL)
    for _ in range(600):
        text = open(port_file).read()
        if "listening on http://" in text:
            url = text.split("listening on ")[1].split()[0]
            return proc, int(url.rsplit(":", 1)[1])
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{hensuc}: the server did not start:\n{open(port_file).read()}")


def health(port):
    """`/health` from another client address (127.0.0.2), as a bystander of the slow clients."""
    t = time.time()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=4, source_address=("127.0.0.2", 0))
        c.request("GET", "/health", headers={"Host": "localhost"})
        c.getresponse().read()
        c.close()
        return round(time.time() - t, 3)
    except Exception:
        return None


def still_open(socks, closed):
    """Sockets the server has not closed; what it sent (an error answer) is read and dropped."""
    for i, s in enumerate(socks):
        if i in closed:
            continue
        try:
            while True:
                if s.recv(65536) == b"":
                    closed.add(i)
                    break
        except BlockingIOError:
            pass
        except OSError:
            closed.add(i)
    return len(socks) - len(closed)


def run_mode(port, mode, n, seconds, drip_every):
    socks = []
    for _ in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            if mode == "header":
                s.send(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-a: ")
            elif mode == "body":
                s.send(b"POST /api/v1/executions HTTP/1.1\r\nHost: localhost\r\n"
                       b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
            s.setblocking(False)
            socks.append(s)
        except OSError:
            pass
    opened = len(socks)
    samples, t0, last_drip, closed = [], time.time(), time.time(), set()
    while time.time() - t0 < seconds:
        time.sleep(1)
        if mode != "idle" and time.time() - last_drip >= drip_every:
            last_drip = time.time()
            for s in socks:
                try:
                    s.send(b"a")
                except OSError:
                    pass
        if int(time.time() - t0) % 5 == 0:
            samples.append({"t": round(time.time() - t0), "health_s": health(port),
                            "still_open": still_open(socks, closed)})
    for s in socks:
        s.close()
    return {"mode": mode, "opened": opened, "samples": samples}


def main():
    args = sys.argv[1:]
    idle_n, slow_n = 1100, 300
    if "--idle" in args:
        i = args.index("--idle"); idle_n = int(args[i + 1]); del args[i:i + 2]
    if "--slow" in args:
        i = args.index("--slow"); slow_n = int(args[i + 1]); del args[i:i + 2]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, idle_n + 500)), hard))
    for spec in args:
        name, hensuc = spec.split("=", 1)
        for mode, n, seconds in [("idle", idle_n, 45), ("header", slow_n, 40), ("body", slow_n, 40)]:
            work = tempfile.mkdtemp()
            proc, port = start_server(hensuc, work)
            try:
                out = run_mode(port, mode, n, seconds, 2)
            finally:
                proc.kill()
                proc.wait()
                shutil.rmtree(work, ignore_errors=True)
            print(json.dumps({"binary": name, **out}), flush=True)


if __name__ == "__main__":
    main()
