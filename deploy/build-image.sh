#!/usr/bin/env bash
# Builds the container image of deploy/Containerfile from a hensuc binary (docs/deploy.md,
# *Container image*): lays out the build context — the binary, the shared libraries ldd finds
# for it and the dynamic loader, /etc/passwd and /etc/group with the non-root user 65532 — and
# runs podman build in the Docker format (which keeps HEALTHCHECK; OCI drops it).
#
#   deploy/build-image.sh [BINARY] [TAG]        # defaults: target/release/hensuc, hensu:latest
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="${1:-target/release/hensuc}"
tag="${2:-hensu:latest}"
[ -x "$binary" ] || { echo "build-image: no executable at $binary (cargo build --release -p hensuc)" >&2; exit 2; }
command -v podman >/dev/null || { echo "build-image: podman is not installed" >&2; exit 2; }

ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
root="$ctx/rootfs"
mkdir -p "$root/usr/local/bin" "$root/etc" "$root/srv/hensu" "$root/var/lib" "$ctx/state"
install -m 0755 "$binary" "$root/usr/local/bin/hensuc"

# Every library the binary links, at the path the loader looks for it, and the loader itself
# (the `=> /path` entries and the absolute interpreter line of ldd's output).
ldd "$binary" | awk '/=> \// { print $3 } /^[[:space:]]*\// { print $1 }' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:hensu:/var/lib/hensu:/sbin/nologin
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
nonroot:x:65532:
GROUP
# Host names from /etc/hosts (the runtime mounts it), then DNS; both are built into glibc.
printf 'hosts: files dns\npasswd: files\ngroup: files\n' >"$root/etc/nsswitch.conf"

cp "$here/Containerfile" "$ctx/Containerfile"
podman build --quiet --format docker --file "$ctx/Containerfile" --tag "$tag" "$ctx"
