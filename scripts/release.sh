#!/usr/bin/env bash
# Builds a release of hensuc (docs/install.md, *Release archives*): the release binary and an
# archive dist/hensuc-VERSION-TARGET[-cli].tar.gz holding
#   bin/hensuc                          the binary (`hensuc --version` names the commit)
#   share/man/man1/hensuc*.1            manual pages (`hensuc man --out`)
#   share/bash-completion/completions/hensuc, share/zsh/site-functions/_hensuc,
#   share/fish/vendor_completions.d/hensuc.fish
#   share/hensu/hensu.service, hensu-worker.service, hensu-mcp-connect.service, Containerfile, build-image.sh (deploy/)
#   README.md, LICENSE (when the repository has one), SHA256SUMS (of every file above)
# and beside it the archive's checksum (.sha256, `sha256sum -c` format). The archive is
# reproducible: entries sorted, owner 0, every mtime the commit's time, gzip without a name.
#
#   scripts/release.sh             # the full build (server, console, MCP gateway)
#   scripts/release.sh --cli       # --no-default-features --features cli: no server stack
#   OUT=DIR scripts/release.sh     # another output directory (default dist/)
set -euo pipefail
cd "$(dirname "$0")/.."

variant=""
features=()
case "${1:-}" in
    "") ;;
    --cli) variant="-cli"; features=(--no-default-features --features cli) ;;
    *) echo "usage: scripts/release.sh [--cli]" >&2; exit 2 ;;
esac
out="${OUT:-dist}"
target_dir="${CARGO_TARGET_DIR:-target}"

if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    echo "release: warning: the work tree has uncommitted changes; --version names HEAD" >&2
fi

cargo build --release --locked -p hensuc "${features[@]}"
binary="$target_dir/release/hensuc"
version_line="$("$binary" --version)"              # hensuc 0.1.0 (commit 0123456789ab)
version="$(echo "$version_line" | awk '{print $2}')"
target="$(rustc -vV | sed -n 's/^host: //p')"
name="hensuc-$version-$target$variant"
echo "release: $version_line, $target"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
    "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d" "$root/share/hensu"
install -m 0755 "$binary" "$root/bin/hensuc"
"$root/bin/hensuc" man --out "$root/share/man/man1" >/dev/null
"$root/bin/hensuc" completions bash >"$root/share/bash-completion/completions/hensuc"
"$root/bin/hensuc" completions zsh >"$root/share/zsh/site-functions/_hensuc"
"$root/bin/hensuc" completions fish >"$root/share/fish/vendor_completions.d/hensuc.fish"
cp deploy/hensu.service deploy/hensu-worker.service deploy/hensu-mcp-connect.service deploy/Containerfile deploy/build-image.sh "$root/share/hensu/"
cp README.md "$root/"
shopt -s nullglob
licenses=(LICENSE* COPYING*)
shopt -u nullglob
if [ "${#licenses[@]}" -gt 0 ]; then
    cp "${licenses[@]}" "$root/"
else
    echo "release: warning: the repository has no LICENSE file; the archive has none" >&2
fi
(cd "$root" && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | sed 's#^\./##' | xargs sha256sum >SHA256SUMS)

epoch="$(git log -1 --format=%ct 2>/dev/null || date +%s)"
mkdir -p "$out"
archive="$out/$name.tar.gz"
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
    --mode='u+rwX,go+rX,go-w' -C "$stage" -cf - "$name" | gzip -n -9 >"$archive"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "release: $archive ($(stat -c %s "$archive") bytes; binary $(stat -c %s "$binary") bytes)"
cat "$out/$name.tar.gz.sha256"
