// The contrib sort back end's registration: TVM's global sort functions, with
// TVM's argument lists, for the kernels that look them up by name.
#include "backends/contrib_sort/register.h"

#include <string>

#include "backends/contrib_sort/axis_sort.h"

namespace graphrt {
namespace contrib_sort {

namespace {

void require_args(const TVMArgs& args, int n, const char* usage) {
  if (args.size() < n)
    throw Error(ErrorKind::kTypeMismatch, std::string(usage) + ": " + std::to_string(args.size()) + " arguments given");
}

// (input, output, axis, is_ascend)
void sort_function(const TVMArgs& args, bool indices, const char* usage) {
  require_args(args, 4, usage);
  AxisSort s{args.as_tensor(0), static_cast<int>(args.as_int(2)), args.as_int(3) != 0};
  if (indices) return sort_indices(s, args.as_tensor(1));
  sort_values(s, args.as_tensor(1));
}

// (input, [values], [indices], k, axis, ret_type "both" | "values" | "indices", is_ascend)
void topk_function(const TVMArgs& args) {
  const char* usage = "tvm.contrib.sort.topk(input, outputs..., k, axis, ret_type, is_ascend)";
  require_args(args, 6, usage);
  const int n = args.size();
  const std::string ret_type = args.as_string(n - 2);
  const int outputs = ret_type == "both" ? 2 : 1;
  if (ret_type != "both" && ret_type != "values" && ret_type != "indices")
    throw Error("tvm.contrib.sort.topk: ret_type '" + ret_type + "' is not both, values or indices");
  if (n != outputs + 5) throw Error(ErrorKind::kTypeMismatch, std::string(usage) + ": " + std::to_string(n) + " arguments given");
  AxisSort s{args.as_tensor(0), static_cast<int>(args.as_int(n - 3)), args.as_int(n - 1) != 0};
  const DLTensor* values = ret_type == "indices" ? nullptr : args.as_tensor(1);
  const DLTensor* indices = ret_type == "values" ? nullptr : args.as_tensor(outputs);
  top_k(s, args.as_int(n - 4), values, indices);
}

void set(Runtime& runtime, const std::string& name, PackedBody body) {
  runtime.set_function(name, make_function([name, body](const TVMArgs& args, RetValue* ret) {
    try {
      body(args, ret);
    } catch (Error& e) {
      throw Error(e.kind(), name + ": " + e.message()).with("function", name);
    }
  }, name));
}

}  // namespace

void register_backend(Runtime& runtime) {
  set(runtime, "tvm.contrib.sort.sort", [](const TVMArgs& args, RetValue*) {
    sort_function(args, false, "tvm.contrib.sort.sort(input, output, axis, is_ascend)");
  });
  set(runtime, "tvm.contrib.sort.argsort", [](const TVMArgs& args, RetValue*) {
    sort_function(args, true, "tvm.contrib.sort.argsort(input, output, axis, is_ascend)");
  });
  set(runtime, "tvm.contrib.sort.argsort_nms", [](const TVMArgs& args, RetValue*) {
    require_args(args, 5, "tvm.contrib.sort.argsort_nms(input, sort_num, output, axis, is_ascend)");
    AxisSort s{args.as_tensor(0), static_cast<int>(args.as_int(3)), args.as_int(4) != 0};
    sort_indices_of_prefix(s, args.as_tensor(1), args.as_tensor(2));
  });
  set(runtime, "tvm.contrib.sort.topk", [](const TVMArgs& args, RetValue*) { topk_function(args); });
}

}  // namespace contrib_sort
}  // namespace graphrt
