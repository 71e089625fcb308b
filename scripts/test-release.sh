#!/usr/bin/env bash
# Tests a release archive of scripts/release.sh as a user gets it (docs/install.md): the
# checksum file verifies, the archive holds the binary, manual pages, completions, unit files,
# README and its own SHA256SUMS, and the unpacked binary — run from a directory outside the
# repository — names its commit, checks an example project, runs a workflow offline, and (full
# build) serves: `hensuc health` and a push against `serve` on a free loopback port. A `-cli`
# archive must not have `serve`.
#
#   scripts/test-release.sh dist/hensuc-VERSION-TARGET[-cli].tar.gz
set -euo pipefail
archive="$(realpath "${1:?usage: scripts/test-release.sh ARCHIVE}")"
cd "$(dirname "$0")/.."
fail() { echo "test-release: FAIL: $*" >&2; exit 1; }
repo="$PWD"
work="$(mktemp -d)"
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

(cd "$(dirname "$archive")" && sha256sum --quiet -c "$(basename "$archive").sha256") || fail "checksum"
tar -xzf "$archive" -C "$work"
name="$(basename "$archive" .tar.gz)"
dir="$work/$name"
for f in bin/hensuc README.md SHA256SUMS share/man/man1/hensuc.1 share/man/man1/hensuc-run.1 \
    share/bash-completion/completions/hensuc share/zsh/site-functions/_hensuc \
    share/fish/vendor_completions.d/hensuc.fish share/hensu/hensu.service \
    share/hensu/hensu-worker.service share/hensu/hensu-mcp-connect.service share/hensu/Containerfile; do
    [ -s "$dir/$f" ] || fail "$f missing from the archive"
done
(cd "$dir" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS inside the archive"
[ "$(tar -tzvf "$archive" | awk '{print $2}' | sort -u)" = "0/0" ] || fail "entries not owned by 0/0"

cp -r examples "$work/project"
cd "$work"
hensuc="$dir/bin/hensuc"
version="$("$hensuc" --version)"
echo "$version"
case "$version" in
    "hensuc "*" (commit "[0-9a-f]*")") ;;
    *) fail "--version does not name a commit: $version" ;;
esac
expected="$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || true)"
[ -z "$expected" ] || [[ "$version" == *"$expected"* ]] || fail "--version is not HEAD ($expected)"

"$hensuc" check --deny-warnings -d project
"$hensuc" run project/workflows/content-pipeline.hwf -d project -c '{"topic": "releases"}' --no-store >/dev/null \
    || fail "an offline run"

if [[ "$name" == *-cli ]]; then
    if "$hensuc" serve --help >/dev/null 2>&1; then fail "the cli build has serve"; fi
    echo "release test ($name): 1 passed, 0 failed"
    exit 0
fi

"$hensuc" serve --listen 127.0.0.1:0 --stub -d project >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
    grep -q "listening on" "$work/serve.log" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log"; fail "serve exited"; }
    sleep 0.2
done
url="$(grep -o 'listening on http://[0-9.:]*' "$work/serve.log" | head -1 | sed 's/listening on //')"
[ -n "$url" ] || { cat "$work/serve.log"; fail "serve did not start"; }
"$hensuc" health --server "$url" | grep -q '"UP"' || fail "health"
"$hensuc" push project/workflows/greeting.hwf --server "$url" >/dev/null || fail "push"
"$hensuc" workflows --server "$url" | grep -q greeting || fail "the pushed workflow is not listed"
kill -TERM "$server_pid"
wait "$server_pid" || fail "serve did not stop cleanly on SIGTERM"
server_pid=""
echo "release test ($name): 1 passed, 0 failed"
