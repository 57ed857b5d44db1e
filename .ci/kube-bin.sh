#!/usr/bin/env bash
# Builds the local control plane used by tests and the demo: etcd, kube-apiserver, kube-scheduler and
# kube-controller-manager, from the Go module proxy, into a cache folder outside git.
#
#   KUBE_VERSION   k8s.io/kubernetes version (minor must match the project's client-go)   default v1.34.4
#   ETCD_VERSION   go.etcd.io/etcd/server/v3 version                                       default v3.6.16
#   NW_KUBE_BIN    where the binaries go        default $HOME/.cache/nodewright/kube-$KUBE_VERSION
#
# Prints the binary folder on its last line. Re-running with the binaries present does nothing.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.34.4}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
OUT=${NW_KUBE_BIN:-${HOME}/.cache/nodewright/kube-${KUBE_VERSION}}
BINS=(etcd kube-apiserver kube-scheduler kube-controller-manager)

have_all() { for b in "${BINS[@]}"; do [ -x "$OUT/$b" ] || return 1; done; }
if have_all; then echo "$OUT"; exit 0; fi

mkdir -p "$OUT"
# One build at a time per folder: a second `make kube-bin` (another worktree, a test beside a demo) waits
# for the first and then finds the binaries, instead of compiling Kubernetes again beside it.
if command -v flock >/dev/null; then
  exec 9>"$OUT/.lock"
  flock 9
  if have_all; then echo "$OUT"; exit 0; fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0

# Kubernetes: its go.mod requires every staging module at v0.0.0 and replaces it with a local folder;
# a consumer must point each of them at the published v0.<minor>.<patch> instead.
staging=v0.${KUBE_VERSION#v1.}
mkdir -p "$work/kube" && cd "$work/kube"
go mod init nodewright.local/kube-bin >/dev/null 2>&1
modfile=$(go mod download -json "k8s.io/kubernetes@${KUBE_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
args=()
while read -r mod; do args+=("-replace=${mod}=${mod}@${staging}"); done < <(
  awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$modfile" | sort -u)
go mod edit "${args[@]}" "-require=k8s.io/kubernetes@${KUBE_VERSION}"
cat > tools.go <<GO
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
go mod tidy >/dev/null 2>&1 || true
for b in kube-apiserver kube-scheduler kube-controller-manager; do
  if [ ! -x "$OUT/$b" ]; then
    echo "building $b ${KUBE_VERSION} (cold: several minutes)" >&2
    go build -trimpath -ldflags='-s -w' -o "$OUT/$b.tmp" "k8s.io/kubernetes/cmd/$b"
    mv "$OUT/$b.tmp" "$OUT/$b"
  fi
done

# etcd: the server module's root package is the etcd binary.
if [ ! -x "$OUT/etcd" ]; then
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init nodewright.local/etcd-bin >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" >/dev/null 2>&1
  echo "building etcd ${ETCD_VERSION}" >&2
  go build -trimpath -ldflags='-s -w' -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$OUT/etcd.tmp" "$OUT/etcd"
fi
have_all
echo "$OUT"
