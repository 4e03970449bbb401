#!/usr/bin/env bash
# dev-clusters.sh starts a federation host and two member clusters on this machine: one etcd
# and one kube-apiserver per cluster on 127.0.0.1, the same real binaries the integration tests
# run (hack/install-testbins.sh builds them, once). It writes a kubeconfig with one context per
# cluster (dev-clusters.kubeconfig in the current directory by default; it holds an admin token
# of these throw-away servers), prints where, and runs until Ctrl-C, which stops every process.
#
# Usage:
#   hack/dev-clusters.sh [-kubeconfig FILE] [-clusters host,member1,member2]
#   go run ./examples/realclusters -kubeconfig dev-clusters.kubeconfig \
#       -host-context host -contexts member1,member2 -install-crds -demo
# or README.md's "Deploy" section: kubectl apply -k config/default, then
# fedkit-controller-manager run from the shell (no pods start here), kubectl fed join.
#
# Only the API runs (no controller-manager, scheduler or kubelet): CRDs, RBAC and admission
# work, but no pods start. Good for trying the control plane, not for running workloads.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
GO="${GO:-go}"
FEDKIT_TESTBIN_DIR="$("$root/hack/install-testbins.sh" | tail -n 1)"
export FEDKIT_TESTBIN_DIR
bin="${XDG_CACHE_HOME:-$HOME/.cache}/fedkit/devclusters"
(cd "$root" && "$GO" build -o "$bin" ./hack/devclusters)
# exec: signals reach the program, which stops the servers it started.
exec "$bin" "$@"
