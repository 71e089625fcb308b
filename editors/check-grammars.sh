#!/usr/bin/env bash
# Regenerates/validates the editor grammars and runs their test suites.
#
#   1. VS Code: npm ci (skipped when node_modules matches package-lock.json), the generator's
#      staleness check (grammar/keywords.toml → TextMate grammar + tree-sitter highlight
#      queries), the TextMate snapshot/assertion tests and the client tests (node --test; the
#      client test spawns target/debug/hensuc, built here).
#   2. tree-sitter: `tree-sitter generate` into a scratch copy and compare with the committed
#      src/ (stale → fail), corpus tests, every highlight/locals query compiles, and every
#      example workflow and syntax fixture parses without ERROR or MISSING nodes.
#
# Needs node >= 20 with npm, a C compiler, and the tree-sitter CLI on PATH:
#   command -v tree-sitter >/dev/null || cargo install tree-sitter-cli --locked --version 0.27.1
# Idempotent; leaves the work tree unchanged (build outputs go to a temp dir or gitignored paths).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VSCODE="$ROOT/editors/vscode"
TS="$ROOT/grammar/tree-sitter-hwf"
TS_VERSION_WANTED="0.27.1"

fail() { echo "check-grammars: $*" >&2; exit 1; }

command -v node >/dev/null || fail "node not found (Node 20+ needed)"
command -v npm >/dev/null || fail "npm not found"
command -v tree-sitter >/dev/null ||
  fail "tree-sitter CLI not found: cargo install tree-sitter-cli --locked --version $TS_VERSION_WANTED"

# Fixtures both grammars must handle.
shopt -s nullglob
FIXTURES=("$ROOT"/examples/workflows/*.hwf "$ROOT"/examples/workflows/*.kt "$ROOT"/tests/fixtures/syntax/ok/*.hwf "$ROOT"/tests/fixtures/highlight/*.hwf)
shopt -u nullglob

# ------------------------------------------------------------------------- VS Code
echo "== editors/vscode: npm ci"
cd "$VSCODE"
stamp="node_modules/.hwf-lock-stamp"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "node_modules up to date"
else
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi

echo "== editors/vscode: generated grammars are up to date with grammar/keywords.toml"
node scripts/gen-grammar.mjs --check

echo "== editors/vscode: TextMate grammar and client tests"
# server-spawn.test.mjs starts the real hensuc through the real vscode-languageclient.
(cd "$ROOT" && cargo build --locked -q -p hensuc)
HENSUC="$ROOT/target/debug/hensuc" node --test test/

# ----------------------------------------------------------------------- tree-sitter
echo "== grammar/tree-sitter-hwf: generated parser is up to date"
cd "$TS"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp -r grammar.js tree-sitter.json package.json src "$scratch/"
(cd "$scratch" && tree-sitter generate >/dev/null)
for f in parser.c grammar.json node-types.json tree_sitter/parser.h; do
  cmp -s "src/$f" "$scratch/src/$f" ||
    fail "grammar/tree-sitter-hwf/src/$f is stale: run \`tree-sitter generate\` in grammar/tree-sitter-hwf and commit src/"
done

echo "== grammar/tree-sitter-hwf: corpus tests"
# Build the parser once into a scratch libdir so the work tree stays clean.
export TREE_SITTER_LIBDIR="$scratch/lib"
mkdir -p "$TREE_SITTER_LIBDIR"
tree-sitter test

echo "== grammar/tree-sitter-hwf: queries compile"
probe="${FIXTURES[0]:-}"
[[ -n "$probe" ]] || fail "no fixture found"
for q in queries/*.scm queries/helix/*.scm zed/languages/hwf/*.scm; do
  tree-sitter query "$q" "$probe" >/dev/null 2>"$scratch/query.err" ||
    { cat "$scratch/query.err" >&2; fail "query $q does not compile"; }
done

echo "== grammar/tree-sitter-hwf: every example and syntax fixture parses without ERROR/MISSING"
bad=0
for f in "${FIXTURES[@]}"; do
  if ! out="$(tree-sitter parse --quiet "$f" 2>&1)"; then
    echo "$out"
    bad=$((bad + 1))
  fi
done
# `parse --quiet` exits 0 on MISSING nodes: look for both kinds with a query as well.
printf '(ERROR) @error\n(MISSING) @missing\n' >"$scratch/errors.scm"
tree-sitter query "$scratch/errors.scm" "${FIXTURES[@]}" >"$scratch/errors.out" 2>/dev/null
if grep -q "capture:" "$scratch/errors.out"; then
  awk '/^[^ ]/ {file=$0} /capture:/ {print file ": " $0}' "$scratch/errors.out" >&2
  bad=$((bad + $(awk '/^[^ ]/ {file=$0} /capture:/ {print file}' "$scratch/errors.out" | sort -u | wc -l)))
fi
echo "parsed ${#FIXTURES[@]} files, $bad with ERROR/MISSING nodes"
[[ $bad -eq 0 ]] || fail "$bad file(s) parse with ERROR or MISSING nodes"

echo "== grammar/tree-sitter-hwf: files with syntax errors parse without crash or hang"
shopt -s nullglob
for f in "$ROOT"/tests/fixtures/syntax/err/*.hwf; do
  rc=0
  timeout 20 tree-sitter parse --quiet "$f" >/dev/null 2>&1 || rc=$?
  [[ $rc -le 1 ]] || fail "tree-sitter parse crashed or hung on $f (exit $rc)"
done
shopt -u nullglob
echo "${#FIXTURES[@]} passed, 0 failed"

echo "check-grammars: OK"
