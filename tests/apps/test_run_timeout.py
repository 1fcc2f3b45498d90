"""graphrt-run --timeout: a graph run stops between nodes, a Relax VM before its next call, with
one error line and exit 1; a run within the limit is unchanged."""
import os
import time

from _apps import app, one_line_error, run
from _cases import case_dir
from _relax_cases import RelaxCase


def test_graph_run_stops_at_its_timeout():
    d = case_dir("squeezenet1.1")
    args = [app("graphrt-run"), os.path.join(d, "deploy_factory.so"), "--input",
            "data=%s" % os.path.join(d, "input_data.npy"), "--threads", "1"]
    assert run(args + ["--timeout", "60"]).returncode == 0
    t0 = time.monotonic()
    p = run(args + ["--repeat", "100000", "--timeout", "0.3"])
    took = time.monotonic() - t0
    line = one_line_error(p, "graphrt-run")
    assert p.returncode == 1 and "run interrupted: its deadline passed before node" in line and "node: " in line, line
    assert took < 30, took


def test_relax_run_stops_at_its_timeout():
    case = RelaxCase("relax_mlp")
    args = [app("graphrt-run"), case.path("deploy_relax.so"), "--function", case.entry]
    for name, path in list(case.input_sets())[0][1].items():
        args += ["--input", "%s=%s" % (name, path)]
    assert run(args + ["--timeout", "60"]).returncode == 0
    p = run(args + ["--repeat", "1000000", "--timeout", "0.3"])
    line = one_line_error(p, "graphrt-run")
    assert p.returncode == 1 and "Relax VM run interrupted: its deadline passed before instruction" in line, line
    assert "function: " in line, line
