// The reader of TVM v0.22+ library blobs (`__tvm_ffi__library_bin`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"

namespace graphrt {

// The module of `kind` from its bytes: the kind's bytes loader
// (Runtime::register_bytes_loader), else its binary loader, which must
// consume exactly the bytes (binary_loader.cc).
Module load_module_bytes(const std::string& kind, BlobReader& bytes);

// Parses the blob (its 8-byte size prefix included) whose `_lib` module is
// `lib_module`; returns the root. `ctx_out` receives the module generated code
// must see (`__tvm_ffi__library_ctx`). `pages_releasable` as for the older
// layout's parse_module_blob.
Module parse_ffi_module_blob(const uint8_t* data, size_t size, const std::string& origin, const Module& lib_module,
                             Module* ctx_out, bool pages_releasable = false);

}  // namespace graphrt
