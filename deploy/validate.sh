#!/usr/bin/env bash
# Checks the deployment kits without running them: the systemd unit with
# `systemd-analyze verify` (and its exposure score), the Kubernetes
# manifests against Kubernetes' schemas (kubernetes-validate --strict), the
# configuration file of the ConfigMap and the compose file's server
# settings as the server reads them, and the compose file with
# podman-compose.
#
#   deploy/validate.sh SERVER_BINARY TOOLS_BIN   # TOOLS_BIN: kubernetes-validate, podman-compose
set -euo pipefail
binary=$(realpath "$1")
tools=$2
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "-- systemd unit"
# `verify` checks that ExecStart's program exists: this build's binary.
sed "s|/usr/local/bin/petstore-portfolio|$binary|g" deploy/systemd/petstore-portfolio.service \
  > "$work/petstore-portfolio.service"
systemd-analyze verify "$work/petstore-portfolio.service"
systemd-analyze security --offline=true "$work/petstore-portfolio.service" | tail -n 1

echo "-- Kubernetes manifests"
"$tools/kubernetes-validate" --strict --quiet \
  deploy/kubernetes/configmap.yaml deploy/kubernetes/secret.yaml \
  deploy/kubernetes/deployment.yaml deploy/kubernetes/service.yaml \
  deploy/kubernetes/poddisruptionbudget.yaml
# Every file kustomization.yaml names exists, and every manifest is named.
python3 - <<'PY'
import pathlib, sys
folder = pathlib.Path("deploy/kubernetes")
named, listing = set(), False
for line in (folder / "kustomization.yaml").read_text().splitlines():
    if line.startswith("resources:"):
        listing = True
    elif listing and line.startswith("  - "):
        named.add(line[4:].strip())
    elif listing and not line.startswith(" "):
        listing = False
present = {p.name for p in folder.glob("*.yaml")} - {"kustomization.yaml"}
if named != present:
    sys.exit(f"kustomization.yaml names {sorted(named)}, the folder has {sorted(present)}")
PY
# The ConfigMap's configuration file is one the server takes.
"$tools/python" -c '
import sys, yaml
config = yaml.safe_load(open("deploy/kubernetes/configmap.yaml"))["data"]["config.toml"]
open(sys.argv[1], "w").write(config)
' "$work/config.toml"
env -u PETSTORE_PORTFOLIO_CONFIG "$binary" --config "$work/config.toml" config-schema >/dev/null

echo "-- compose file"
"$tools/podman-compose" -f deploy/compose.yaml config > "$work/compose.yaml"
# The server's settings in it are ones the server takes.
"$tools/python" - "$work/compose.yaml" "$binary" <<'PY'
import os, subprocess, sys, yaml
compose = yaml.safe_load(open(sys.argv[1]))
for name in ("app1", "app2"):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_PORTFOLIO_")}
    env.update({k: str(v) for k, v in compose["services"][name]["environment"].items()})
    subprocess.run([sys.argv[2], "config-schema"], env=env, check=True, stdout=subprocess.DEVNULL)
PY
echo "deployment kits valid"
