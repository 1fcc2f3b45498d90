# Sourced by scripts/run-demo.sh and scripts/test.sh: the one place that says how build/ is
# configured, so the demo's build is the test run's normal build and nothing compiles twice.
# Sets: fixtures, require_fixtures, jobs, normal_build_options; defines generator_for.

# The TVM fixtures the tests read; in CI (CI=true) their absence fails the run (configure and
# every test that needs them), elsewhere those tests skip and the summary says so.
fixtures=${GRAPHRT_FIXTURES:-../shared/fixtures}
if [ "${CI:-}" = true ]; then require_fixtures=ON; else require_fixtures=OFF; fi
jobs=$(nproc 2>/dev/null || echo 2)
# RelWithDebInfo with line tables only (-g1): backtraces and profiles keep file:line, and the
# build compiles about a fifth faster than with full debug information.
normal_build_options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRAPHRT_REQUIRE_FIXTURES=$require_fixtures
                      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
                      -DGRAPHRT_FIXTURES_DIR="$(realpath -m "$fixtures")")
# lld where installed (scripts/setup.sh --tests): it links the test programs several times
# faster than GNU ld. Switching linkers relinks, it does not recompile.
if command -v ld.lld >/dev/null 2>&1; then
  normal_build_options+=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld
                         -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld)
else
  normal_build_options+=(-DCMAKE_EXE_LINKER_FLAGS= -DCMAKE_SHARED_LINKER_FLAGS= -DCMAKE_MODULE_LINKER_FLAGS=)
fi

# generator_for DIR: "-GNinja" for a build folder not yet configured when ninja is installed
# (scripts/setup.sh installs it): its no-op and incremental builds take a fraction of Make's
# time, which three builds a test run pay. A folder configured before keeps its generator (CMake
# refuses to change it), so an existing Make build folder still works.
generator_for() {
  if [ ! -f "$1/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then echo "-GNinja"; fi
}

# ccache where installed: builds of the same sources in other folders (a fresh clone, a second
# work tree) reuse each other's objects. Paths are made relative to the folder above the
# checkout and the working directory is left out of the hash (line tables name it).
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}" CCACHE_NOHASHDIR=1
  launcher_options=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  launcher_options=()
fi
normal_build_options+=("${launcher_options[@]}")
