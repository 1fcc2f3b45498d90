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
cmake -S . -B build "${normal_build_options[@]}" > /dev/null
cmake --build build -j"$jobs" --target graphrt_run demo_mlp
demo=build/examples/demo_mlp
echo
echo "== demo: $demo/demo_mlp.so (2-layer MLP, C kernels packed by graphrt-pack), input $demo/input.npy"
./build/apps/graphrt-run "$demo/demo_mlp.so" --input data="$demo/input.npy" \
  --output-dir build/demo_out --repeat 100 --warmup 10 "$@"
echo
echo "== check: build/demo_out/output_0.npy against $demo/expected_output.npy (float64 forward pass)"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" - "$demo/expected_output.npy" build/demo_out/output_0.npy <<'PY'
import sys
import numpy as np
expected, got = (np.load(p) for p in sys.argv[1:3])
if got.shape != expected.shape or got.dtype != expected.dtype:
    sys.exit("demo output has shape %s %s, expected %s %s" % (got.shape, got.dtype, expected.shape, expected.dtype))
diff = float(np.max(np.abs(got.astype(np.float64) - expected)))
print("max |graphrt - reference| = %.3g over %d values" % (diff, got.size))
if diff > 1e-5:
    sys.exit("demo output differs from the reference by %.3g (tolerance 1e-5)" % diff)
print("demo output matches the reference (tolerance 1e-5)")
PY
echo "== demo done in $(( $(date +%s) - start )) s; next: scripts/test.sh builds and runs every test"
