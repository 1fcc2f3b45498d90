#!/usr/bin/env bash
# Installs graphrt's dependencies from Debian packages.
#   scripts/setup.sh          what building the library, the apps and the demo needs
#   scripts/setup.sh --tests  that, plus what the test suites and graphrt-serve (with its
#                             scale-out tests: haproxy, nginx, promtool, wrk) need, and
#                             clang with its sanitizer/libFuzzer runtimes and lld
# Idempotent: does nothing (and needs no network) when all are present.
set -euo pipefail
packages=(cmake g++ make ninja-build pkg-config libdlpack-dev nlohmann-json3-dev zlib1g-dev python3-numpy
          libpcre2-dev libicu-dev libsentencepiece-dev)  # the tokenizers: regexes, normalizers, tokenizer.model
packages+=(libvulkan-dev spirv-tools)  # the Vulkan back end: Vulkan's types, SPIR-V validation (linked)
if [ "${1:-}" = --tests ]; then
  packages+=(googletest libgtest-dev libbenchmark-dev python3-pytest python3-setuptools
             libcpp-httplib-dev libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
             python3-requests python3-grpcio python3-protobuf prometheus haproxy nginx wrk
             nodejs  # the openai npm client test (npm installs the package at test time; skipped without npm/network)
             clang libclang-rt-14-dev lld)  # the sanitizer builds, libFuzzer and its linker
  packages+=(libvulkan1 mesa-vulkan-drivers)  # the Vulkan loader and lavapipe, a Vulkan device on the CPU
  packages+=(ocl-icd-libopencl1 pocl-opencl-icd opencl-headers)  # the OpenCL tests on PoCL (CPU); headers: the ABI check
fi
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
