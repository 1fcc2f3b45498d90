#include "expected_output.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "args.h"
#include "graphrt/error.h"
#include "graphrt/float16.h"

namespace graphrt_apps {

using graphrt::Error;
using graphrt::operator==;

double element_as_double(const graphrt::NDArray& host, int64_t i) {
  DLDataType t = host.dtype();
  const char* p = static_cast<const char*>(host->data);
  if (t.code == kDLFloat && t.bits == 32) {
    float v;
    std::memcpy(&v, p + i * 4, 4);
    return v;
  }
  if (t.code == kDLFloat && t.bits == 64) {
    double v;
    std::memcpy(&v, p + i * 8, 8);
    return v;
  }
  if ((t.code == kDLFloat || t.code == kDLBfloat) && t.bits == 16) {
    uint16_t bits;
    std::memcpy(&bits, p + i * 2, 2);
    return t.code == kDLFloat ? graphrt::float16_to_float(bits) : graphrt::bfloat16_to_float(bits);
  }
  const int bytes = t.bits < 8 ? 1 : t.bits / 8;
  int64_t v = 0;
  std::memcpy(&v, p + i * bytes, bytes);
  const int width = bytes * 8;
  if (t.code == kDLInt && width < 64 && ((v >> (width - 1)) & 1)) v -= int64_t(1) << width;
  if (t.code == kDLUInt && width == 64) return static_cast<double>(static_cast<uint64_t>(v));
  return static_cast<double>(v);
}

int64_t value_count(const graphrt::NDArray& a) {
  return graphrt::shape_numel(a.shape().data(), static_cast<int>(a.shape().size())) * a.dtype().lanes;
}

namespace {

// "(0, 3)": a flat index as the index of each dimension.
std::string index_text(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return graphrt::shape_to_string(idx);
}

}  // namespace

std::string number_text(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

std::vector<ExpectedOutput> read_expected_outputs(const std::vector<std::string>& specs) {
  std::vector<ExpectedOutput> out;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    ExpectedOutput e;
    long long index = -1;
    try {
      size_t used = 0;
      index = std::stoll(spec.substr(0, eq), &used);
      if (used != eq) index = -1;
    } catch (...) {
      index = -1;
    }
    if (eq == std::string::npos || index < 0 || eq + 1 == spec.size())
      throw UsageError("--expected-output expects OUTPUT_INDEX=FILE.npy (e.g. 0=out0.npy), got '" + spec + "'");
    e.output = static_cast<size_t>(index);
    e.file = spec.substr(eq + 1);
    e.array = read_npy(e.file);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<ExpectedOutputResult> check_expected_outputs(const std::vector<graphrt::NDArray>& outputs,
                                                         const std::vector<ExpectedOutput>& expected,
                                                         double tolerance) {
  std::vector<ExpectedOutputResult> results;
  for (const ExpectedOutput& e : expected) {
    ExpectedOutputResult r;
    r.output = e.output;
    r.file = e.file;
    if (e.output >= outputs.size()) {
      throw Error("--expected-output names output " + std::to_string(e.output) + ", but the model has " +
                  std::to_string(outputs.size()) + " output(s)")
          .with("file", e.file);
    }
    graphrt::NDArray host = outputs[e.output].copy_to_device(DLDevice{kDLCPU, 0});
    const std::string head = "output " + std::to_string(e.output) + " ";
    if (!npy_dtype_fits(e.array.dtype, host.dtype())) {
      r.problem = head + "is " + graphrt::dtype_to_string(host.dtype()) + ", " + e.file + " holds " +
                  graphrt::dtype_to_string(e.array.dtype);
    } else if (e.array.shape != std::vector<int64_t>(host.shape().begin(), host.shape().end())) {
      r.problem = head + "has shape " + graphrt::shape_to_string(host.shape()) + ", " + e.file + " holds " +
                  graphrt::shape_to_string(e.array.shape);
    } else {
      graphrt::NDArray want = graphrt::NDArray::empty(e.array.shape, host.dtype(), DLDevice{kDLCPU, 0});
      want.copy_from_bytes(e.array.data.data(), e.array.data.size());
      int64_t worst = 0;
      double first_got = 0, first_want = 0;
      for (int64_t i = 0, n = value_count(host); i < n; ++i) {
        const double a = element_as_double(host, i), b = element_as_double(want, i);
        double d = std::fabs(a - b);
        if (std::isnan(a) || std::isnan(b)) d = (std::isnan(a) && std::isnan(b)) ? 0 : INFINITY;
        if (d > r.max_difference) {
          r.max_difference = d;
          worst = i;
        }
        if (d > tolerance && r.first_differing_index < 0) {
          r.first_differing_index = i;
          first_got = a;
          first_want = b;
        }
      }
      if (r.first_differing_index >= 0) {
        r.problem = head + "differs from " + e.file + ": max difference " + number_text(r.max_difference) +
                    " at index " + index_text(worst, e.array.shape) + "; first differing index " +
                    index_text(r.first_differing_index, e.array.shape) + " (flat " +
                    std::to_string(r.first_differing_index) + "): got " + number_text(first_got) + ", expected " +
                    number_text(first_want) + " (tolerance " + number_text(tolerance) + ")";
      }
    }
    r.matches = r.problem.empty();
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace graphrt_apps
