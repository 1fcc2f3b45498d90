// The VM's own implementations of TVM's `vm.builtin.*` (and the cheap
// `relax.run.*`) functions: called natively with register values, not
// through the packed convention. A builtin reads its arguments through
// BuiltinArgs, whose errors name the builtin and the argument.
#pragma once

#include <cstdint>
#include <string>

#include "backends/relax/value.h"

namespace graphrt {
namespace relax {

class VirtualMachine;

class BuiltinArgs {
 public:
  BuiltinArgs(const char* name, const Value* const* argv, int n) : name_(name), argv_(argv), n_(n) {}
  int size() const { return n_; }
  const char* name() const { return name_; }
  // Inline: every builtin reads its arguments through it, several per VM instruction.
  const Value& at(int i) const {
    if (i >= n_) throw missing(i);
    return *argv_[i];
  }
  int64_t as_int(int i, const char* what) const;
  NDArray as_tensor(int i, const char* what) const;
  const ShapeObj& as_shape(int i, const char* what) const;
  const Ref<TupleObj>& as_tuple(int i, const char* what) const;
  DLDataType as_dtype(int i, const char* what) const;
  std::string as_string(int i, const char* what) const;
  // An optional error-context string (TVM passes one, possibly None); "" when absent. A
  // reference, not a copy: the check builtins read it on every call and use it only on error.
  const std::string& error_context(int i) const;
  // The shape heap argument (None allowed: a function with no symbolic dims).
  int64_t* heap(int i, int64_t* size) const;
  void require(int count, const char* usage) const;
  Error error(const std::string& message, ErrorKind kind = ErrorKind::kInvalidArgument) const;
  Error type_error(int i, const char* what, const char* expected) const;
  Error missing(int i) const;

 private:
  const char* name_;
  const Value* const* argv_;
  int n_;
};

using BuiltinFn = void (*)(VirtualMachine& vm, const BuiltinArgs& args, Value* ret);

// The builtin named `name`, or null.
BuiltinFn find_builtin(const std::string& name);

// The families, registered into the table by builtin_table.cc.
struct BuiltinEntry {
  const char* name;
  BuiltinFn fn;
};
const BuiltinEntry* shape_builtins(size_t* count);
const BuiltinEntry* storage_builtins(size_t* count);
const BuiltinEntry* data_builtins(size_t* count);
const BuiltinEntry* set_builtins(size_t* count);
const BuiltinEntry* cuda_graph_builtins(size_t* count);

}  // namespace relax
}  // namespace graphrt
