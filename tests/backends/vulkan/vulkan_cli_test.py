#!/usr/bin/env python3
"""graphrt-run --device vulkan on every relax-vulkan case and input set: each output within the
case's tolerance (--expected-output), and the process exits 0 (TVM's own Vulkan runtime crashes in
its exit-time destructors); vulkan:N past the devices and a missing loader each end in one error.
Exit 77 (skipped) where no Vulkan device exists, but in CI (CI=true) or with GRAPHRT_REQUIRE_VULKAN=1.

Usage: vulkan_cli_test.py GRAPHRT_RUN FIXTURES_DIR"""
import json
import os
import subprocess
import sys

run, fixtures = sys.argv[1], sys.argv[2]
root = os.path.join(fixtures, "relax-vulkan")
if not os.path.isdir(root):
    print("relax-vulkan fixtures not found")
    sys.exit(1 if os.environ.get("GRAPHRT_REQUIRE_FIXTURES") == "1" else 77)
failures = []


def graphrt_run(args, env=None):
    return subprocess.run([run] + args, capture_output=True, text=True, timeout=120, env=env)


mlp = os.path.join(root, "relax_mlp_vulkan")
probe = graphrt_run([mlp + "/deploy_relax.so", "--input", "x=" + mlp + "/input_x.npy", "--device", "vulkan"])
if probe.returncode != 0 and ("no Vulkan device" in probe.stderr or "libvulkan.so.1 not found" in probe.stderr):
    print("no Vulkan device here:", probe.stderr.strip())
    required = os.environ.get("CI") == "true" or os.environ.get("GRAPHRT_REQUIRE_VULKAN") == "1"
    sys.exit(1 if required else 77)  # CI installs lavapipe: none there is a failure

for name in sorted(os.listdir(root)):
    case_dir = os.path.join(root, name)
    case = json.load(open(os.path.join(case_dir, "case.json")))
    sets = [s.get("suffix", "") for s in case.get("input_sets", [])] or [""]
    for i, suffix in enumerate(sets):
        args = [os.path.join(case_dir, "deploy_relax.so"), "--device", "vulkan" if i % 2 == 0 else "vulkan:0",
                "--tolerance", str(case["tolerance"])]
        for k in case["input_order"]:
            args += ["--input", "%s=%s/input_%s%s.npy" % (k, case_dir, k, suffix)]
        for o in range(len(case["outputs"])):
            args += ["--expected-output", "%d=%s/output_%d%s.npy" % (o, case_dir, o, suffix)]
        p = graphrt_run(args)
        matches = p.stdout.count(" matches ")
        if p.returncode != 0 or matches != len(case["outputs"]):
            failures.append("%s%s: exit %d, %d matches\n%s%s" % (name, suffix, p.returncode, matches, p.stdout, p.stderr))
        else:
            print("ok", name, suffix or "-")

p = graphrt_run([mlp + "/deploy_relax.so", "--input", "x=" + mlp + "/input_x.npy", "--device", "vulkan:9"])
if p.returncode != 1 or "no Vulkan device 9" not in p.stderr or p.stderr.count("error:") != 1:
    failures.append("vulkan:9: exit %d: %s" % (p.returncode, p.stderr))
env = dict(os.environ, GRAPHRT_VULKAN_LOADER="/nonexistent/libvulkan.so.1")
p = graphrt_run([mlp + "/deploy_relax.so", "--input", "x=" + mlp + "/input_x.npy", "--device", "vulkan"], env)
if p.returncode != 1 or "libvulkan.so.1 not found" not in p.stderr or p.stderr.count("error:") != 1:
    failures.append("without the loader: exit %d: %s" % (p.returncode, p.stderr))

for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
