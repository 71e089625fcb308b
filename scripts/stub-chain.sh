#!/usr/bin/env bash
# Writes a workflow that is a chain of N stub-agent nodes (then an end node) to stdout.
#   scripts/stub-chain.sh N [shared|per-node]
# `shared` (the default): every node writes the same context key `out`, so the context stays
# one entry whatever N is (the shape of a long-running loop). `per-node`: every node's output
# lands under its own id, so the context grows to N entries.
set -euo pipefail
n=${1:?usage: stub-chain.sh N [shared|per-node]}
shape=${2:-shared}
printf 'fun chain() = workflow("chain") {\n    agents {\n        agent("a") { role = "W"; model = Models.GPT_4O }\n    }\n    config {\n        maxSteps = %d\n    }\n    graph {\n        start at "n0"\n' "$((n + 10))"
awk -v n="$n" -v shape="$shape" 'BEGIN {
    for (i = 0; i < n; i++) {
        next_node = (i + 1 == n) ? "done" : "n" (i + 1)
        writes = (shape == "shared") ? "            writes(\"out\")\n" : ""
        printf "        node(\"n%d\") {\n            agent = \"a\"\n            prompt = \"step %d\"\n%s            onSuccess goto \"%s\"\n        }\n", i, i, writes, next_node
    }
}'
printf '        end("done")\n    }\n}\n'
