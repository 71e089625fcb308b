#!/usr/bin/env python3
"""Whole-process figures of `hensuc check` (docs/performance.md): start-up and throughput.

    scripts/bench-check-process.py HENSUC [BASELINE_HENSUC] [--rounds N] [--gen GEN_WORKFLOW]

For each binary: wall time of `hensuc --version`, of `hensuc check` on one small example and on
generated 1 MB and 10 MB workflows (`gen-workflow` from crates/hensu-workload, seed 7). The runs
of all binaries are interleaved round by round, so a change of machine load hits them alike;
medians are printed, with the ratios the targets use: check example / --version, MB/s of the
10 MB check and the 10 MB time / the 1 MB time. The CPU time of each process (user + system,
`wait4`) and its peak RSS are printed too: the throughput target is on CPU time, which a busy
machine disturbs less than wall time. Use release builds (`cargo build --release -p
hensuc -p hensu-workload`). Not in CI: timings need a quiet machine.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "examples", "workflows", "content-pipeline.hwf")


def run(argv):
    """Wall time, CPU time (user + system) and peak RSS (KiB) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit("failed (exit %d): %s" % (code, " ".join(argv)))
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("hensuc", nargs="+", help="hensuc binaries (the first is reported as `new`)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--gen", default=os.path.join(REPO, "target", "release", "gen-workflow"))
    args = ap.parse_args()
    binaries = [os.path.abspath(b) for b in args.hensuc]
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="hensu-check-") as work:
        inputs = {}
        for mb in (1, 10):
            path = os.path.join(work, "w%d.hwf" % mb)
            subprocess.run([args.gen, path, str(mb * 1_000_000), "7"], check=True,
                           stdout=subprocess.DEVNULL)
            inputs[mb] = path
        cases = [("--version", ["--version"], None),
                 ("check example", ["check", EXAMPLE], None),
                 ("check 1 MB", ["check", inputs[1]], os.path.getsize(inputs[1])),
                 ("check 10 MB", ["check", inputs[10]], os.path.getsize(inputs[10]))]
        times = {(b, name): [] for b in binaries for name, _, _ in cases}
        cpu = {(b, name): [] for b in binaries for name, _, _ in cases}
        rss = {(b, name): [] for b in binaries for name, _, _ in cases}
        for _ in range(args.rounds):
            for name, argv, _ in cases:
                for b in binaries:
                    w, c, r = run([b] + argv)
                    times[(b, name)].append(w)
                    cpu[(b, name)].append(c)
                    rss[(b, name)].append(r)
    print("load average at end:   %.2f %.2f %.2f" % os.getloadavg())
    print("medians of %d interleaved rounds" % args.rounds)
    for b in binaries:
        med = {name: statistics.median(times[(b, name)]) for name, _, _ in cases}
        print("\n%s" % b)
        for name, _, size in cases:
            line = "  %-14s %9.2f ms (fastest %.2f)" % (
                name, med[name] * 1e3, min(times[(b, name)]) * 1e3)
            if size:
                line += "  %6.1f MB/s" % (size / med[name] / 1e6)
            print(line)
            c = cpu[(b, name)]
            line = "  %-14s %9.2f ms CPU (fastest %.2f), peak RSS %.1f MB" % (
                "", statistics.median(c) * 1e3, min(c) * 1e3,
                statistics.median(rss[(b, name)]) / 1024)
            if size:
                line += "  %6.1f MB/s CPU (fastest %.1f)" % (
                    size / statistics.median(c) / 1e6, size / min(c) / 1e6)
            print(line)
        print("  check example / --version: %.2fx" % (med["check example"] / med["--version"]))
        print("  10 MB time / 1 MB time:    %.2fx" % (med["check 10 MB"] / med["check 1 MB"]))


if __name__ == "__main__":
    main()
