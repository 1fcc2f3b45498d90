"""Every app explains itself: --help and -h list each flag with its default and give examples,
--version names the app and the library; options are taken in any order."""
import os
import re

import pytest

from _apps import app, apps_dir, one_line_error, run

# Each app's flags, as a user reads them in --help.
APPS = {
    "graphrt-run": ["--graph", "--params", "--input", "--inputs", "--random-inputs", "--save-inputs",
                    "--output-dir", "--output-format", "--expected-output", "--tolerance", "--json", "--function",
                    "--device", "--threads", "--repeat", "--warmup", "--profile", "--trace", "--memory-plan",
                    "--cuda-graph", "--loader", "--trust-exports", "--quiet"],
    "graphrt-inspect": ["--graph", "--params", "--dot", "--loader", "--all-functions", "--trust-exports"],
    "graphrt-pack": ["-o", "--output", "--graph", "--params", "--module-name", "--blob-entry", "--cc", "--cxx",
                     "--cflags", "--ldflags", "-I", "--emit-c", "--emit-blob", "--verbose"],
    "graphrt-vm-asm": ["-o", "--dump"],
    "graphrt-vm-run": ["--module", "--function", "--input", "--output", "--budget", "--memory-limit", "--trace",
                       "--benchmark"],
    "runtime_bench": ["--runs", "--concurrent", "--seconds"],
}


def binary(name):
    if name == "runtime_bench":
        path = os.path.join(os.path.dirname(apps_dir()), "bench", name)
        if not os.path.isfile(path):
            pytest.skip("runtime_bench not built (GRAPHRT_BUILD_BENCH=OFF)")
        return path
    return app(name)


def flag_blocks(help_text):
    """{flag: its explanation} from the 'options:' part of --help."""
    options = help_text.split("\noptions:\n", 1)[1].split("\nexamples:\n", 1)[0]
    blocks, current = {}, None
    for line in options.splitlines():
        m = re.match(r"^  (-\S+)", line)
        if m:
            current = m.group(1).rstrip(",")
            blocks[current] = ""
        elif current:
            blocks[current] += " " + line.strip()
    return blocks


@pytest.mark.parametrize("name", sorted(APPS))
def test_help_explains_every_flag_with_its_default_and_examples(name):
    p = run([binary(name), "--help"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: %s " % name), p.stdout
    assert "\nexamples:\n  %s " % name in p.stdout or "\nexamples:\n  graphrt-" in p.stdout, p.stdout
    blocks = flag_blocks(p.stdout)
    for flag in APPS[name]:
        assert flag in blocks, "%s --help does not list %s:\n%s" % (name, flag, p.stdout)
        text = blocks[flag]
        # A flag without a default is one that is required, or the same as another.
        assert "default" in text or "required" in text or "the same as" in text, (flag, text)
    assert "-h, --help" in p.stdout and "--version" in blocks
    short = run([binary(name), "-h"])
    assert short.returncode == 0 and short.stdout == p.stdout


@pytest.mark.parametrize("name", sorted(APPS))
def test_version(name):
    p = run([binary(name), "--version"])
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(r"%s from graphrt \d+\.\d+\.\d+ .*\n" % re.escape(name), p.stdout), p.stdout
    # It names every kind of export graphrt runs: graph executor, Relax, tvm-ffi.
    assert "graph executor" in p.stdout and "Relax" in p.stdout and "tvm-ffi" in p.stdout, p.stdout


def test_random_inputs_help_names_relax():
    p = run([app("graphrt-run"), "--help"])
    block = p.stdout[p.stdout.index("--random-inputs"):p.stdout.index("--save-inputs")]
    assert "Relax" in block and "graph models;" not in block, block


def test_unknown_flag_points_at_help():
    err = one_line_error(run([app("graphrt-run"), "--no-such-flag"]), "graphrt-run")
    assert "unknown option '--no-such-flag'" in err and "see --help" in err, err


def test_vm_asm_takes_options_in_any_order(tmp_path):
    src = tmp_path / "p.vmasm"
    src.write_text("module p version 1\nfunc f \"0i_i\" export\n  ret %i0\nend\n")
    asm = app("graphrt-vm-asm")
    for args in (["-o", "a.vmbc", "p.vmasm"], ["p.vmasm", "-o", "b.vmbc"]):
        p = run([asm] + args, cwd=tmp_path)
        assert p.returncode == 0, (args, p.stderr)
    assert (tmp_path / "a.vmbc").read_bytes() == (tmp_path / "b.vmbc").read_bytes()
    first = run([asm, "--dump", "a.vmbc"], cwd=tmp_path)
    second = run([asm, "a.vmbc", "--dump"], cwd=tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == second.stdout and first.stdout.startswith("module p version 1"), first.stdout
    err = one_line_error(run([asm, "a.vmbc"], cwd=tmp_path), "graphrt-vm-asm")
    assert "give either -o OUT.vmbc or --dump" in err, err


def test_run_takes_the_model_after_its_options(mlp):
    p = run([app("graphrt-run"), "--input", "data=input_data.npy", "deploy_factory.so"], cwd=mlp.dir)
    assert p.returncode == 0, p.stderr
    assert "output 0: (1, 10) float32" in p.stdout


def test_runtime_bench_takes_a_model_file_or_a_folder(mlp):
    bench = binary("runtime_bench")
    for model in (mlp.path("deploy_factory.so"), mlp.dir):
        p = run([bench, "--runs", "3", "--concurrent", "1", "--seconds", "0.05", model])
        assert p.returncode == 0, p.stderr
        assert re.search(r"load +[\d.]+ ms +run +[\d.]+ ms \(best +[\d.]+\) +peak\+ +[\d.]+ MB +tput1 +[\d.]+/s",
                         p.stdout), p.stdout
    err = one_line_error(run([bench, "--runs", "x", mlp.dir]), "runtime_bench")
    assert "option '--runs' expects an integer, got 'x'" in err, err


def test_misspelled_flag_gets_did_you_mean():
    err = one_line_error(run([app("graphrt-run"), "--outptu-dir", "x"]), "graphrt-run")
    assert "unknown option '--outptu-dir' (did you mean --output-dir?)" in err, err
    err = one_line_error(run([app("graphrt-inspect"), "--grpah", "g.json"]), "graphrt-inspect")
    assert "(did you mean --graph?)" in err, err


def test_inputs_with_name_equals_file_points_to_input(mlp):
    err = one_line_error(run([app("graphrt-run"), mlp.path("deploy_factory.so"), "--inputs", "data=in.npy"]),
                         "graphrt-run")
    assert "--inputs takes one .npz file" in err and "use --input data=in.npy" in err, err


def test_function_help_says_the_only_function_is_picked():
    p = run([app("graphrt-run"), "--help"])
    block = p.stdout[p.stdout.index("--function"):p.stdout.index("--device")]
    assert "or the only function when there is one" in " ".join(block.split()), block
