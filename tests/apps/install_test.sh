#!/usr/bin/env bash
# cmake --install puts a usable package in place:
#  - the installed apps start from the prefix with no LD_LIBRARY_PATH (RUNPATH to PREFIX/lib)
#    and the installed graphrt-pack compiles kernels against PREFIX/include;
#  - a find_package(graphrt) consumer (examples/cpp_consumer) builds against it and runs a model,
#    once through graphrt's C++ API and once through TVM's (tvm/runtime headers).
set -euo pipefail
build_dir=$1 source_dir=$2 model=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
unset LD_LIBRARY_PATH
bin=$work/prefix/bin

fail() { echo "install_test: $*" >&2; exit 1; }

# The apps start from the prefix and load the installed libgraphrt (not the build tree's).
out=$("$bin/graphrt-run" "$model" --random-inputs 0) || fail "installed graphrt-run did not run: $out"
[[ "$out" == *"output 0: (1, 10) float32"* ]] || fail "unexpected graphrt-run output: $out"
lib=$(LD_DEBUG=libs "$bin/graphrt-run" --help 2>&1 | grep -o "calling init: [^ ]*libgraphrt[^ ]*" | head -1)
[[ "$lib" == *"$work/prefix/"* ]] || fail "graphrt-run loaded '$lib', not the prefix's libgraphrt"
"$bin/graphrt-inspect" "$model" > /dev/null || fail "installed graphrt-inspect did not run"
"$bin/graphrt-vm-asm" --help > /dev/null || fail "installed graphrt-vm-asm --help did not exit 0"
# graphrt-serve and its .proto files, when the build has the server.
if [[ -x "$build_dir/apps/graphrt-serve" ]]; then
  "$bin/graphrt-serve" --help > /dev/null || fail "installed graphrt-serve --help did not exit 0"
  for proto in grpc_service.proto health.proto; do
    [[ -f "$work/prefix/share/graphrt/proto/$proto" ]] || fail "cmake --install did not install share/graphrt/proto/$proto"
  done
fi
# runtime_bench is installed with the apps when the build has it (GRAPHRT_BUILD_BENCH), and takes a model file.
if [[ -x "$build_dir/bench/runtime_bench" ]]; then
  "$bin/runtime_bench" --help > /dev/null || fail "installed runtime_bench --help did not exit 0"
  out=$("$bin/runtime_bench" --runs 2 --concurrent 0 "$model") || fail "installed runtime_bench did not run: $out"
  [[ "$out" == *"load "*" ms  run "* ]] || fail "unexpected runtime_bench output: $out"
fi

# graphrt-pack compiles against PREFIX/include, never the source tree's include/.
pack_log=$("$bin/graphrt-pack" --verbose -o "$work/kernels.so" "$source_dir/examples/demo_mlp/kernels.c" 2>&1) \
  || fail "installed graphrt-pack failed: $pack_log"
[[ "$pack_log" == *"-I$work/prefix/bin/../include"* ]] || fail "graphrt-pack did not use the prefix's headers: $pack_log"
[[ "$pack_log" != *"-I$source_dir/include"* ]] || fail "graphrt-pack used the source tree's headers: $pack_log"

# A CMake consumer.
cmake -S "$source_dir/examples/cpp_consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
out=$("$work/consumer/run_model" "$model")
echo "$out"
[[ "$out" == "output 0: (1, 10) float32" ]]
out=$("$work/consumer/tvm_deploy" "$model")
echo "$out"
[[ "$out" == "output 0: [1, 10] float32" ]]
[[ -f "$work/prefix/include/tvm/runtime/c_runtime_api.h" ]]

# dlpack/dlpack.h, which graphrt's headers include, is installed with them, and the installed
# target names no include folder outside the prefix (a machine without libdlpack-dev builds too).
[[ -f "$work/prefix/include/dlpack/dlpack.h" ]] || fail "dlpack/dlpack.h is not installed"
targets=$(cat "$work"/prefix/lib*/cmake/graphrt/graphrtTargets.cmake)
[[ "$targets" != *"/usr/include"* ]] || fail "the installed graphrt target names /usr/include: $targets"

# The Python package is installed with the library and loads the prefix's libgraphrt with no
# environment variable but the one that puts the package on the path.
unset GRAPHRT_LIBRARY_PATH
site=$(echo "$work"/prefix/lib/python3*/site-packages)
[[ -f "$site/graphrt/__init__.py" ]] || fail "the Python package is not installed under $work/prefix/lib"
py=/usr/bin/python3
got=$(cd / && PYTHONPATH="$site" "$py" -c 'import graphrt; print(graphrt.library_path()); print(graphrt.__version__)') \
  || fail "the installed Python package does not import"
[[ "$got" == "$work/prefix/lib/libgraphrt.so"* ]] || fail "the installed package loaded '$got', not the prefix's libgraphrt"
out=$(cd / && PYTHONPATH="$site" "$py" -c '
import sys, graphrt
from graphrt import graph_executor
import numpy as np
gmod = graph_executor.GraphModule(graphrt.load_module(sys.argv[1])["default"](graphrt.cpu()))
shapes, dtypes = gmod.get_input_info()
for name in shapes:
    gmod.set_input(name, np.zeros(shapes[name], dtypes[name]))
gmod.run()
print(gmod.get_output(0).shape)' "$model") || fail "the installed Python package did not run $model"
[[ "$out" == "(1, 10)" ]] || fail "unexpected output from the installed package: $out"

# pip install --no-index ./python after the install: a copy that loads the installed library.
if "$py" -m pip --version > /dev/null 2>&1; then
  # From a copy, so pip's build folders stay out of the source tree; GRAPHRT_BUILD_DIR names the build.
  cp -r "$source_dir/python" "$work/python-src"
  GRAPHRT_BUILD_DIR="$build_dir" "$py" -m pip install --no-index --quiet --disable-pip-version-check --target "$work/pip" "$work/python-src" \
    > "$work/pip.log" 2>&1 || fail "pip install ./python failed: $(cat "$work/pip.log")"
  got=$(cd / && PYTHONPATH="$work/pip" "$py" -c 'import graphrt; print(graphrt.library_path())') \
    || fail "the pip-installed package does not import"
  [[ "$got" == "$work/prefix/lib/libgraphrt.so"* ]] || fail "the pip-installed package loaded '$got', not the installed one"
fi
