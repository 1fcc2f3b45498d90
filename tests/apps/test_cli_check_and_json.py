"""graphrt-run for scripts and checks: --expected-output (with --tolerance), --json, .npz inputs and
outputs (tvmc's format), --save-inputs, and an output directory checked before the model runs."""
import json
import os

import numpy as np
import pytest

from _apps import app, one_line_error, run


def g(x):
    return "%.9g" % x


def fnv1a64(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def mlp_run(mlp, *args, **kw):
    return run([app("graphrt-run"), mlp.path("deploy_factory.so"), "--input", "data=" + mlp.path("input_data.npy")]
               + list(args), **kw)


# ---- --expected-output ----
def test_expected_output_matches_tvms_own(mlp):
    p = mlp_run(mlp, "--expected-output", "0=" + mlp.path("output_0.npy"))
    assert p.returncode == 0, p.stderr
    assert "output 0 matches %s (max difference 0, tolerance 0)" % mlp.path("output_0.npy") in p.stdout, p.stdout


def test_expected_output_mismatch_gives_max_difference_and_first_index(mlp, tmp_path):
    want = np.load(mlp.path("output_0.npy"))
    bad = want.copy()
    bad[0, 1] += np.float32(0.25)
    bad[0, 3] += np.float32(0.5)
    np.save(tmp_path / "bad.npy", bad)
    p = mlp_run(mlp, "--expected-output", "0=bad.npy", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    first = float(bad[0, 1]) - float(want[0, 1])
    worst = float(bad[0, 3]) - float(want[0, 3])
    assert p.stderr == ("graphrt-run: output 0 differs from bad.npy: max difference %s at index (0, 3); first differing "
                        "index (0, 1) (flat 1): got %s, expected %s (tolerance 0)\n"
                        % (g(worst), g(float(want[0, 1])), g(float(bad[0, 1])))), p.stderr
    assert "matches" not in p.stdout
    # Within the tolerance it matches, and says by how much.
    p = mlp_run(mlp, "--expected-output", "0=bad.npy", "--tolerance", "0.6", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "output 0 matches bad.npy (max difference %s, tolerance 0.6)" % g(worst) in p.stdout, p.stdout
    assert first < worst


def test_expected_output_of_another_shape_or_dtype(mlp, tmp_path):
    want = np.load(mlp.path("output_0.npy"))
    np.save(tmp_path / "flat.npy", want.reshape(-1))
    np.save(tmp_path / "f64.npy", want.astype(np.float64))
    p = mlp_run(mlp, "--expected-output", "0=flat.npy", cwd=tmp_path)
    assert p.returncode == 1
    assert "output 0 has shape (1, 10), flat.npy holds (10,)" in p.stderr, p.stderr
    p = mlp_run(mlp, "--expected-output", "0=f64.npy", cwd=tmp_path)
    assert p.returncode == 1
    assert "output 0 is float32, f64.npy holds float64" in p.stderr, p.stderr


def test_expected_output_usage_mistakes(mlp, tmp_path):
    err = one_line_error(mlp_run(mlp, "--expected-output", "out.npy"), "graphrt-run")
    assert "--expected-output expects OUTPUT_INDEX=FILE.npy (e.g. 0=out0.npy), got 'out.npy'" in err, err
    err = one_line_error(mlp_run(mlp, "--tolerance", "0.1"), "graphrt-run")
    assert "--tolerance needs --expected-output" in err, err
    err = one_line_error(mlp_run(mlp, "--expected-output", "3=" + mlp.path("output_0.npy")), "graphrt-run")
    assert "--expected-output names output 3, but the model has 1 output(s)" in err, err


# ---- --json ----
def test_json_summary_on_stdout_and_text_on_stderr(mlp):
    p = mlp_run(mlp, "--json", "--repeat", "5", "--expected-output", "0=" + mlp.path("output_0.npy"))
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)  # stdout is the JSON and nothing else
    out = np.load(mlp.path("output_0.npy"))
    assert s["model"] == mlp.path("deploy_factory.so") and s["format"] == "graph" and s["device"] == "cpu"
    assert s["load_ms"] > 0 and s["peak_rss_bytes"] > 0
    lat = s["latency"]
    assert lat["runs"] == 5 and lat["warmup"] == 1
    assert 0 < lat["min_ms"] <= lat["p50_ms"] <= lat["p90_ms"] <= lat["p99_ms"] <= lat["max_ms"]
    assert lat["throughput_per_s"] == pytest.approx(1000.0 / lat["mean_ms"])
    assert s["outputs"] == [{"index": 0, "shape": [1, 10], "dtype": "float32",
                             "sum": pytest.approx(sum(float(v) for v in out.reshape(-1)), rel=1e-12),
                             "fnv1a64": fnv1a64(out.tobytes())}]
    assert s["expected"][0]["matches"] is True and s["expected"][0]["max_difference"] == 0
    assert "latency over 5 runs (1 warm-up)" in p.stderr and "p99" in p.stderr
    assert "output 0: (1, 10) float32" in p.stderr


def test_json_of_a_relax_executable():
    from _cases import case_dir
    d = case_dir("relax/relax_mlp")
    p = run([app("graphrt-run"), os.path.join(d, "deploy_relax.so"), "--input", "x=" + os.path.join(d, "input_x.npy"),
             "--json", "--quiet"])
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["format"] == "relax" and s["function"] == "main" and "latency" not in s
    assert s["outputs"][0]["dtype"] == "float32" and p.stderr == ""


# ---- .npz: --inputs, --output-format npz, --save-inputs ----
def test_saved_random_inputs_reproduce_the_run(mlp, tmp_path):
    model = mlp.path("deploy_factory.so")
    p = run([app("graphrt-run"), model, "--random-inputs", "7", "--save-inputs", "in.npz", "--output-dir", "a",
             "--output-format", "npz"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "wrote 1 input(s) to in.npz" in p.stdout and "wrote 1 output(s) to a/outputs.npz" in p.stdout
    saved = np.load(tmp_path / "in.npz")
    assert saved.files == ["data"] and saved["data"].shape == (1, 1, 28, 28) and saved["data"].dtype == np.float32
    p = run([app("graphrt-run"), model, "--inputs", "in.npz", "--output-dir", "b", "--output-format", "npz"],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    a, b = np.load(tmp_path / "a" / "outputs.npz"), np.load(tmp_path / "b" / "outputs.npz")
    assert a.files == b.files == ["output_0"]
    np.testing.assert_array_equal(a["output_0"], b["output_0"])


def test_npz_inputs_as_numpy_and_tvmc_write_them(mlp, tmp_path):
    np.savez(tmp_path / "inputs.npz", data=np.load(mlp.path("input_data.npy")))
    p = run([app("graphrt-run"), mlp.path("deploy_factory.so"), "--inputs", "inputs.npz", "--output-dir", "out",
             "--output-format", "npz", "--expected-output", "0=" + mlp.path("output_0.npy")], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "outputs.npz")["output_0"],
                                  np.load(mlp.path("output_0.npy")))


def test_npz_mistakes_are_named(mlp, tmp_path):
    np.savez_compressed(tmp_path / "z.npz", data=np.load(mlp.path("input_data.npy")))
    np.savez(tmp_path / "other.npz", image=np.load(mlp.path("input_data.npy")))
    model = mlp.path("deploy_factory.so")
    err = one_line_error(run([app("graphrt-run"), model, "--inputs", "z.npz"], cwd=tmp_path), "graphrt-run")
    assert "member 'data.npy' is compressed (np.savez_compressed); save the arrays with np.savez" in err, err
    assert "z.npz" in err
    err = one_line_error(run([app("graphrt-run"), model, "--inputs", "other.npz"], cwd=tmp_path), "graphrt-run")
    assert "unknown input 'image' (data inputs: data" in err and "other.npz" in err, err
    err = one_line_error(run([app("graphrt-run"), model, "--random-inputs", "0", "--output-format", "npz"]),
                         "graphrt-run")
    assert "--output-format needs --output-dir" in err, err


# ---- files that are missing or cannot be made say why ----
def test_output_dir_is_checked_before_the_model_loads(tmp_path):
    # The model does not exist either: the output directory's error comes first.
    p = run([app("graphrt-run"), "missing.so", "--random-inputs", "0", "--output-dir", "no/such/parent/out"],
            cwd=tmp_path)
    err = one_line_error(p, "graphrt-run")
    assert ("cannot create output directory: No such file or directory (its parent directory does not exist)"
            in err and "no/such/parent/out" in err), err
    (tmp_path / "afile").write_text("x")
    err = one_line_error(run([app("graphrt-run"), "missing.so", "--random-inputs", "0", "--output-dir", "afile"],
                             cwd=tmp_path), "graphrt-run")
    assert "output directory exists and is not a directory" in err and "afile" in err, err


def test_missing_npy_says_why(mlp, tmp_path):
    err = one_line_error(run([app("graphrt-run"), mlp.path("deploy_factory.so"), "--input", "data=nope.npy"],
                             cwd=tmp_path), "graphrt-run")
    assert "cannot open .npy file: no such file" in err and "nope.npy" in err, err
    err = one_line_error(run([app("graphrt-run"), mlp.path("deploy_factory.so"), "--input", "data=" + str(tmp_path)]),
                         "graphrt-run")
    assert ".npy file is a directory, not a regular file" in err, err


# ---- --quiet: nothing but errors, --json and what a flag asked to see ----
def test_quiet_prints_no_matches_latency_or_files_written(mlp, tmp_path):
    p = mlp_run(mlp, "--expected-output", "0=" + mlp.path("output_0.npy"), "--repeat", "2", "--output-dir",
                str(tmp_path / "out"), "--save-inputs", str(tmp_path / "in.npz"), "--quiet")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == "", p.stdout + p.stderr
    assert (tmp_path / "out" / "output_0.npy").exists() and (tmp_path / "in.npz").exists()
    # A mismatch is an error: said with --quiet too.
    bad = np.load(mlp.path("output_0.npy")) + np.float32(1)
    np.save(tmp_path / "bad.npy", bad)
    p = mlp_run(mlp, "--expected-output", "0=bad.npy", "--quiet", cwd=tmp_path)
    assert p.returncode == 1 and p.stdout == "" and "differs from bad.npy" in p.stderr, p.stdout + p.stderr
    # The --profile table was asked for: printed.
    p = mlp_run(mlp, "--profile", "--quiet")
    assert p.returncode == 0 and "tvmgen_default_fused_nn_softmax" in p.stdout and "output 0:" not in p.stdout
