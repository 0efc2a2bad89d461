#!/bin/sh
# tools/image.sh BINARY CONTEXT_DIR TAG — build the lobes image (make image).
#
# Assembles CONTEXT_DIR from scratch: root/usr/bin/lobes (BINARY), every
# library `ldd BINARY` resolves and the dynamic loader, at their own paths,
# the CA bundle when this box has one (for https peers), and
# tools/image/Dockerfile; then `docker build` on the daemon at DOCKER_HOST
# (the tests' private dockerd, or this box's). The image is for this box's
# architecture: build it on an arm64 box for arm64 (docs/kubernetes.md).
set -eu
[ $# = 3 ] || { echo "usage: tools/image.sh BINARY CONTEXT_DIR TAG" >&2; exit 2; }
bin=$1 ctx=$2 tag=$3
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$bin" ] || { echo "tools/image.sh: '$bin' is not an executable" >&2; exit 3; }
rm -rf "$ctx"
mkdir -p "$ctx/root/usr/bin"
cp "$bin" "$ctx/root/usr/bin/lobes"
libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
if ldd "$bin" | grep -q "not found"; then
	echo "tools/image.sh: ldd cannot resolve every library of '$bin':" >&2
	ldd "$bin" | grep "not found" >&2
	exit 3
fi
for lib in $libs; do
	mkdir -p "$ctx/root$(dirname "$lib")"
	cp -L "$lib" "$ctx/root$lib"
done
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
	mkdir -p "$ctx/root/etc/ssl/certs"
	cp -L /etc/ssl/certs/ca-certificates.crt "$ctx/root/etc/ssl/certs/"
fi
cp "$here/image/Dockerfile" "$ctx/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx"
