"""Timing results of repeated runs (TVM's tvm.runtime.BenchmarkResult)."""
from ._lib import GraphrtError


class BenchmarkResult:
    """Timing of repeated runs in seconds (as tvm.runtime.BenchmarkResult): `results` holds one
    value per repeat (each the mean of that repeat's calls); mean, median, min, max and std
    (population) summarise them."""

    def __init__(self, results):
        self.results = list(results)
        r = sorted(self.results)
        n = len(r)
        if n == 0:
            raise GraphrtError("BenchmarkResult needs at least one result")
        self.mean = sum(r) / n
        self.median = r[n // 2] if n % 2 else (r[n // 2 - 1] + r[n // 2]) / 2
        self.min = r[0]
        self.max = r[-1]
        self.std = (sum((x - self.mean) ** 2 for x in r) / n) ** 0.5

    def __repr__(self):
        return "BenchmarkResult(min=%r, mean=%r, median=%r, max=%r, std=%r, results=%r)" % (
            self.min, self.mean, self.median, self.max, self.std, self.results)

    def __str__(self):
        heads = ("mean (ms)", "median (ms)", "max (ms)", "min (ms)", "std (ms)")
        values = (self.mean, self.median, self.max, self.min, self.std)
        return ("Execution time summary:\n" + " ".join("%s" % h.center(12) for h in heads) + "\n" +
                " ".join(("%.4f" % (v * 1000)).center(12) for v in values) + "               ")
