#!/usr/bin/env bash
# Builds graphrt and runs every test twice: a normal build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build; then the concurrency
# stress test under ThreadSanitizer (library + that test only) and a short
# smoke run of every libFuzzer target. Where clang is installed the sanitizer
# build is a clang build that also holds the libFuzzer targets, so the library
# compiles once for both; without clang it is a gcc build and the fuzz smoke is
# skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
# shellcheck source=scripts/build-options.sh
source scripts/build-options.sh

echo "== [${SECONDS} s] normal build (build/)"
cmake -S . -B build $(generator_for build) "${normal_build_options[@]}" -DGRAPHRT_REQUIRE_SERVE=ON
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 900)

# The sanitizer builds use clang where it is installed: at -O0 with ASan it compiles about 1.6x
# faster than gcc, line tables (not full debug information) still give reports file:line, lld
# links the sanitized test programs in a fraction of GNU ld's time, and clang's libFuzzer lets
# the ASan build hold the fuzz targets, so nothing compiles a third time.
if command -v clang++ >/dev/null 2>&1; then
  sanitizer_compiler=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
                      -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only
                      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
                      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
                      -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld
                      -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld)
  with_fuzzers=ON
  echo "== [${SECONDS} s] ASan+UBSan build with the libFuzzer targets (build-asan/, clang)"
else
  sanitizer_compiler=()
  with_fuzzers=OFF
  echo "== [${SECONDS} s] ASan+UBSan build (build-asan/; clang not installed: no libFuzzer targets)"
fi
cmake -S . -B build-asan $(generator_for build-asan) "${sanitizer_compiler[@]}" "${launcher_options[@]}" -DCMAKE_BUILD_TYPE=Debug -DGRAPHRT_SANITIZE=ON \
  -DGRAPHRT_FUZZ=$with_fuzzers -DGRAPHRT_PYTHON_TESTS=OFF -DGRAPHRT_BUILD_BENCH=OFF \
  -DGRAPHRT_REQUIRE_FIXTURES=$require_fixtures -DGRAPHRT_FIXTURES_DIR="$(realpath -m "$fixtures")"
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"$jobs" --timeout 900)

echo "== [${SECONDS} s] ThreadSanitizer build (build-tsan/): concurrency stress test"
# The stress test loads graph exports through dlopen and the embedded ELF loader: the library
# is built with that one back end, which halves what this build compiles.
cmake -S . -B build-tsan $(generator_for build-tsan) "${sanitizer_compiler[@]}" "${launcher_options[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAPHRT_TSAN=ON -DGRAPHRT_PYTHON_TESTS=OFF -DGRAPHRT_BUILD_BENCH=OFF \
  -DGRAPHRT_BACKENDS=elf_so \
  -DGRAPHRT_REQUIRE_FIXTURES=$require_fixtures -DGRAPHRT_FIXTURES_DIR="$(realpath -m "$fixtures")"
cmake --build build-tsan -j"$jobs" --target graphrt_stress_test
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 GRAPHRT_STRESS_SECONDS=10 \
  ctest --output-on-failure -R '^graphrt_stress_test$' --timeout 900)

# libFuzzer smoke: every target, built in the sanitizer build above, must run clean for a few
# seconds over its seeds.
fuzz_seeds() {  # name dir: fills dir with the target's seed inputs
  case $1 in
    vm) for f in fuzz/vm_corpus/*.vmasm; do build/apps/graphrt-vm-asm "$f" -o "$2/$(basename "$f" .vmasm).vmbc"; done ;;
    vm_asm) cp fuzz/vm_corpus/*.vmasm "$2/" ;;
    elf_object) cp fuzz/elf_object_corpus/* "$2/" ;;
    *) cp -r "fuzz/corpus/$1/." "$2/" ;;
  esac
  if [ -d "fuzz/regressions/$1" ]; then find "fuzz/regressions/$1" -type f -exec cp {} "$2/" \;; fi
}
fuzz_smoke() {  # target: runs it briefly over its seeds; prints its summary, fails on a finding
  local target=$1 name work
  name=$(basename "$target" _fuzz)
  work=$(mktemp -d)
  mkdir "$work/seeds" "$work/corpus"
  fuzz_seeds "$name" "$work/seeds"
  local options=(-max_total_time=5 -rss_limit_mb=2048 -max_len=8192 -timeout=5)
  if [ -f "fuzz/$name.dict" ]; then options+=(-dict="fuzz/$name.dict"); fi
  echo "-- $name"
  "$target" "${options[@]}" -artifact_prefix="$work/" "$work/corpus" "$work/seeds" 2>&1 \
    | grep -E "^#[0-9]+.*DONE|==[0-9]+== ?ERROR|SUMMARY" || true
  if ls "$work"/crash-* "$work"/leak-* "$work"/oom-* "$work"/timeout-* >/dev/null 2>&1; then
    echo "fuzz target $name found a problem: $(ls "$work")"
    return 1
  fi
  rm -rf "$work"
}
if [ "$with_fuzzers" = ON ]; then
  echo "== [${SECONDS} s] libFuzzer smoke (build-asan/fuzz/): every target briefly over its seed corpus, $jobs at a time"
  logs=$(mktemp -d)
  for target in build-asan/fuzz/*_fuzz; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
    name=$(basename "$target" _fuzz)
    (fuzz_smoke "$target" > "$logs/$name.log" 2>&1 || touch "$logs/$name.failed") &
  done
  wait
  cat "$logs"/*.log
  if ls "$logs"/*.failed >/dev/null 2>&1; then
    echo "fuzz smoke failed: $(cd "$logs" && ls ./*.failed)"
    exit 1
  fi
  rm -rf "$logs"
else
  echo "== [${SECONDS} s] clang not installed: libFuzzer smoke skipped"
fi
if [ -d "$fixtures" ]; then
  echo "== [${SECONDS} s] all tests passed (normal, ASan+UBSan and TSan builds; fuzz smokes where clang is present)"
else
  echo "== [${SECONDS} s] tests passed WITHOUT the TVM fixtures: $fixtures is absent, so every fixture test was skipped"
  echo "   (provide it or set GRAPHRT_FIXTURES; with CI=true a missing fixtures folder fails the run)"
fi
