#!/usr/bin/env bash
# Installs the real servers the integration tests start themselves (and Open MPI's mpirun for the lab)
# (Debian packages; apt never starts services here). Needs root.
set -euo pipefail
pkgs=(prometheus prometheus-alertmanager
      slurm-wlm slurmctld slurmd slurm-client slurmdbd slurmrestd munge mariadb-server
      postgresql-15
      chromium chromium-driver
      openmpi-bin libopenmpi-dev
      # the fabric: an InfiniBand simulator the diagnostics and the SM run against, and LLDP (tests/fabric)
      ibsim-utils infiniband-diags opensm lldpd iproute2
      # the lab's ninth round: a FUSE daemon under the ranks (bindfs), firewall rules on a rank's ports (iptables)
      bindfs iptables
      # the lab's twelfth round: Grid Engine 8.1.9, a qmaster and an execd of a cell of the lab's own (lab/sge.py)
      gridengine-master gridengine-exec gridengine-client)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-servers: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-servers: ok (${#missing[@]} installed)"
