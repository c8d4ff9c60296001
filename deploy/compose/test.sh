#!/usr/bin/env bash
# Starts deploy/compose.yaml with podman-compose and drives it through its
# proxy: both replicas ready, a pet written through one replica read
# through the other (one PostgreSQL), a newsletter subscription's email in
# the SMTP catcher's log. This machine reaches no registry, so each
# official image is stood in for by one made from Debian's packages
# (deploy/compose/standins/), and the server's image is the one
# deploy/container/test.sh built.
#
#   deploy/compose/test.sh PODMAN_COMPOSE
set -euo pipefail
compose_bin=$1
cd "$(dirname "$0")/../.."
# shellcheck source=deploy/container/podman.sh
. deploy/container/podman.sh
eval "$(deploy/container/local-images.sh)"

# podman as podman-compose calls it, set as `pod` sets it, with room for
# HAProxy's connections (it wants twice its maxconn in files; this
# sandbox's own limit is 20,000).
conf=$(mktemp /var/tmp/pp-containers.XXXXXX.conf)
cat > "$conf" <<CONF
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=1024:1024"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
export CONTAINERS_CONF=$conf

for standin in postgres redis haproxy mail; do
  image="localhost/petstore-portfolio-standin-$standin:1"
  if ! podman image exists "$image"; then
    pod build --network host --build-arg BASE_IMAGE="$BASE_IMAGE" -t "$image" \
      -f "deploy/compose/standins/$standin.Containerfile" deploy/compose/standins
  fi
done
export SERVER_IMAGE=localhost/petstore-portfolio:test
podman image exists "$SERVER_IMAGE" || { echo "run deploy/container/test.sh first" >&2; exit 1; }
export POSTGRES_IMAGE=localhost/petstore-portfolio-standin-postgres:1
export REDIS_IMAGE=localhost/petstore-portfolio-standin-redis:1
export HAPROXY_IMAGE=localhost/petstore-portfolio-standin-haproxy:1
export MAIL_IMAGE=localhost/petstore-portfolio-standin-mail:1
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
HTTP_PORT=$(free_port)
MAIL_UI_PORT=$(free_port)
POSTGRES_PASSWORD=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
export HTTP_PORT MAIL_UI_PORT POSTGRES_PASSWORD
project="pp-compose-$$"
compose() { "$compose_bin" --project-name "$project" -f deploy/compose.yaml "$@"; }
cleanup() {
  compose down --volumes >/dev/null 2>&1 || true
  rm -f "$conf"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*" >&2
  for service in app1 app2 proxy postgres mail; do
    echo "--- $service" >&2
    podman logs --tail 20 "${project}_${service}_1" >&2 2>&1 || true
  done
  exit 1
}

compose up -d --no-build >/dev/null
base="http://127.0.0.1:$HTTP_PORT"
# A replica that starts before PostgreSQL takes connections stops, and is
# started again (restart: unless-stopped); HAProxy finds it again by name.
deadline=$((SECONDS + 180))
until curl -fsS "$base/api/health/ready" >/dev/null 2>&1 || [ "$SECONDS" -ge "$deadline" ]; do
  sleep 0.5
done
curl -fsS "$base/api/health/ready" >/dev/null || fail "the proxy has no ready replica"
for replica in app1 app2; do
  deadline=$((SECONDS + 120))
  until podman exec "${project}_${replica}_1" petstore-portfolio healthcheck >/dev/null 2>&1 \
    || [ "$SECONDS" -ge "$deadline" ]; do
    sleep 0.5
  done
  podman exec "${project}_${replica}_1" petstore-portfolio healthcheck >/dev/null \
    || fail "$replica is not ready"
done
echo "both replicas ready behind the proxy at $base"

# Round robin: the write goes to one replica, and reads go on until each
# replica has answered one (a replica HAProxy took out while it started
# comes back after two good checks).
pet=$(curl -fsS -X POST "$base/v2/pet" -H 'Content-Type: application/json' \
  -d '{"name": "Compose", "photoUrls": []}')
id=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["id"])' "$pet")
answered() {
  podman logs "${project}_$1_1" 2>&1 | grep '"route":"/v2/pet/{petId}"' >/dev/null
}
deadline=$((SECONDS + 60))
until { answered app1 && answered app2; } || [ "$SECONDS" -ge "$deadline" ]; do
  curl -fsS "$base/v2/pet/$id" | grep '"name":"Compose"' >/dev/null || fail "pet $id not read back"
  sleep 0.2
done
answered app1 || fail "app1 answered none of the reads"
answered app2 || fail "app2 answered none of the reads"
echo "pet $id written and read back through both replicas"

curl -fsS -X POST "$base/api/newsletter" -H 'Content-Type: application/json' \
  -d '{"email": "compose-reader@example.com"}' >/dev/null || fail "subscription refused"
for _ in $(seq 150); do
  podman logs "${project}_mail_1" 2>&1 | grep "compose-reader@example.com" >/dev/null && break
  sleep 0.2
done
podman logs "${project}_mail_1" 2>&1 | grep "compose-reader@example.com" >/dev/null \
  || fail "the email did not reach the SMTP catcher"
echo "the subscription's email reached the SMTP catcher; compose test passed"
