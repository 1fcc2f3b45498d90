#!/usr/bin/env bash
# Builds graphrt and runs every test twice: a normal build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== normal build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 900)

echo "== ASan+UBSan build (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGRAPHRT_SANITIZE=ON -DGRAPHRT_PYTHON_TESTS=OFF -DGRAPHRT_BUILD_BENCH=OFF
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"$jobs" --timeout 900)

# libFuzzer smoke runs where clang++ is installed: each target is built with
# ASan+UBSan, seeded, and must run clean for a few seconds. One entry per
# target: name, sources, seed step.
fuzz_sources_vm_fuzz() { ls modules/vm/*.cc | grep -v -e register.cc -e packed_call.cc; echo src/error.cc; }
fuzz_seed_vm_fuzz() {
  for f in fuzz/vm_corpus/*.vmasm; do build/apps/graphrt-vm-asm "$f" -o "$1/$(basename "$f" .vmasm).vmbc"; done
}
if command -v clang++ >/dev/null 2>&1; then
  for target in vm_fuzz; do
    echo "== fuzz smoke: $target"
    mkdir -p "build-fuzz/$target.corpus"
    # shellcheck disable=SC2046
    ${CCACHE:-} clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -I include -I . \
      "fuzz/$target.cc" $("fuzz_sources_$target") -ldl -lpthread -o "build-fuzz/$target"
    "fuzz_seed_$target" "build-fuzz/$target.corpus"
    "build-fuzz/$target" -max_total_time=20 -max_len=4096 -timeout=5 -print_final_stats=1 \
      "build-fuzz/$target.corpus" 2>&1 | tail -n 15
  done
fi
echo "== all tests passed (normal and ASan+UBSan builds, fuzz smoke where clang++ exists)"
