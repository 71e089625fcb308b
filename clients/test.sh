#!/usr/bin/env bash
# Usage: clients/test.sh HENSUC_BINARY
# The client libraries' gate (docs/clients.md): installs the pinned tools (pip from PyPI, npm ci
# from the npm registry), regenerates both clients from the binary's OpenAPI document and fails
# on any difference from the committed code, type-checks both, and runs both suites against a
# real `HENSUC serve` on 127.0.0.1 (the tests start their own servers; nothing else is reached).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 HENSUC_BINARY" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
HENSUC=$(realpath "$1")
export HENSUC
venv=${CLIENTS_VENV:-$here/python/.venv}

echo "== clients: Python tools (venv $venv)"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/python/requirements-dev.txt"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps -e "$here/python"

echo "== clients: npm ci"
(cd "$here/typescript" && npm ci --no-audit --no-fund --loglevel=error)

echo "== clients: regenerate from the OpenAPI document and compare"
bash "$here/python/generate.sh" "$HENSUC" "$venv/bin/python" >/dev/null
(cd "$here/typescript" && npm run -s generate)
# The generated files only; untracked ones count too (a new generated module must be committed).
generated=(openapi.json python/src/hensu_client/_generated typescript/src/schema.ts)
if [ -n "$(git -C "$here" status --porcelain --untracked-files=all -- "${generated[@]}")" ]; then
    git -C "$here" status --short -- "${generated[@]}" >&2
    git -C "$here" diff --stat -- "${generated[@]}" >&2
    echo "clients: the generated code differs from the committed code; run clients/python/generate.sh and npm run generate, and commit" >&2
    exit 1
fi

echo "== clients: type checks (mypy --strict, tsc --noEmit)"
(cd "$here/python" && "$venv/bin/mypy")
(cd "$here/typescript" && npx tsc -p tsconfig.json --noEmit)

echo "== clients: Python tests (pytest; contract tests with schemathesis)"
# Bounded: a generated request that never ends (a stream) must fail the gate, not stall CI.
(cd "$here/python" && timeout 900 "$venv/bin/python" -m pytest -q -p no:cacheprovider)

echo "== clients: TypeScript tests (node --test)"
(cd "$here/typescript" && timeout 600 npm test --silent)
