#!/usr/bin/env bash
# Builds graphrt and runs every test twice: a normal build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build; then the concurrency
# stress test under ThreadSanitizer (library + that test only) and, where
# clang is installed, a short smoke run of every libFuzzer target.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
# shellcheck source=scripts/build-options.sh
source scripts/build-options.sh

echo "== normal build (build/)"
cmake -S . -B build "${normal_build_options[@]}" -DGRAPHRT_REQUIRE_SERVE=ON
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

# libFuzzer smoke where clang is installed: every target, built with ASan+UBSan in one CMake
# build (each source compiled once), must run clean for a few seconds over its seeds.
fuzz_seeds() {  # name dir: fills dir with the target's seed inputs
  case $1 in
    vm) for f in fuzz/vm_corpus/*.vmasm; do build/apps/graphrt-vm-asm "$f" -o "$2/$(basename "$f" .vmasm).vmbc"; done ;;
    vm_asm) cp fuzz/vm_corpus/*.vmasm "$2/" ;;
    elf_object) cp fuzz/elf_object_corpus/* "$2/" ;;
    *) cp -r "fuzz/corpus/$1/." "$2/" ;;
  esac
  if [ -d "fuzz/regressions/$1" ]; then find "fuzz/regressions/$1" -type f -exec cp {} "$2/" \;; fi
}
if command -v clang++ >/dev/null 2>&1; then
  echo "== libFuzzer smoke (build-fuzz/): every target briefly over its seed corpus"
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAPHRT_FUZZ=ON \
    -DGRAPHRT_BUILD_TESTS=OFF -DGRAPHRT_BUILD_BENCH=OFF -DGRAPHRT_PYTHON_TESTS=OFF
  cmake --build build-fuzz -j"$jobs" --target graphrt_fuzzers
  for target in build-fuzz/fuzz/*_fuzz; do
    name=$(basename "$target" _fuzz)
    work=$(mktemp -d)
    mkdir "$work/seeds" "$work/corpus"
    fuzz_seeds "$name" "$work/seeds"
    options=(-max_total_time=10 -rss_limit_mb=2048 -max_len=8192 -timeout=5)
    if [ -f "fuzz/$name.dict" ]; then options+=(-dict="fuzz/$name.dict"); fi
    echo "-- $name"
    "$target" "${options[@]}" -artifact_prefix="$work/" "$work/corpus" "$work/seeds" 2>&1 \
      | grep -E "^#[0-9]+.*DONE|==[0-9]+== ?ERROR|SUMMARY" || true
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
