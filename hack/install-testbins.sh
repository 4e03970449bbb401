#!/usr/bin/env bash
# install-testbins.sh builds the real kube-apiserver and etcd binaries that the
# integration tests (internal/testenv, test/) run, using only the Go module proxy.
#
# Usage:
#   hack/install-testbins.sh                 # build if needed; prints the directory
#   export FEDKIT_TESTBIN_DIR=$(hack/install-testbins.sh)
#   go test ./internal/testenv/ ./test/...
#
# The binaries go into a versioned cache directory outside the clone:
#   ${FEDKIT_TESTBIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fedkit/testbin/v1.37.2-etcdv3.6.16}
# The last line of stdout is that directory; progress goes to stderr.
#
# When both binaries and the stamp file (.complete) are there, the script returns at
# once. Otherwise it builds them (cold: 8-15 minutes and 2.4 GB of RAM on 2 cores;
# with a warm Go build cache, 15-30 seconds). Binaries are written
# under a temporary name and renamed, and the stamp is written last, so an
# interrupted build never looks complete. Concurrent runs are serialized with flock
# when it is available.
#
# Why the wrapper modules: k8s.io/kubernetes requires its staging modules
# (k8s.io/api, k8s.io/apiserver, ...) at v0.0.0 and replaces them with ./staging
# paths, so `go install k8s.io/kubernetes/cmd/kube-apiserver@v1.37.2` fails. A
# throw-away module that requires k8s.io/kubernetes and replaces each staging module
# with its published v0.37.2 release builds it. etcd's server module has replace
# directives too, so it also gets a wrapper module.
#
# Environment:
#   FEDKIT_TESTBIN_DIR  destination directory (default: the cache path above)
#   GO                  go command to use (default: go)
set -euo pipefail

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
STAGING_VERSION="v0.${K8S_VERSION#v1.}"  # v1.37.2 -> v0.37.2
K8S_MINOR="${K8S_VERSION#v1.}"
K8S_MINOR="${K8S_MINOR%%.*}"              # v1.37.2 -> 37
GO="${GO:-go}"

DEST="${FEDKIT_TESTBIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fedkit/testbin/${K8S_VERSION}-etcd${ETCD_VERSION}}"
STAMP="$DEST/.complete"
STAMP_WANT="kube-apiserver ${K8S_VERSION}
etcd ${ETCD_VERSION}"

log() { printf 'install-testbins: %s\n' "$*" >&2; }

complete() {
	[[ -x "$DEST/kube-apiserver" && -x "$DEST/etcd" && -f "$STAMP" ]] &&
		[[ "$(<"$STAMP")" == "$STAMP_WANT" ]]
}

if complete; then
	printf '%s\n' "$DEST"
	exit 0
fi

mkdir -p "$DEST"
if command -v flock >/dev/null 2>&1; then
	exec 9>"$DEST/.lock"
	if ! flock -n 9; then
		log "another install is running; waiting for the lock on $DEST/.lock"
		flock 9
	fi
	if complete; then # another run finished while we waited
		printf '%s\n' "$DEST"
		exit 0
	fi
fi

START=$SECONDS
WORK="$(mktemp -d "${TMPDIR:-/tmp}/fedkit-testbin.XXXXXX")"
cleanup() {
	rm -rf "$WORK"
	rm -f "$DEST/.kube-apiserver.tmp.$$" "$DEST/.etcd.tmp.$$" "$STAMP.tmp.$$"
}
trap cleanup EXIT

rm -f "$STAMP"
# Build in isolation from any go.work above the temp dir and with the local toolchain;
# CGO off gives static binaries like the official release builds.
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0

# --- etcd -------------------------------------------------------------------------
log "building etcd ${ETCD_VERSION} (about 2 minutes cold)"
mkdir -p "$WORK/etcd"
cat >"$WORK/etcd/go.mod" <<EOF
module fedkit.local/etcdbuild

go 1.26.0

require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}
EOF
cat >"$WORK/etcd/tools.go" <<'EOF'
//go:build tools

package etcdbuild

