// Shared pieces of the libFuzzer targets: an inert Library that hands out a
// stub for every function (fuzzed code is never executed), and a size cap so
// that a valid but huge graph is not mistaken for an out-of-memory finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "graphrt/library.h"
#include "graphrt/module.h"

namespace graphrt_fuzz {

// Wraps `real` (may be null): data symbols the runtime reads or writes
// (__tvm_dev_mblob, __tvm_module_ctx, __tvm_main__, context-function slots)
// come from it; every other name resolves to a stub kernel that returns 0.
std::shared_ptr<graphrt::Library> inert_library(std::shared_ptr<graphrt::Library> real);
// Load options for an inert library: its stubs carry no TVM marker but are
// packed functions.
graphrt::LoadOptions stub_load_options();

// False when the graph JSON's tensors would need more than `limit` bytes (or
// do not parse: executor creation then reports the error itself).
bool graph_fits(const std::string& graph_json, size_t limit);

// Creates executors from `factory_root` (a GraphExecutorFactory module tree)
// with both memory plans when its graph fits; errors are expected.
void create_executors(const graphrt::Module& factory_root);

constexpr size_t kMaxGraphBytes = size_t(64) << 20;

}  // namespace graphrt_fuzz
