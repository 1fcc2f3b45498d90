#!/usr/bin/env bash
# Installs graphrt's build and test dependencies from Debian packages.
# Idempotent: does nothing (and needs no network) when all are present.
set -euo pipefail
packages=(cmake g++ make pkg-config libdlpack-dev nlohmann-json3-dev googletest libgtest-dev
          libbenchmark-dev zlib1g-dev python3-numpy python3-pytest python3-setuptools)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "graphrt setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends "${missing[@]}" || {
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
}
