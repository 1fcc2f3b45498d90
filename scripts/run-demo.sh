#!/usr/bin/env bash
# The main job: installs dependencies, builds graphrt, and runs graphrt-run on
# the bundled demo model (a small MLP written as C kernels in TVM's packed ABI,
# packed with graphrt-pack together with its graph JSON and params).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
demo=build/examples/demo_mlp
exec ./build/apps/graphrt-run "$demo/demo_mlp.so" --input data="$demo/input.npy" \
  --output-dir build/demo_out --repeat 100 --warmup 10 "$@"