import _ "go.etcd.io/etcd/server/v3"
EOF
(
	cd "$WORK/etcd"
	"$GO" mod tidy >&2
	"$GO" build -trimpath -ldflags='-s -w' -o "$DEST/.etcd.tmp.$$" go.etcd.io/etcd/server/v3 >&2
)
mv -f "$DEST/.etcd.tmp.$$" "$DEST/etcd"
log "etcd done after $((SECONDS - START))s"

# --- kube-apiserver ---------------------------------------------------------------
log "reading k8s.io/kubernetes@${K8S_VERSION}'s go.mod"
KMOD="$("$GO" mod download -json "k8s.io/kubernetes@${K8S_VERSION}" |
	sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
if [[ -z "$KMOD" || ! -f "$KMOD" ]]; then
	log "could not find the go.mod of k8s.io/kubernetes@${K8S_VERSION}"
	exit 1
fi
# The go line of kubernetes' go.mod (e.g. "go 1.26.0"), and its godebug settings,
# which only take effect in the main module: the wrapper keeps both, so the binary
# runs with the same GODEBUG defaults as an official build.
KGO="$(awk '$1 == "go" { print $2; exit }' "$KMOD")"
KGODEBUG="$(awk '
	/^godebug[[:space:]]*\(/ { inblock = 1 }
	inblock || /^godebug[[:space:]]/ { print }
	inblock && /^\)/ { inblock = 0 }' "$KMOD")"
# Every module kubernetes replaces with a ./staging path, in single-line
# ("replace k8s.io/x => ./staging/...") or block form.
STAGING="$(awk '
	/^replace[[:space:]]*\(/ { inblock = 1; next }
	inblock && /^\)/         { inblock = 0; next }
	{
		line = $0
		if (!inblock) { if (line !~ /^replace[[:space:]]/) next; sub(/^replace[[:space:]]+/, "", line) }
		n = split(line, f, /[[:space:]]+/)
		for (i = 1; i <= n; i++) if (f[i] == "=>") break
		if (i < n && f[i+1] ~ /^\.\/staging\//) { m = f[1]; if (m == "") m = f[2]; print m }
	}' "$KMOD" | sort -u)"
if [[ -z "$STAGING" ]]; then
	log "found no ./staging replacements in $KMOD"
	exit 1
fi
log "replacing $(wc -l <<<"$STAGING" | tr -d ' ') staging modules with ${STAGING_VERSION}"

mkdir -p "$WORK/kas"
{
	printf 'module fedkit.local/kasbuild\n\ngo %s\n\n' "${KGO:-1.26.0}"
	[[ -z "$KGODEBUG" ]] || printf '%s\n\n' "$KGODEBUG"
	printf 'require k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
	while read -r m; do
		printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"
	done <<<"$STAGING"
	printf ')\n'
} >"$WORK/kas/go.mod"
cat >"$WORK/kas/tools.go" <<'EOF'
//go:build tools

package kasbuild

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
EOF

log "building kube-apiserver ${K8S_VERSION} (up to 12 minutes and 2.4 GB of RAM cold)"
V=k8s.io/component-base/version
CV=k8s.io/client-go/pkg/version
LDFLAGS="-s -w"
for pkg in "$V" "$CV"; do
	LDFLAGS+=" -X $pkg.gitVersion=${K8S_VERSION} -X $pkg.gitMajor=1 -X $pkg.gitMinor=${K8S_MINOR}"
	LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
(
	cd "$WORK/kas"
	"$GO" mod tidy >&2
	"$GO" build -trimpath -ldflags="$LDFLAGS" -o "$DEST/.kube-apiserver.tmp.$$" \
		k8s.io/kubernetes/cmd/kube-apiserver >&2
)
mv -f "$DEST/.kube-apiserver.tmp.$$" "$DEST/kube-apiserver"

printf '%s\n' "$STAMP_WANT" >"$STAMP.tmp.$$"
mv -f "$STAMP.tmp.$$" "$STAMP"
log "done after $((SECONDS - START))s: $DEST"
printf '%s\n' "$DEST"
