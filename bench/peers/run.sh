#!/usr/bin/env bash
# hensu vs LangGraph on the same workloads, in one run (bench/peers/README.md). Not in CI: it
# installs LangGraph from PyPI into a virtualenv.
#   bench/peers/run.sh [HENSUC] [-- peers.py options]
# HENSUC defaults to target/release/hensuc (build it with `cargo build --release -p hensuc`).
# The virtualenv lives in $PEERS_VENV (default bench/peers/.venv) and is reused between runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
hensuc=${1:-$root/target/release/hensuc}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
[ -x "$hensuc" ] || { echo "no hensuc binary at $hensuc (cargo build --release -p hensuc)" >&2; exit 2; }
venv=${PEERS_VENV:-$here/.venv}
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" -m pip freeze 2>/dev/null | grep -qx 'langgraph==1.2.24'; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
fi
exec "$venv/bin/python" "$here/peers.py" --hensuc "$hensuc" "$@"
