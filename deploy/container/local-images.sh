#!/usr/bin/env bash
# Makes, on a machine that reaches no container registry, the two images the
# Dockerfile's build arguments name: a Debian base (BASE_IMAGE) from
# Debian's own mirror with debootstrap, and a builder (BUILDER_IMAGE) that is
# that base with gcc and this machine's Rust toolchain, cargo-chef and
# added certificate authorities copied in. Each is made once and kept in podman's storage; run again, it only
# says they are there.
#
#   deploy/container/local-images.sh            # prints the two names
#
# Needs: podman, runc, debootstrap (Debian packages), root, rustc, cargo-chef.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=deploy/container/podman.sh
. "$here/podman.sh"

base=localhost/debian:bookworm
rust_version=$(rustc --version | cut -d' ' -f2)
chef_version=$(cargo-chef --version | cut -d' ' -f2)
builder="localhost/petstore-portfolio-builder:rust-$rust_version-chef-$chef_version"

if ! pod image exists "$base"; then
  # The mirror the machine's apt uses.
  mirror=$(grep -hoE '^URIs: *http[^ ]*debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | sed 's/^URIs: *//')
  mirror=${mirror:-http://deb.debian.org/debian}
  root=$(mktemp -d /var/tmp/bookworm-root.XXXXXX)
  echo "making $base with debootstrap from $mirror" >&2
  debootstrap --variant=minbase bookworm "$root" "$mirror" >&2
  tar -C "$root" -c . | pod import - "$base" >&2
  rm -rf "$root"
fi

if ! pod image exists "$builder"; then
  context=$(mktemp -d /var/tmp/builder-context.XXXXXX)
  sysroot=$(rustc --print sysroot)
  mkdir -p "$context/rust/bin"
  cp "$sysroot/bin/cargo" "$sysroot/bin/rustc" "$context/rust/bin/"
  cp "$(command -v cargo-chef)" "$context/rust/bin/"
  cp -a "$sysroot/lib" "$context/rust/lib"
  # The certificate authorities this machine adds to Debian's (an egress
  # proxy's): cargo in the builder fetches crates through it.
  mkdir -p "$context/ca"
  cp /usr/local/share/ca-certificates/*.crt "$context/ca/" 2>/dev/null || true
  cat > "$context/Containerfile" <<CONTAINERFILE
FROM $base
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev ca-certificates \\
 && rm -rf /var/lib/apt/lists/*
COPY ca /usr/local/share/ca-certificates
RUN update-ca-certificates
COPY rust /usr/local/rust
ENV PATH=/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    CARGO_HOME=/usr/local/cargo
CONTAINERFILE
  echo "making $builder" >&2
  pod build --network host -t "$builder" "$context" >&2
  rm -rf "$context"
fi

echo "BASE_IMAGE=$base"
echo "BUILDER_IMAGE=$builder"
