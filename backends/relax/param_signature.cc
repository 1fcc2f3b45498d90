#include "backends/relax/param_signature.h"

#include "backends/relax/instruction.h"

namespace graphrt {
namespace relax {

namespace {

enum MatchCode : int64_t { kAssertEqualToImm = 0, kStoreToHeap = 1, kNoOp = 2, kAssertEqualToLoad = 3 };

// The parameter a Call argument word names, or -1.
int64_t parameter(int64_t word, int64_t num_args) {
  if (arg_kind(word) != ArgKind::kRegister) return -1;
  const int64_t r = arg_value(word);
  return r >= 0 && r < num_args ? r : -1;
}

bool immediate(int64_t word, int64_t* v) {
  if (arg_kind(word) != ArgKind::kImmediate) return false;
  *v = arg_value(word);
  return true;
}

void set_rank(ParamSignature& s, int64_t ndim) {
  if (ndim < 0 || ndim > 64 || s.ndim == ndim) return;
  s.ndim = ndim;
  s.dims.assign(static_cast<size_t>(ndim), ParamSignature::kAnyDim);
  s.symbols.assign(static_cast<size_t>(ndim), -1);
}

// check_tensor_info(value, ndim, dtype, err_ctx)
void tensor_info(const Executable& exe, const RawInstruction& in, ParamSignature& s) {
  s.tensor = true;
  int64_t ndim = -1;
  if (in.num_args > 1 && immediate(in.args[1], &ndim)) set_rank(s, ndim);
  if (in.num_args > 2 && arg_kind(in.args[2]) == ArgKind::kConstIdx) {
    const Value& c = exe.constants[static_cast<size_t>(arg_value(in.args[2]))];
    if (const DLDataType* t = std::get_if<DLDataType>(&c)) s.dtype = *t;
  }
}

// match_shape(value, heap, ndim, code0, v0, code1, v1, ..., err_ctx)
void match_shape(const RawInstruction& in, ParamSignature& s) {
  int64_t ndim = -1;
  if (in.num_args < 3 || !immediate(in.args[2], &ndim) || ndim < 0 || in.num_args < 3 + 2 * ndim) return;
  s.tensor = true;
  set_rank(s, ndim);
  if (s.ndim != ndim) return;
  for (int64_t d = 0; d < ndim; ++d) {
    int64_t code = -1, v = 0;
    if (!immediate(in.args[3 + 2 * d], &code) || !immediate(in.args[4 + 2 * d], &v)) continue;
    const size_t i = static_cast<size_t>(d);
    if (code == kAssertEqualToImm) s.dims[i] = v;
    if (code == kStoreToHeap || code == kAssertEqualToLoad) s.symbols[i] = v;
  }
}

}  // namespace

std::vector<ParamSignature> param_signatures(const Executable& exe, int64_t function) {
  const FunctionInfo& f = exe.functions[static_cast<size_t>(function)];
  std::vector<ParamSignature> out(static_cast<size_t>(f.num_args > 0 ? f.num_args : 0));
  if (f.kind != FunctionKind::kVMFunc) return out;
  for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) {
    const RawInstruction in = read_instruction(exe, pc);
    if (in.op != Opcode::kCall || in.num_args < 1) continue;
    const int64_t p = parameter(in.args[0], f.num_args);
    if (p < 0) continue;
    const std::string& callee = exe.functions[static_cast<size_t>(in.func_index)].name;
    if (callee == "vm.builtin.check_tensor_info") tensor_info(exe, in, out[static_cast<size_t>(p)]);
    if (callee == "vm.builtin.match_shape") match_shape(in, out[static_cast<size_t>(p)]);
  }
  return out;
}

std::string signature_text(const ParamSignature& s) {
  if (!s.tensor) return "?";
  std::string text = s.dtype.bits ? dtype_to_string(s.dtype) : std::string("?");
  if (s.ndim < 0) return text + "[...]";
  text += "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i) text += ", ";
    if (s.dims[i] != ParamSignature::kAnyDim) {
      text += std::to_string(s.dims[i]);
    } else if (s.symbols[i] >= 0) {
      text += "n" + std::to_string(s.symbols[i]);
    } else {
      text += "?";
    }
  }
  return text + "]";
}

std::vector<int64_t> signature_record(const ParamSignature& s) {
  std::vector<int64_t> out = {s.tensor ? 1 : 0, s.dtype.code, s.dtype.bits, s.dtype.lanes, s.ndim};
  out.insert(out.end(), s.dims.begin(), s.dims.end());
  out.insert(out.end(), s.symbols.begin(), s.symbols.end());
  return out;
}

}  // namespace relax
}  // namespace graphrt
