#!/usr/bin/env bash
# Tests the container image of deploy/Containerfile as far as this machine allows (docs/deploy.md,
# *Container image*). podman builds, creates and exports images here but cannot start a container,
# so the test
#   1. builds the image from BINARY (deploy/build-image.sh);
#   2. checks its configuration with podman inspect: non-root user, entrypoint, exposed port,
#      state volume, HEALTHCHECK running `hensuc health`;
#   3. exports its file system and runs the image's own entrypoint and command in it — chrooted,
#      as the image's user, with the root file system mounted read-only and only the state volume
#      writable: `hensuc check` of an example project, then `serve` (the image's CMD with a free
#      port on 127.0.0.1), probed by the image's HEALTHCHECK command and through the API (a push
#      with a JWT, written to the SQLite store in the volume); SIGTERM stops it cleanly.
#
#   deploy/test-image.sh BINARY            (as root: chroot and mounts; CI runs as root)
set -euo pipefail
binary="$(realpath "${1:?usage: deploy/test-image.sh BINARY}")"
cd "$(dirname "$0")/.."
tag="localhost/hensu:image-test"
fail() { echo "test-image: FAIL: $*" >&2; exit 1; }

deploy/build-image.sh "$binary" "$tag" >/dev/null
work="$(mktemp -d)"
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
    podman rmi -f "$tag" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "-- image configuration (podman inspect)"
podman inspect "$tag" >"$work/inspect.json"
python3 - "$work/inspect.json" >"$work/config.env" <<'PY'
import json, shlex, sys
image = json.load(open(sys.argv[1]))[0]
config = image["Config"]
health = image.get("Healthcheck") or {}
def need(ok, what):
    if not ok:
        sys.exit(f"test-image: FAIL: {what}: {json.dumps(config)}")
need(config.get("User") == "65532:65532", "runs as the non-root user 65532")
need(config.get("Entrypoint") == ["/usr/local/bin/hensuc"], "entrypoint is hensuc")
need(list(config.get("ExposedPorts", {})) == ["8080/tcp"], "exposes 8080/tcp")
need(list(config.get("Volumes", {})) == ["/var/lib/hensu"], "the state volume")
cmd = config.get("Cmd") or []
need(cmd[:1] == ["serve"] and "--listen" in cmd, "the command serves")
need(health.get("Test") == ["CMD", "/usr/local/bin/hensuc", "health"], "HEALTHCHECK is hensuc health")
print("ENTRYPOINT=" + shlex.quote(" ".join(config["Entrypoint"])))
print("CMD=(" + " ".join(shlex.quote(c) for c in cmd) + ")")
print("HEALTH=(" + " ".join(shlex.quote(c) for c in health["Test"][1:]) + ")")
print("IMAGE_USER=" + config["User"])
print("IMAGE_ENV=(" + " ".join(shlex.quote(e) for e in config.get("Env", [])) + ")")
PY
# shellcheck disable=SC1091
. "$work/config.env"
echo "user $IMAGE_USER, entrypoint $ENTRYPOINT, command ${CMD[*]}, health ${HEALTH[*]}"

echo "-- exported file system"
root="$work/rootfs"
mkdir -p "$root"
cid="$(podman create "$tag")"
# -o: to a file (its stdout is not always written when it is not a terminal).
podman export -o "$work/rootfs.tar" "$cid"
tar -x -C "$root" -f "$work/rootfs.tar"
rm "$work/rootfs.tar"
podman rm "$cid" >/dev/null 2>&1 || true
[ ! -e "$root/bin/sh" ] && [ ! -e "$root/usr/bin/env" ] || fail "the image has a shell"
echo "$(find "$root" -type f | wc -l) files, $(du -sh "$root" | cut -f1)"

# The project and the state volume, as `podman run -v` would mount them.
cp -r examples "$work/project"
mkdir -p "$work/state"
chown 65532:65532 "$work/state"

