# Sourced: `pod`, podman as this sandbox lets it run containers (runc, not
# crun; cgroups by files, not systemd; limits within the sandbox's own).
# A machine with a whole podman or Docker needs none of this.
pod() {
  local command=$1
  shift
  case "$command" in
    build | run | create)
      podman --runtime runc --cgroup-manager=cgroupfs "$command" \
        --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$@"
      ;;
    *) podman --runtime runc --cgroup-manager=cgroupfs "$command" "$@" ;;
  esac
}
