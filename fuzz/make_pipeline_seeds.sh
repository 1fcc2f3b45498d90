#!/usr/bin/env bash
# Regenerates fuzz/corpus/pipeline/: small model libraries (stub kernels, the
# fixtures' graph JSON and params) packed by graphrt-pack, stripped and
# linked without libc so that each seed is a few KiB.
# usage: fuzz/make_pipeline_seeds.sh BUILD_DIR (with graphrt-pack built)
set -euo pipefail
cd "$(dirname "$0")/.."
pack="$1/apps/graphrt-pack"
out=fuzz/corpus/pipeline
fixtures=../shared/fixtures
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for case in multi_io byoc_ccompiler chain1000; do
  graph=$fixtures/$case/deploy_graph.json
  [ "$case" = chain1000 ] && { python3 - "$graph" > "$tmp/graph.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
keep = 4  # the first nodes only: chain1000 is a straight line
nodes = g["nodes"][:keep]
g["nodes"] = nodes
g["node_row_ptr"] = g["node_row_ptr"][:keep + 1]
n = g["node_row_ptr"][-1]
for k, v in g["attrs"].items():
    v[1] = v[1][:n]
g["heads"] = [[keep - 1, 0, 0]]
g["arg_nodes"] = [i for i in g["arg_nodes"] if i < keep]
json.dump(g, sys.stdout, separators=(",", ":"))
PY
  graph=$tmp/graph.json; }
  python3 - "$graph" > "$tmp/kernels.c" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
names = sorted({n["attrs"]["func_name"] for n in g["nodes"] if n["op"] == "tvm_op"} - {"__nop", "__copy"})
for name in names:
    print(f"int {name}(void* a, int* c, int n, void* r, int* rc, void* h) {{ return 0; }}")
PY
  "$pack" -o "$out/$case.so" --graph "$graph" --params "$fixtures/$case/deploy_params.params" \
    --cflags "-Os -fno-asynchronous-unwind-tables" \
    --ldflags "-nostdlib -s -Wl,--build-id=none -Wl,-z,noseparate-code -Wl,-z,max-page-size=4096 -Wl,--hash-style=gnu" \
    "$tmp/kernels.c"
done
ls -l "$out"
