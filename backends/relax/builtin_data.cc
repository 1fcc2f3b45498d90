// Tuples, closures, control-flow helpers and calls the VM makes on behalf of
// the code: make_tuple / tuple_getitem / tuple_reset_item, make_closure /
// invoke_closure, call_tir_dyn, read_if_cond, null_value, invoke_debug_func.
#include <string>
#include <vector>

#include "backends/relax/builtin.h"
#include "backends/relax/interpreter.h"
#include "backends/relax/packed_convention.h"
#include "src/base/call_buffer/call_buffer.h"

namespace graphrt {
namespace relax {

namespace {

std::vector<const Value*> argument_span(const BuiltinArgs& args, int begin, int end) {
  std::vector<const Value*> out;
  for (int i = begin; i < end; ++i) out.push_back(&args.at(i));
  return out;
}

void null_value(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  if (args.size() != 0) throw args.error("takes no arguments");
  *ret = std::monostate();
}

// Refuses a tuple or closure that would nest its items deeper than kMaxValueDepth.
void check_depth(const BuiltinArgs& args, const std::vector<Value>& items) {
  const size_t depth = nested_depth(items);
  if (depth > kMaxValueDepth)
    throw args.error("tuples and closures would nest " + std::to_string(depth) + " deep, more than " +
                         std::to_string(kMaxValueDepth),
                     ErrorKind::kResourceExhausted);
}

void make_tuple(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  // The tuple is the VM's recycled one (a decode step makes the same tuples every call).
  CallBuffer<const Value*> items(args.size());
  for (int i = 0; i < args.size(); ++i) items[i] = &args.at(i);
  Ref<TupleObj> t = vm.recycler().tuple(items.data(), static_cast<size_t>(args.size()));
  if (t->depth > kMaxValueDepth) {
    std::vector<Value> held;
    held.swap(t->items);
    check_depth(args, held);  // throws, naming the depth
  }
  *ret = std::move(t);
}

size_t tuple_index(const BuiltinArgs& args, const TupleObj& t) {
  const int64_t i = args.as_int(1, "index");
  if (i < 0 || i >= static_cast<int64_t>(t.items.size()))
    throw args.error("index " + std::to_string(i) + " outside a tuple of " + std::to_string(t.items.size()),
                     ErrorKind::kOutOfRange);
  return static_cast<size_t>(i);
}

void tuple_getitem(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(tuple, index)");
  const Ref<TupleObj>& t = args.as_tuple(0, "tuple");
  *ret = t->items[tuple_index(args, *t)];
}

void tuple_reset_item(VirtualMachine&, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(tuple, index)");
  const Ref<TupleObj>& t = args.as_tuple(0, "tuple");
  t->items[tuple_index(args, *t)] = std::monostate();
  *ret = std::monostate();
}

void make_closure(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(function, bound...)");
  std::vector<Value> bound;
  for (int i = 1; i < args.size(); ++i) bound.push_back(args.at(i));
  check_depth(args, bound);
  const Value& f = args.at(0);
  if (const auto* c = std::get_if<Ref<ClosureObj>>(&f)) {
    vm.charge((*c)->bound.size(), args.name());
    std::vector<Value> all = (*c)->bound;
    all.insert(all.begin(), bound.begin(), bound.end());
    check_depth(args, all);
    *ret = (*c)->function >= 0 ? Ref<ClosureObj>(make_ref<ClosureObj>((*c)->function, std::move(all)))
                               : Ref<ClosureObj>(make_ref<ClosureObj>((*c)->packed, std::move(all)));
  } else if (const auto* p = std::get_if<PackedFunc>(&f)) {
    *ret = Ref<ClosureObj>(make_ref<ClosureObj>(*p, std::move(bound)));
  } else {
    throw args.type_error(0, "function", "a function");
  }
}

// Argument `i` must be something call_value can call.
void require_callable(const BuiltinArgs& args, int i, const char* what) {
  const Value& v = args.at(i);
  if (!std::holds_alternative<Ref<ClosureObj>>(v) && !std::holds_alternative<PackedFunc>(v))
    throw args.type_error(i, what, "a closure or function");
}

void invoke_closure(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(vm, closure, args...)");
  require_callable(args, 1, "closure");
  const std::vector<const Value*> rest = argument_span(args, 2, args.size());
  *ret = vm.call_value(args.at(1), rest.data(), static_cast<int>(rest.size()));
}

void call_tir_dyn(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(function, args..., shape)");
  require_callable(args, 0, "function");
  const ShapeObj& unpack = args.as_shape(args.size() - 1, "shape to unpack");
  vm.charge(unpack.dims.size(), args.name());
  std::vector<Value> dims(unpack.dims.begin(), unpack.dims.end());
  std::vector<const Value*> all = argument_span(args, 1, args.size() - 1);
  for (const Value& d : dims) all.push_back(&d);
  *ret = vm.call_value(args.at(0), all.data(), static_cast<int>(all.size()));
}

template <typename T>
int64_t first_element(const NDArray& a) {
  return static_cast<int64_t>(*reinterpret_cast<const T*>(static_cast<const char*>(a->data) + a->byte_offset));
}

void read_if_cond(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(1, "(cond)");
  const Value& v = args.at(0);
  if (const int64_t* i = std::get_if<int64_t>(&v)) {
    *ret = int64_t{*i != 0};
    return;
  }
  NDArray a = args.as_tensor(0, "cond");
  if (a.device().device_type != kDLCPU) a = vm.device_apis().copy_to_device(a, DLDevice{kDLCPU, 0});
  const DLDataType t = a.dtype();
  if ((t.code != kDLInt && t.code != kDLUInt && t.code != kDLBoolCode) || a.nbytes() == 0)
    throw args.error("condition must be a non-empty integer or bool tensor, got " + dtype_to_string(t));
  int64_t r = 0;
  switch (t.bits) {
    case 1:
    case 8: r = first_element<int8_t>(a); break;
    case 16: r = first_element<int16_t>(a); break;
    case 32: r = first_element<int32_t>(a); break;
    case 64: r = first_element<int64_t>(a); break;
    default: throw args.error("condition of unsupported dtype " + dtype_to_string(t), ErrorKind::kUnsupported);
  }
  *ret = int64_t{r != 0};
}

void invoke_debug_func(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(3, "(io_effect, name, line_info, args...)");
  const std::string name = args.as_string(1, "debug function name");
  PackedFunc f = vm.runtime().function(name);
  if (!f) throw args.error("debug function " + quote_untrusted(name) + " is not registered", ErrorKind::kNotFound).with("function", name);
  std::vector<const Value*> call_args = argument_span(args, 2, args.size());
  Value ignored;
  call_packed(f, call_args.data(), static_cast<int>(call_args.size()), &ignored);
  *ret = args.at(0);
}

// assert_op's message stops growing at about this many characters: a tuple
// may share its items (t = (u, u), u = (v, v), ...), so a walk of every item
// could be exponential in the code's length.
constexpr size_t kMaxRendered = 4096;

// Appends a value as assert_op's message shows it.
void render(const Value& v, std::string& out) {
  if (out.size() >= kMaxRendered) return;
  switch (v.index()) {
    case kIntValue: out += std::to_string(std::get<int64_t>(v)); break;
    case kFloatValue: out += std::to_string(std::get<double>(v)); break;
    case kStringValue: out += *std::get<StringRef>(v); break;
    case kTensorValue: {
      const NDArray& a = std::get<NDArray>(v);
      out += "NDArray" + shape_to_string(a.shape()) + " " + dtype_to_string(a.dtype());
      break;
    }
    case kShapeValue: out += "Shape" + shape_to_string(std::get<Ref<ShapeObj>>(v)->dims); break;
    case kTupleValue: {
      out += "(";
      bool first = true;
      for (const Value& item : std::get<Ref<TupleObj>>(v)->items) {
        if (out.size() >= kMaxRendered) break;
        if (!first) out += ", ";
        first = false;
        render(item, out);
      }
      out += ")";
      break;
    }
    default: out += value_kind_name(v);
  }
  if (out.size() > kMaxRendered) out.replace(kMaxRendered, std::string::npos, "...");
}

// relax.run.assert_op(condition, format, args...): fails with the format's
// "{}" filled by the arguments (or the arguments listed) when the condition
// (an int or a bool scalar tensor) is false.
void assert_op(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  args.require(2, "(condition, format, args...)");
  Value truth;
  const Value* condition[1] = {&args.at(0)};
  read_if_cond(vm, BuiltinArgs(args.name(), condition, 1), &truth);
  *ret = std::monostate();
  if (std::get<int64_t>(truth)) return;
  const std::string format = args.as_string(1, "format");
  std::string message;
  if (format.empty()) {
    for (int i = 2; i < args.size(); ++i) {
      if (i > 2) message += ", ";
      render(args.at(i), message);
    }
  } else {
    int next = 2;
    for (size_t i = 0; i < format.size(); ++i) {
      if (format.compare(i, 2, "{}") == 0 && next < args.size()) {
        render(args.at(next++), message);
        ++i;
      } else {
        message += format[i];
      }
    }
  }
  throw args.error("Assertion Failed" + (message.empty() ? std::string() : ": " + message));
}

const BuiltinEntry kDataBuiltins[] = {
    {"vm.builtin.null_value", null_value},
    {"vm.builtin.make_tuple", make_tuple},
    {"vm.builtin.tuple_getitem", tuple_getitem},
    {"vm.builtin.tuple_reset_item", tuple_reset_item},
    {"vm.builtin.make_closure", make_closure},
    {"vm.builtin.invoke_closure", invoke_closure},
    {"vm.builtin.call_tir_dyn", call_tir_dyn},
    {"vm.builtin.read_if_cond", read_if_cond},
    {"vm.builtin.invoke_debug_func", invoke_debug_func},
    {"relax.run.assert_op", assert_op},
};

}  // namespace

const BuiltinEntry* data_builtins(size_t* count) {
  *count = sizeof(kDataBuiltins) / sizeof(kDataBuiltins[0]);
  return kDataBuiltins;
}

}  // namespace relax
}  // namespace graphrt
