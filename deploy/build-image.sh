#!/usr/bin/env bash
# Builds servebench's container image from deploy/Containerfile with buildah (or podman):
# a static binary from this checkout on no base image, so nothing is pulled from a registry.
#
#   deploy/build-image.sh                                  # localhost/servebench:dev
#   IMAGE=registry.example/servebench:v1 deploy/build-image.sh && buildah push registry.example/servebench:v1
#
# Environment: IMAGE (the tag), VERSION (servebench --version; default from git describe),
# BUILDER (buildah or podman), GOARCH (the image's architecture; default the host's).
# Where overlay storage is not available (a container, no fuse), STORAGE_DRIVER=vfs.
set -euo pipefail
cd "$(dirname "$0")/.."

image=${IMAGE:-localhost/servebench:dev}
builder=${BUILDER:-buildah}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
arch=${GOARCH:-$(go env GOARCH)}

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath \
    -ldflags "-s -w -X servebench/internal/cli.Version=$version" \
    -o "$ctx/servebench" ./cmd/servebench
cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
mkdir -p "$ctx/rootfs/tmp" "$ctx/workdir"
chmod 1777 "$ctx/rootfs/tmp"

case "$builder" in
buildah) "$builder" bud --arch "$arch" --os linux -f deploy/Containerfile -t "$image" "$ctx" ;;
*) "$builder" build --arch "$arch" --os linux -f deploy/Containerfile -t "$image" "$ctx" ;;
esac
echo "built $image (servebench $version, linux/$arch)"
