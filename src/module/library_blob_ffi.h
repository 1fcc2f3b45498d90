// The reader of TVM v0.22+ library blobs (`__tvm_ffi__library_bin`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"
#include "graphrt/runtime.h"

namespace graphrt {

// The record of type `tkey` read by `runtime`'s loader of it (load_binary's
// work, in the runtime the library is loaded through; binary_loader.cc).
Module load_binary(const Runtime& runtime, const std::string& tkey, BlobReader& reader);

// The module of `kind` from its bytes: `runtime`'s bytes loader of the kind
// (Runtime::register_bytes_loader), else its binary loader, which must
// consume exactly the bytes (binary_loader.cc).
Module load_module_bytes(const Runtime& runtime, const std::string& kind, BlobReader& bytes);

// Parses the blob (its 8-byte size prefix included) whose `_lib` module is
// `lib_module`, its modules read by `runtime`'s loaders; returns the root.
// `ctx_out` receives the module generated code must see
// (`__tvm_ffi__library_ctx`). `pages_releasable` as for the older layout's
// parse_module_blob. The overload without a runtime uses the default one.
Module parse_ffi_module_blob(const Runtime& runtime, const uint8_t* data, size_t size, const std::string& origin,
                             const Module& lib_module, Module* ctx_out, bool pages_releasable = false);
Module parse_ffi_module_blob(const uint8_t* data, size_t size, const std::string& origin, const Module& lib_module,
                             Module* ctx_out, bool pages_releasable = false);

}  // namespace graphrt
