#!/usr/bin/env python3
"""Per-step cost of the durable store for several `hensuc` binaries, interleaved in one run
(docs/performance.md, *Durable-run figures*):

    scripts/bench-store-compare.py SIZES ROUNDS NAME=HENSUC [NAME=HENSUC ...]
    scripts/bench-store-compare.py 20000,1000 11 before=/tmp/old/hensuc now=target/release/hensuc

For each size, `scripts/stub-chain.sh N shared` is run with `hensuc run --stub --quiet`, with
the SQLite store and with `--no-store`, once per round and binary, binaries alternating. Prints
the store run minus the `--no-store` run per step: CPU time of the process (user + system) as
the minimum and the median of the rounds, and wall time as the median.

Environment: SHAPE=per-node runs `stub-chain.sh N per-node` (every node's output under its own
id, so the context grows to N entries) instead of `shared`; STORE_URL=postgres://… runs the
store runs on that PostgreSQL (each in a fresh schema, `psql` creates it) instead of SQLite —
on PostgreSQL the server's CPU is not in the CPU figures, so read the wall figures there.
"""

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPE = os.environ.get("SHAPE", "shared")
STORE_URL = os.environ.get("STORE_URL")


def store_env():
    """The environment of a store run: HENSU_DATABASE_URL on a fresh schema with STORE_URL."""
    if not STORE_URL:
        return None
    import uuid

    schema = "bench_" + uuid.uuid4().hex[:12]
    subprocess.run(["psql", STORE_URL, "-qc", f"CREATE SCHEMA {schema}"], check=True)
    sep = "&" if "?" in STORE_URL else "?"
    url = f"{STORE_URL}{sep}options=-c%20search_path%3D{schema}"
    return dict(os.environ, HENSU_DATABASE_URL=url)


def timed(argv, env=None):
    """(CPU seconds, wall seconds) of one child process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {p.returncode}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return cpu, t1 - t0


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sizes = [int(x) for x in sys.argv[1].split(",")]
    rounds = int(sys.argv[2])
    bins = dict(a.split("=", 1) for a in sys.argv[3:])
    work = tempfile.mkdtemp()
    try:
        print("load average", os.getloadavg(), "shape", SHAPE, "store", "PostgreSQL" if STORE_URL else "SQLite")
        for n in sizes:
            chain = f"{work}/chain{n}.hwf"
            with open(chain, "w") as f:
                f.write(
                    subprocess.run(
                        [f"{HERE}/stub-chain.sh", str(n), SHAPE],
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                )
            runs = {k: {"store": [], "none": []} for k in bins}
            for _ in range(rounds):
                for name, hensuc in bins.items():
                    d = f"{work}/{name}"
                    shutil.rmtree(d, ignore_errors=True)
                    os.makedirs(d)
                    base = [hensuc, "run", chain, "--stub", "--quiet", "-d", d]
                    runs[name]["none"].append(timed(base + ["--no-store"]))
                    runs[name]["store"].append(timed(base, store_env()))
            for name in bins:
                store, none = runs[name]["store"], runs[name]["none"]
                per = lambda a, b: (a - b) * 1e6 / n  # noqa: E731
                cpu_min = per(min(c for c, _ in store), min(c for c, _ in none))
                cpu_med = per(
                    statistics.median(c for c, _ in store),
                    statistics.median(c for c, _ in none),
                )
                wall_med = per(
                    statistics.median(w for _, w in store),
                    statistics.median(w for _, w in none),
                )
                print(
                    f"{n:7d} {name:10s} CPU min {cpu_min:7.1f} µs/step  "
                    f"CPU median {cpu_med:7.1f} µs/step  wall median {wall_med:7.1f} µs/step"
                )
        print("load average", os.getloadavg())
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
