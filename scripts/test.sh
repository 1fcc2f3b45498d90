#!/usr/bin/env bash
# Builds graphrt and runs every test twice: a normal build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build; then the concurrency
# stress test under ThreadSanitizer (library + that test only) and, where
# clang is installed, a short smoke run of every libFuzzer target.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
# The TVM fixtures the tests read; in CI (CI=true) their absence fails the run (configure and
# every test that needs them), elsewhere those tests skip and the summary says so.
fixtures=${GRAPHRT_FIXTURES:-../shared/fixtures}
if [ "${CI:-}" = true ]; then require_fixtures=ON; else require_fixtures=OFF; fi

echo "== normal build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAPHRT_REQUIRE_FIXTURES=$require_fixtures \
  -DGRAPHRT_FIXTURES_DIR="$(realpath -m "$fixtures")"
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 900)

echo "== ASan+UBSan build (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGRAPHRT_SANITIZE=ON -DGRAPHRT_PYTHON_TESTS=OFF -DGRAPHRT_BUILD_BENCH=OFF \
  -DGRAPHRT_REQUIRE_FIXTURES=$require_fixtures -DGRAPHRT_FIXTURES_DIR="$(realpath -m "$fixtures")"
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"$jobs" --timeout 900)

echo "== ThreadSanitizer build (build-tsan/): concurrency stress test"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAPHRT_TSAN=ON -DGRAPHRT_PYTHON_TESTS=OFF -DGRAPHRT_BUILD_BENCH=OFF \
  -DGRAPHRT_REQUIRE_FIXTURES=$require_fixtures -DGRAPHRT_FIXTURES_DIR="$(realpath -m "$fixtures")"
cmake --build build-tsan -j"$jobs" --target graphrt_stress_test
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 GRAPHRT_STRESS_SECONDS=10 \
  ctest --output-on-failure -R '^graphrt_stress_test$' --timeout 900)

# libFuzzer smoke runs where clang++ is installed: each target is built with
# ASan+UBSan, seeded, and must run clean for a few seconds. One entry per
# target: name, sources, seed step, run options.
fuzz_sources_vm_fuzz() { ls modules/vm/*.cc | grep -v -e register.cc -e packed_call.cc -e host_module.cc; echo src/error.cc src/regular_file.cc; }
fuzz_seed_vm_fuzz() {
  for f in fuzz/vm_corpus/*.vmasm; do build/apps/graphrt-vm-asm "$f" -o "$1/$(basename "$f" .vmasm).vmbc"; done
}
fuzz_options_vm_fuzz() { echo -max_total_time=20; }
fuzz_sources_vm_asm_fuzz() { fuzz_sources_vm_fuzz; }
fuzz_seed_vm_asm_fuzz() { cp fuzz/vm_corpus/*.vmasm "$1/" && find fuzz/regressions/vm_asm -type f -exec cp {} "$1/" \;; }
fuzz_options_vm_asm_fuzz() { echo -max_total_time=15 -dict=fuzz/vm_asm.dict; }
if command -v clang++ >/dev/null 2>&1; then
  for target in vm_fuzz vm_asm_fuzz; do
    echo "== fuzz smoke: $target"
    mkdir -p "build-fuzz/$target.corpus"
    # shellcheck disable=SC2046
    ${CCACHE:-} clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -I include -I . \
      "fuzz/$target.cc" $("fuzz_sources_$target") -ldl -lpthread -o "build-fuzz/$target"
    "fuzz_seed_$target" "build-fuzz/$target.corpus"
    # shellcheck disable=SC2046
    "build-fuzz/$target" $("fuzz_options_$target") -max_len=4096 -timeout=5 -print_final_stats=1 \
      "build-fuzz/$target.corpus" 2>&1 | tail -n 15
  done
fi
if command -v clang++ >/dev/null 2>&1; then
  echo "== libFuzzer smoke (build-fuzz/): every target briefly over its seed corpus"
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAPHRT_FUZZ=ON \
    -DGRAPHRT_BUILD_TESTS=OFF -DGRAPHRT_BUILD_BENCH=OFF -DGRAPHRT_PYTHON_TESTS=OFF
  cmake --build build-fuzz -j"$jobs" --target graphrt_fuzzers
  for target in build-fuzz/fuzz/*_fuzz; do
    name=$(basename "$target" _fuzz)
    work=$(mktemp -d)
    echo "-- $name"
    "$target" -max_total_time=10 -rss_limit_mb=2048 -max_len=8192 -artifact_prefix="$work/" "$work" \
      "fuzz/corpus/$name" 2>&1 | grep -E "^#[0-9]+.*DONE|ERROR|SUMMARY" || true
    if ls "$work"/crash-* "$work"/leak-* "$work"/oom-* "$work"/timeout-* >/dev/null 2>&1; then
      echo "fuzz target $name found a problem: $(ls "$work")"
      exit 1
    fi
    rm -rf "$work"
  done
else
  echo "== clang not installed: libFuzzer smoke skipped"
fi
if [ -d "$fixtures" ]; then
  echo "== all tests passed (normal, ASan+UBSan and TSan builds; fuzz smokes where clang is present)"
else
  echo "== tests passed WITHOUT the TVM fixtures: $fixtures is absent, so every fixture test was skipped"
  echo "   (provide it or set GRAPHRT_FIXTURES; with CI=true a missing fixtures folder fails the run)"
fi