# Runs `[VAR=value ...] -- COMMAND ...` in the image: a private mount namespace, the exported root
# re-mounted read-only, the project read-only at /srv/hensu, the state volume writable at
# /var/lib/hensu, then chroot as the image's user, with the image's environment and the given
# variables only (env -i).
in_image_exec() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    # The image's PATH (in IMAGE_ENV) holds the host's unshare, mount and chroot too.
    exec env -i "${IMAGE_ENV[@]}" "${envs[@]}" unshare --mount --propagation private -- sh -ec '
        root="$1"; project="$2"; state="$3"; user="$4"; shift 4
        mount --bind "$root" "$root"
        mount --bind "$project" "$root/srv/hensu"
        mount -o remount,bind,ro "$root/srv/hensu"
        mount --bind "$state" "$root/var/lib/hensu"
        mount -o remount,bind,ro "$root"
        exec chroot --userspec="$user" "$root" "$@"
    ' in_image "$root" "$work/project" "$work/state" "$IMAGE_USER" "$@"
}
# In a subshell (the exec replaces it); `in_image_exec … &` makes $! the server itself.
in_image() { (in_image_exec "$@"); }

echo "-- hensuc check in the image (read-only root)"
in_image -- "$ENTRYPOINT" --version
in_image -- "$ENTRYPOINT" check --deny-warnings -d /srv/hensu /srv/hensu/workflows/content-pipeline.hwf
if in_image -- "$ENTRYPOINT" check -d /srv/hensu /srv/hensu/no-such.hwf 2>/dev/null; then
    fail "check of a missing file passed"
fi

echo "-- hensuc serve in the image (its CMD on a free loopback port, JWT mode)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
args=()
prev=""
for a in "${CMD[@]}"; do
    if [ "$prev" = "--listen" ]; then a="127.0.0.1:$port"; fi
    args+=("$a"); prev="$a"
done
secret="image-test-secret-0123456789abcdef0123456789"
in_image_exec HENSU_JWT_SECRET="$secret" -- "$ENTRYPOINT" "${args[@]}" >"$work/serve.log" 2>&1 &
server_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
    grep -q "listening on" "$work/serve.log" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log"; fail "serve exited"; }
    sleep 0.2
done
grep -q "listening on" "$work/serve.log" || { cat "$work/serve.log"; fail "serve did not start"; }

# The image's HEALTHCHECK command, run in the image (HENSU_SERVER names the test's port).
out="$(in_image HENSU_SERVER="$url" -- "${HEALTH[@]}")" \
    || fail "the HEALTHCHECK command failed"
[ "$out" = '{"status":"UP"}' ] || fail "health answered $out"
echo "HEALTHCHECK: $out"
code="$(python3 -c 'import sys,urllib.request; print(urllib.request.urlopen(sys.argv[1]).status)' "$url/ready")"
[ "$code" = 200 ] || fail "/ready answered $code"

# A push through the API with an HS256 token: the server writes its SQLite store in the volume.
token="$(python3 - "$secret" <<'PY'
import base64, hashlib, hmac, json, sys, time
b = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode() if isinstance(d, dict) else d).rstrip(b"=")
head = b({"alg": "HS256", "typ": "JWT"}) + b"." + b({"sub": "ci", "tenant_id": "image-test", "exp": int(time.time()) + 600})
print((head + b"." + b(hmac.new(sys.argv[1].encode(), head, hashlib.sha256).digest())).decode())
PY
)"
HENSU_TOKEN="$token" "$binary" push examples/workflows/greeting.hwf --server "$url" \
    || { cat "$work/serve.log"; fail "push to the image's server"; }
listed="$(HENSU_TOKEN="$token" "$binary" workflows --server "$url")"
echo "$listed" | grep -q greeting || fail "pushed workflow not listed: $listed"
[ -s "$work/state/state.db" ] || fail "no store in the state volume"
[ "$(stat -c %u "$work/state/state.db")" = 65532 ] || fail "the store is not the image user's"

kill -TERM "$server_pid"
wait "$server_pid" && rc=0 || rc=$?
server_pid=""
[ "$rc" = 0 ] || { cat "$work/serve.log"; fail "serve exited $rc after SIGTERM"; }
echo "image test: 1 passed, 0 failed"
