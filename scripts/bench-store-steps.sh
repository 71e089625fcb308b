#!/usr/bin/env bash
# Per-step cost of the durable store: `hensuc run --stub` on stub chains of 1,000 / 2,000 /
# 20,000 steps with the SQLite store against `--no-store` (docs/performance.md, *Durable-run figures*).
#   scripts/bench-store-steps.sh HENSUC [SHAPE] [SIZES…]
# Prints, per size: wall seconds with the store, without, and µs per step over --no-store.
set -euo pipefail
hensuc=${1:?usage: bench-store-steps.sh HENSUC [shared|per-node] [SIZES…]}
shape=${2:-shared}
shift $(( $# >= 2 ? 2 : 1 ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 2000 20000)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
printf '%8s %10s %10s %12s\n' steps store_s nostore_s us_per_step
for n in "${sizes[@]}"; do
    "$here/stub-chain.sh" "$n" "$shape" > "$work/c$n.hwf"
    rm -rf "$work/p" && mkdir -p "$work/p"
    t0=$(now); "$hensuc" run "$work/c$n.hwf" --stub --quiet --no-store -d "$work/p" > /dev/null 2>&1; t1=$(now)
    "$hensuc" run "$work/c$n.hwf" --stub --quiet -d "$work/p" > /dev/null 2>&1; t2=$(now)
    awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
        ns = b - a; s = c - b
        printf "%8d %10.3f %10.3f %12.1f\n", n, s, ns, (s - ns) * 1e6 / n
    }'
done
