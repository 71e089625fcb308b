#!/usr/bin/env bash
# The Neovim recipe end to end: a real `nvim --headless` loads editors/neovim/hensu.lua exactly as
# a user's init.lua would, opens a workflow with a misspelt node, and must get E0204 from
# `hensuc lsp` plus a hover. Run by .ci/run; needs `nvim` and a built `hensuc` (argument 1).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
hensuc="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project/workflows" "$work/bin" "$work/home"
ln -s "$hensuc" "$work/bin/hensuc"
sed 's/goto "done"/goto "dnoe"/' "$here/../../examples/workflows/greeting.hwf" > "$work/project/workflows/greeting.hwf"
cat > "$work/init.lua" <<LUA
dofile('$here/hensu.lua')
LUA
cd "$work/project"
HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" \
  XDG_STATE_HOME="$work/home/.local/state" PATH="$work/bin:$PATH" HENSU_PROBE_OUT="$work/probe.out" \
  timeout 120 nvim --headless -u "$work/init.lua" -c "luafile $here/probe.lua" workflows/greeting.hwf >/dev/null 2>&1
echo "nvim $(nvim --version | head -1)"
cat "$work/probe.out"
grep -q '^filetype: hwf$' "$work/probe.out"
grep -q 'E0204 unknown node `dnoe`' "$work/probe.out"
grep -q '^hover: .*agent.*greeter' "$work/probe.out"
echo "neovim recipe OK"
