#!/usr/bin/env bash
# Follows docs/deploy.md's reverse-proxy recipe as far as one machine allows: deploy/nginx-hensu.conf,
# its upstream pointed at a `hensuc serve` on 127.0.0.1 and a self-signed certificate, checked
# with `nginx -t`, then used: /health over TLS, a workflow started through the proxy and its
# event stream (SSE) followed through it to `execution.completed` (proxy_buffering off), and
# the web console's page. Installs nginx, openssl and curl from Debian when missing.
#
#   deploy/test-proxy.sh HENSUC
set -euo pipefail
hensuc="$(realpath "${1:?usage: deploy/test-proxy.sh HENSUC}")"
cd "$(dirname "$0")/.."
fail() { echo "test-proxy: FAIL: $*" >&2; exit 1; }
need=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v openssl >/dev/null || need+=(openssl)
command -v curl >/dev/null || need+=(curl)
if ((${#need[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

cp -r examples "$work/project"
"$hensuc" serve --listen 127.0.0.1:0 --stub -d "$work/project" >"$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$work/serve.log" && break; sleep 0.2; done
upstream="$(grep -o 'listening on http://[0-9.:]*' "$work/serve.log" | head -1 | sed 's#listening on http://##')"
[ -n "$upstream" ] || { cat "$work/serve.log"; fail "serve did not start"; }

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
port="$(free_port)"
# The documented server block with this machine's upstream, port, name and certificate.
python3 - deploy/nginx-hensu.conf "$work/hensu.conf" "$upstream" "$port" "$work" <<'PY'
import re, sys
src, dst, upstream, port, work = sys.argv[1:]
text = open(src).read()
text = re.sub(r"upstream hensu \{.*?\n\}", "upstream hensu {\n    server %s;\n    keepalive 32;\n}" % upstream, text, flags=re.S)
text = text.replace("listen 443 ssl", f"listen 127.0.0.1:{port} ssl").replace("hensu.example.com", "localhost")
text = text.replace("/etc/ssl/hensu/fullchain.pem", f"{work}/cert.pem").replace("/etc/ssl/hensu/privkey.pem", f"{work}/key.pem")
open(dst, "w").write(text)
PY
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    include $work/hensu.conf;
}
CONF
"$nginx_bin" -t -c "$work/nginx.conf" -p "$work" 2>&1 | tail -1
"$nginx_bin" -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
pids+=($!)
base="https://localhost:$port"
curl_tls() { curl -sS --cacert "$work/cert.pem" "$@"; }
for _ in $(seq 1 50); do curl_tls -o /dev/null "$base/health" 2>/dev/null && break; sleep 0.2; done
[ "$(curl_tls "$base/health")" = '{"status":"UP"}' ] || fail "/health through the proxy"
[ "$(curl_tls -o /dev/null -w '%{http_code}' "$base/metrics")" = 404 ] || fail "/metrics is not public"
curl -sS "http://$upstream/metrics" | grep -q '^hensu_queue_depth ' || fail "/metrics on the replica"

"$hensuc" push examples/workflows/greeting.hwf --server "http://$upstream" >/dev/null
id="$(curl_tls -H 'Content-Type: application/json' -d '{"workflowId": "greeting", "context": {"name": "proxy"}}' \
    "$base/api/v1/executions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["executionId"])')"
# The stream ends after the execution's end event; --max-time only bounds a broken proxy.
curl_tls -N --max-time 60 "$base/api/v1/executions/$id/events" >"$work/events.txt" || true
grep -q '^event: execution.completed' "$work/events.txt" || { cat "$work/events.txt"; fail "no execution.completed through the proxy"; }
curl_tls -L -o /dev/null -w '%{http_code}' "$base/" | grep -q 200 || fail "the console through the proxy"
echo "proxy test: 1 passed, 0 failed"
