#!/usr/bin/env bash
# cmake --install puts a usable package in place: a find_package(graphrt)
# consumer (examples/cpp_consumer) builds against it and runs a model, once
# through graphrt's C++ API and once through TVM's (tvm/runtime headers).
set -euo pipefail
build_dir=$1 source_dir=$2 model=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
cmake -S "$source_dir/examples/cpp_consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
out=$(LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64" "$work/consumer/run_model" "$model")
echo "$out"
[[ "$out" == "output 0: (1, 10) float32" ]]
out=$(LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64" "$work/consumer/tvm_deploy" "$model")
echo "$out"
[[ "$out" == "output 0: [1, 10] float32" ]]
[[ -f "$work/prefix/include/tvm/runtime/c_runtime_api.h" ]]
