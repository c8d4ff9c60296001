#!/usr/bin/env bash
# Builds the container image from the Dockerfile with podman (from the
# locally made base and builder images: local-images.sh), starts it with a
# volume, and drives it with curl as an operator would: health, a pet, a
# newsletter subscription whose .eml lands in the volume, the health check,
# SIGHUP (it lives on), SIGTERM (it stops cleanly).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=deploy/container
# shellcheck source=deploy/container/podman.sh
. "$here/podman.sh"

eval "$("$here/local-images.sh")"
image=localhost/petstore-portfolio:test
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
started=$SECONDS
# docker format: OCI images have no HEALTHCHECK.
pod build --format docker --network host \
  --build-arg BASE_IMAGE="$BASE_IMAGE" --build-arg BUILDER_IMAGE="$BUILDER_IMAGE" \
  --build-arg BUILT_FROM_COMMIT="$commit" -t "$image" .
echo "image built in $((SECONDS - started)) s; size: $(podman image inspect --format '{{.Size}}' "$image" | numfmt --to=iec)"

data=$(mktemp -d /var/tmp/pp-container.XXXXXX)
chown 10001:10001 "$data"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
name="pp-test-$$"
cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
  rm -rf "$data"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*" >&2
  podman logs "$name" >&2 || true
  exit 1
}

pod run -d --name "$name" --network host \
  -v "$data:/var/lib/petstore-portfolio" \
  -e PETSTORE_PORTFOLIO_BIND="127.0.0.1:$port" \
  -e PETSTORE_PORTFOLIO_PUBLIC_URL="http://127.0.0.1:$port" \
  "$image" >/dev/null
base="http://127.0.0.1:$port"
for _ in $(seq 100); do
  curl -fsS "$base/api/health/ready" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "$base/api/health/ready" >/dev/null || fail "not ready"
echo "ready at $base"

podman exec "$name" petstore-portfolio --version | grep "(commit ${commit:0:12}, built " >/dev/null \
  || fail "--version does not name the commit ${commit:0:12}"
[ "$(podman exec "$name" id -u)" = 10001 ] || fail "the server runs as root"
podman exec "$name" petstore-portfolio healthcheck >/dev/null || fail "healthcheck"
podman healthcheck run "$name" >/dev/null || fail "the image's HEALTHCHECK"

pet=$(curl -fsS -X POST "$base/v2/pet" -H 'Content-Type: application/json' \
  -d '{"name": "Rex", "photoUrls": [], "status": "available"}')
id=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["id"])' "$pet")
curl -fsS "$base/v2/pet/$id" | grep '"name":"Rex"' >/dev/null || fail "the pet is not read back"
echo "pet $id added and read back"

curl -fsS -X POST "$base/api/newsletter" -H 'Content-Type: application/json' \
  -d '{"email": "reader@example.com"}' >/dev/null || fail "subscription refused"
for _ in $(seq 100); do
  grep -qs "reader@example.com" "$data"/outbox/*.eml && break
  sleep 0.2
done
eml=$(grep -ls "reader@example.com" "$data"/outbox/*.eml | head -n1) || fail "no .eml in the volume"
grep -q "multipart/alternative" "$eml" || fail "the email is not multipart"
echo "newsletter email written to the volume: ${eml#"$data"/}"

podman kill --signal HUP "$name" >/dev/null
sleep 1
curl -fsS "$base/api/health" >/dev/null || fail "not alive after SIGHUP"
podman logs "$name" 2>&1 | grep "SIGHUP" >/dev/null || fail "SIGHUP left no log line"
echo "SIGHUP: reloaded, still serving"

podman stop --time 30 "$name" >/dev/null
status=$(podman inspect --format '{{.State.ExitCode}}' "$name")
[ "$status" = 0 ] || fail "exit code $status after SIGTERM"
echo "stopped cleanly by SIGTERM; container image test passed"
