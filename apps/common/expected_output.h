// graphrt-run --expected-output I=FILE.npy [--tolerance T]: an output compared, value by value,
// with the array a reference run (TVM's own, a float64 forward pass) wrote, so that a script
// learns from the exit status whether a model still computes what it should.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/ndarray.h"
#include "npy.h"

namespace graphrt_apps {

struct ExpectedOutput {
  size_t output = 0;  // the model's output index
  std::string file;
  NpyArray array;
};

// Parses and reads each "I=FILE.npy"; throws UsageError on a malformed spec, graphrt::Error
// naming the file when it cannot be read.
std::vector<ExpectedOutput> read_expected_outputs(const std::vector<std::string>& specs);

struct ExpectedOutputResult {
  size_t output = 0;
  std::string file;
  bool matches = false;
  double max_difference = 0;          // over all values (NaN against NaN counts as equal)
  int64_t first_differing_index = -1; // flat index of the first value past the tolerance
  std::string problem;                // the one-line reason when it does not match
};

// Compares each output with its expected array: same dtype (as .npy holds it) and shape, every
// value within `tolerance` (absolute). Throws graphrt::Error when an output index is past the end.
std::vector<ExpectedOutputResult> check_expected_outputs(const std::vector<graphrt::NDArray>& outputs,
                                                         const std::vector<ExpectedOutput>& expected,
                                                         double tolerance);

// Element i of a host tensor as a double (float16/bfloat16 widened, ints sign-extended).
double element_as_double(const graphrt::NDArray& host, int64_t i);
// Number of scalar values in `a` (lanes included).
int64_t value_count(const graphrt::NDArray& a);
// A value as the messages print it (9 significant digits).
std::string number_text(double v);

}  // namespace graphrt_apps
