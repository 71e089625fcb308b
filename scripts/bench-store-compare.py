#!/usr/bin/env python3
"""Per-step cost of the durable store for several `hensuc` binaries, interleaved in one run
(docs/performance.md, *Durable-run figures*):

    scripts/bench-store-compare.py SIZES ROUNDS NAME=HENSUC [NAME=HENSUC ...]
    scripts/bench-store-compare.py 20000,1000 11 before=/tmp/old/hensuc now=target/release/hensuc

For each size, `scripts/stub-chain.sh N shared` is run with `hensuc run --stub --quiet`, with
the SQLite store and with `--no-store`, once per round and binary, binaries alternating. Prints
the store run minus the `--no-store` run per step: CPU time of the process (user + system) as
the minimum and the median of the rounds, and wall time as the median.
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


def timed(argv):
    """(CPU seconds, wall seconds) of one child process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
        print("load average", os.getloadavg())
        for n in sizes:
            chain = f"{work}/chain{n}.hwf"
            with open(chain, "w") as f:
                f.write(
                    subprocess.run(
                        [f"{HERE}/stub-chain.sh", str(n), "shared"],
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
                    runs[name]["store"].append(timed(base))
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
