#!/usr/bin/env bash
# The demo: installs dependencies, builds the library, graphrt-run and the demo model (nothing
# else: the tests are built by scripts/test.sh, into the same build/), runs the model and checks
# its output against a reference computed independently.
#
# The model: a two-layer MLP (data 1x64 -> dense+bias+relu 32 -> dense+bias+softmax 10) whose
# kernels are hand-written C in TVM's packed ABI (examples/demo_mlp/kernels.c), packed with its
# graph JSON and params by graphrt-pack into one TVM-style export, demo_mlp.so. The reference is
# the generator's own forward pass in double precision (examples/demo_mlp/gen_demo.cc).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh
# shellcheck source=scripts/build-options.sh
source scripts/build-options.sh
cmake -S . -B build $(generator_for build) "${normal_build_options[@]}" > /dev/null
cmake --build build -j"$jobs" --target graphrt_run demo_mlp
demo=build/examples/demo_mlp
echo
echo "== demo: $demo/demo_mlp.so (2-layer MLP, C kernels packed by graphrt-pack), input $demo/input.npy"
echo "   checked against $demo/expected_output.npy (the generator's float64 forward pass)"
./build/apps/graphrt-run "$demo/demo_mlp.so" --input data="$demo/input.npy" \
  --output-dir build/demo_out --repeat 100 --warmup 10 \
  --expected-output 0="$demo/expected_output.npy" --tolerance 1e-5 "$@"
echo "== demo done in $(( $(date +%s) - start )) s; next: scripts/test.sh builds and runs every test"
