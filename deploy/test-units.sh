#!/usr/bin/env bash
# Checks the systemd units of deploy/ (docs/deploy.md, *systemd*): `systemd-analyze verify`
# (syntax, known options, the command exists — the unit's /usr/local/bin/hensuc is pointed at
# HENSUC) and `systemd-analyze security --offline` (the sandbox's exposure, at most 2.0 of 10).
# Starting them needs a running systemd, which CI's machine does not have; the server's
# behaviour under SIGTERM (KillSignal) is tested in crates/hensuc/tests/cli/serve_shutdown.rs.
#
#   deploy/test-units.sh HENSUC
set -euo pipefail
hensuc="$(realpath "${1:?usage: deploy/test-units.sh HENSUC}")"
cd "$(dirname "$0")"
command -v systemd-analyze >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for unit in hensu.service hensu-worker.service hensu-mcp-connect.service; do
    sed "s#/usr/local/bin/hensuc#$hensuc#g" "$unit" >"$work/$unit"
    systemd-analyze verify "$work/$unit"
    exposure="$(systemd-analyze security --offline=true --threshold=20 "$work/$unit" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')"
    echo "$unit: verified, exposure $exposure"
done
echo "units test: 3 passed, 0 failed"
