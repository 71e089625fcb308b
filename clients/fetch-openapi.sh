#!/usr/bin/env bash
# Usage: fetch-openapi.sh HENSUC OUT
# Writes the server's OpenAPI document to OUT. hensuc has no command that prints it, so this
# starts `HENSUC serve` on a free loopback port (dev mode, a throw-away store) and fetches
# GET /openapi.json; the document only depends on the binary, not on the store or project.
set -euo pipefail
hensuc=$1 out=$2
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
"$hensuc" serve --listen 127.0.0.1:0 --stub --store "$tmp/state.db" -d "$tmp" >"$tmp/log" 2>&1 &
pid=$!
url=
for _ in $(seq 100); do
    url=$(sed -n "s|.*hensu server listening on \(http:[^ ]*\).*|\1|p" "$tmp/log" | head -1)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "fetch-openapi: the server did not start" >&2; cat "$tmp/log" >&2; exit 1; }
# Pretty-printed with sorted keys so that a change to the document reads as a small diff.
curl -sf "$url/openapi.json" | python3 -c 'import json,sys; json.dump(json.load(sys.stdin), sys.stdout, indent=2, sort_keys=True, ensure_ascii=False); print()' >"$out"
