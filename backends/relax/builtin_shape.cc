// Shapes and structural checks: the shape heap, match_shape / make_shape and
// their prim-value forms, and the check_*_info family. A mismatch is the
// caller's error: messages carry TVM's error context (which function, which
// parameter) and the dimension.
#include <string>
#include <vector>

#include "backends/relax/builtin.h"
#include "backends/relax/interpreter.h"
#include "src/base/call_buffer/call_buffer.h"

namespace graphrt {
namespace relax {

namespace {

constexpr int64_t kMaxShapeHeap = int64_t{1} << 20;
enum MatchCode : int64_t { kAssertEqualToImm = 0, kStoreToHeap = 1, kNoOp = 2, kAssertEqualToLoad = 3 };
enum MakeCode : int64_t { kUseImm = 0, kLoadShape = 1 };

std::string with_context(const std::string& ctx, const std::string& message) {
  return ctx.empty() ? message : ctx + ": " + message;
}

// The `key=` field of TVM's "ErrorContext(fn=main, loc=param[0], param=x, annotation=...)", or "".
std::string context_field(const std::string& ctx, const std::string& key) {
  const std::string tag = key + "=";
  size_t at = ctx.find(tag);
  while (at != std::string::npos && at > 0 && ctx[at - 1] != '(' && ctx[at - 1] != ' ') at = ctx.find(tag, at + 1);
  if (at == std::string::npos) return "";
  const size_t begin = at + tag.size();
  const size_t end = ctx.find_first_of(",)", begin);
  return ctx.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// A check of a function's own parameter said as a model's input is (as a graph model's is):
// "input 'x' of 'main' has dtype float64, the function expects float32"; other checks keep
// TVM's context.
std::string input_mismatch(const std::string& ctx, const std::string& what, const std::string& message) {
  const std::string loc = context_field(ctx, "loc");
  const std::string name = context_field(ctx, "param");
  const std::string fn = context_field(ctx, "fn");
  if (loc.rfind("param[", 0) != 0 || name.empty() || fn.empty()) return with_context(ctx, message);
  return "input " + quote_untrusted(name) + " of " + quote_untrusted(fn) + " " + what;
}

int64_t& heap_slot(const BuiltinArgs& args, int64_t* heap, int64_t size, int64_t index) {
  if (!heap) throw args.error("uses the shape heap but none was given");
  if (index < 0 || index >= size)
    throw args.error("shape heap index " + std::to_string(index) + " outside the heap of " + std::to_string(size),
                     ErrorKind::kOutOfRange);
  return heap[index];
}

// The shape heap that match_shape / match_prim_value store into: never one of the executable's
// tensor constants, which may be read-only memory (a params cache's mapping) and are shared by
// every VM of the executable. TVM's code passes the heap alloc_shape_heap made.
int64_t* writable_heap(VirtualMachine& vm, const BuiltinArgs& args, int i, int64_t* size) {
  int64_t* heap = args.heap(i, size);
  if (heap && vm.linked().overlaps_constant(heap, static_cast<size_t>(*size) * sizeof(int64_t)))
    throw args.error("the shape heap it writes into is a constant of the executable (constants are read-only)");
  return heap;
}

// What errors call dimension `dim` of a match_shape, or the value of a match_prim_value (-1).
std::string dimension_name(int64_t dim) { return dim < 0 ? "value" : "shape[" + std::to_string(dim) + "]"; }

// One dimension (or prim value, dim -1) against its code.
void match_one(const BuiltinArgs& args, int64_t* heap, int64_t heap_size, int64_t actual, int64_t code, int64_t v,
               const std::string& ctx, int64_t dim) {
  switch (code) {
    case kAssertEqualToImm:
      if (actual != v)
        throw args.error(with_context(ctx, "match_cast error: " + dimension_name(dim) + " is " + std::to_string(actual) +
                                               ", expected " + std::to_string(v)))
            .with("dimension", dimension_name(dim));
      return;
    case kStoreToHeap:
      heap_slot(args, heap, heap_size, v) = actual;
      return;
    case kNoOp:
      return;
    case kAssertEqualToLoad: {
      const int64_t expected = heap_slot(args, heap, heap_size, v);
      if (actual != expected)
        throw args.error(with_context(ctx, "match_cast error: " + dimension_name(dim) + " is " + std::to_string(actual) +
                                               ", expected " + std::to_string(expected) + " (as bound before)"))
            .with("dimension", dimension_name(dim));
      return;
    }
    default:
      throw args.error("unknown match_shape code " + std::to_string(code));
  }
}

void alloc_shape_heap(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(vm, size)");
  const int64_t size = args.as_int(1, "size");
  if (size < 0 || size > kMaxShapeHeap)
    throw args.error("shape heap size " + std::to_string(size) + " outside 0.." + std::to_string(kMaxShapeHeap),
                     ErrorKind::kResourceExhausted);
  vm.charge(static_cast<uint64_t>(size), args.name());
  NDArray heap = vm.recycler().shape_heap(vm.pool(), size);
  if (size) std::fill_n(static_cast<int64_t*>(heap->data), size, 0);
  *ret = std::move(heap);
}

void match_shape(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(3, "(value, heap, ndim, code, value, ..., err_ctx)");
  const Value& input = args.at(0);
  const std::vector<int64_t>* dims = nullptr;
  if (const NDArray* t = std::get_if<NDArray>(&input)) {
    dims = &t->shape();
  } else if (const auto* s = std::get_if<Ref<ShapeObj>>(&input)) {
    dims = &(*s)->dims;
  } else {
    throw args.type_error(0, "value", "a tensor or a shape");
  }
  int64_t heap_size = 0;
  int64_t* heap = writable_heap(vm, args, 1, &heap_size);
  const int64_t ndim = args.as_int(2, "ndim");
  if (ndim < 0 || ndim > (args.size() - 3) / 2) throw args.error("ndim " + std::to_string(ndim) + " does not match its codes");
  const std::string& ctx = args.error_context(static_cast<int>(3 + ndim * 2));
  if (static_cast<int64_t>(dims->size()) != ndim)
    throw args.error(with_context(ctx, "match_cast error: expected " + std::to_string(ndim) + " dimensions, got " +
                                           std::to_string(dims->size())))
        .with("dimension", "ndim");
  for (int64_t i = 0; i < ndim; ++i) {
    const int k = static_cast<int>(3 + i * 2);
    match_one(args, heap, heap_size, (*dims)[static_cast<size_t>(i)], args.as_int(k, "code"), args.as_int(k + 1, "value"),
              ctx, i);
  }
  *ret = std::monostate();
}

void match_prim_value(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(4, "(value, heap, code, reg, err_ctx)");
  int64_t heap_size = 0;
  int64_t* heap = writable_heap(vm, args, 1, &heap_size);
  match_one(args, heap, heap_size, args.as_int(0, "value"), args.as_int(2, "code"), args.as_int(3, "reg"),
            args.error_context(4), -1);
  *ret = std::monostate();
}

int64_t make_one(const BuiltinArgs& args, int64_t* heap, int64_t heap_size, int64_t code, int64_t v) {
  if (code == kUseImm) return v;
  if (code == kLoadShape) return heap_slot(args, heap, heap_size, v);
  throw args.error("unknown make_shape code " + std::to_string(code));
}

void make_shape(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(heap, ndim, code, value, ...)");
  int64_t heap_size = 0;
  int64_t* heap = args.heap(0, &heap_size);
  const int64_t ndim = args.as_int(1, "ndim");
  if (ndim < 0 || ndim > (args.size() - 2) / 2) throw args.error("ndim " + std::to_string(ndim) + " does not match its codes");
  // On the stack up to a rank no tensor reaches; the shape itself is the VM's recycled one.
  CallBuffer<int64_t> dims(static_cast<int>(ndim));
  for (int64_t i = 0; i < ndim; ++i) {
    const int k = static_cast<int>(2 + i * 2);
    dims[i] = make_one(args, heap, heap_size, args.as_int(k, "code"), args.as_int(k + 1, "value"));
  }
  *ret = vm.recycler().shape(dims.data(), static_cast<size_t>(ndim));
}

void make_prim_value(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(3, "(heap, code, reg)");
  int64_t heap_size = 0;
  int64_t* heap = args.heap(0, &heap_size);
  *ret = make_one(args, heap, heap_size, args.as_int(1, "code"), args.as_int(2, "reg"));
}

bool is_void_dtype(DLDataType t) { return t.code == kDLOpaqueHandle && t.bits == 0; }

void check_tensor_info(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(3, "(value, ndim, [dtype], err_ctx)");
  const std::string& ctx = args.error_context(args.size() == 3 ? 2 : 3);
  const NDArray* t = std::get_if<NDArray>(&args.at(0));
  if (!t)
    throw args.error(with_context(ctx, std::string("expected a tensor, got ") + value_kind_name(args.at(0))),
                     ErrorKind::kTypeMismatch);
  const int64_t ndim = args.as_int(1, "ndim");
  const size_t rank = t->shape().size();
  if (ndim != -1 && static_cast<int64_t>(rank) != ndim)
    throw args.error(input_mismatch(ctx,
                                    "has " + std::to_string(rank) + " dimensions, the function expects " +
                                        std::to_string(ndim),
                                    "expected a tensor of " + std::to_string(ndim) + " dimensions, got " +
                                        std::to_string(rank)));
  if (args.size() > 3) {
    const DLDataType want = args.as_dtype(2, "dtype");
    if (!is_void_dtype(want) && t->dtype() != want)
      throw args.error(input_mismatch(ctx,
                                      "has dtype " + dtype_to_string(t->dtype()) + ", the function expects " +
                                          dtype_to_string(want),
                                      "expected a tensor of dtype " + dtype_to_string(want) + ", got " +
                                          dtype_to_string(t->dtype())),
                       ErrorKind::kTypeMismatch);
  }
  *ret = std::monostate();
}

void check_shape_info(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(value, ndim, err_ctx)");
  const std::string& ctx = args.error_context(2);
  const auto* s = std::get_if<Ref<ShapeObj>>(&args.at(0));
  if (!s)
    throw args.error(with_context(ctx, std::string("expected a shape, got ") + value_kind_name(args.at(0))),
                     ErrorKind::kTypeMismatch);
  const int64_t ndim = args.as_int(1, "ndim");
  if (ndim != -1 && static_cast<int64_t>((*s)->dims.size()) != ndim)
    throw args.error(with_context(ctx, "expected a shape of " + std::to_string(ndim) + " dimensions, got " +
                                           std::to_string((*s)->dims.size())));
  *ret = std::monostate();
}

void check_prim_value_info(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(value, dtype, err_ctx)");
  const std::string& ctx = args.error_context(2);
  const Value& v = args.at(0);
  const DLDataType want = args.as_dtype(1, "dtype");
  const bool ok = want.code == kDLFloat ? (std::holds_alternative<double>(v) || std::holds_alternative<int64_t>(v))
                                        : std::holds_alternative<int64_t>(v);
  if (!ok)
    throw args.error(with_context(ctx, "expected a " + dtype_to_string(want) + " value, got " + value_kind_name(v)),
                     ErrorKind::kTypeMismatch);
  *ret = std::monostate();
}

void check_tuple_info(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(value, size, err_ctx)");
  const std::string& ctx = args.error_context(2);
  const auto* t = std::get_if<Ref<TupleObj>>(&args.at(0));
  if (!t)
    throw args.error(with_context(ctx, std::string("expected a tuple, got ") + value_kind_name(args.at(0))),
                     ErrorKind::kTypeMismatch);
  const int64_t size = args.as_int(1, "size");
  if (static_cast<int64_t>((*t)->items.size()) != size)
    throw args.error(with_context(ctx, "expected a tuple of " + std::to_string(size) + " elements, got " +
                                           std::to_string((*t)->items.size())));
  *ret = std::monostate();
}

void check_func_info(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(value, err_ctx)");
  const Value& v = args.at(0);
  if (!std::holds_alternative<Ref<ClosureObj>>(v) && !std::holds_alternative<PackedFunc>(v))
    throw args.error(with_context(args.error_context(1), std::string("expected a function, got ") + value_kind_name(v)),
                     ErrorKind::kTypeMismatch);
  *ret = std::monostate();
}

const BuiltinEntry kShapeBuiltins[] = {
    {"vm.builtin.alloc_shape_heap", alloc_shape_heap},
    {"vm.builtin.match_shape", match_shape},
    {"vm.builtin.match_prim_value", match_prim_value},
    {"vm.builtin.make_shape", make_shape},
    {"vm.builtin.make_prim_value", make_prim_value},
    {"vm.builtin.check_tensor_info", check_tensor_info},
    {"vm.builtin.check_shape_info", check_shape_info},
    {"vm.builtin.check_prim_value_info", check_prim_value_info},
    {"vm.builtin.check_tuple_info", check_tuple_info},
    {"vm.builtin.check_func_info", check_func_info},
};

}  // namespace

const BuiltinEntry* shape_builtins(size_t* count) {
  *count = sizeof(kShapeBuiltins) / sizeof(kShapeBuiltins[0]);
  return kShapeBuiltins;
}

}  // namespace relax
}  // namespace graphrt
