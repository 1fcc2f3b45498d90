// The `loadbinary_<tkey>` handler registry for blob records.
//
// A handler reads exactly its record's payload from the reader and returns a
// module. Handlers live in the global registry under
// "runtime.module.loadbinary_<tkey>" (as in TVM) taking the BlobReader* as an
// opaque handle, so plugins can add them with registry_set as well.
#pragma once

#include "graphrt/export.h"

#include <functional>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

using BinaryLoader = std::function<Module(BlobReader& reader)>;
void register_binary_loader(const std::string& tkey, BinaryLoader loader);
// Throws an Error naming the tkey (and the available ones) when none is registered.
Module load_binary(const std::string& tkey, BlobReader& reader);

// TVM v0.22+ blobs (tvm-ffi's library format) store each module as its kind
// and its own bytes. A kind whose v0.22+ bytes differ from its older blob
// record registers a bytes loader with Runtime::register_bytes_loader (kept as
// "ffi.Module.load_from_bytes.<kind>", tvm-ffi's name); the reader uses it,
// else the binary loader, which must then consume exactly the bytes.

// Consecutive NDArray records, one per name (a params file's or a factory's
// arrays). Every header is checked before any memory is taken; the arrays of
// 128 KiB and more then share one host mapping (huge pages for its whole
// 2 MiB blocks). An error names its record's array under `context_key`
// ("param", "constant").
std::vector<NDArray> read_ndarray_records(BlobReader& reader, const std::vector<std::string>& names,
                                          const char* context_key);
// One NDArray record, as read_ndarray_records reads it.
void write_ndarray_record(BlobWriter& writer, const DLTensor* tensor);

// One record of a module blob: a type key ("_lib" for the library's own
// module, which has no payload) and the bytes its binary loader reads.
struct ModuleBlobRecord {
  std::string tkey;
  std::string payload;
};
// The bytes of a `__tvm_dev_mblob` symbol (its 8-byte size prefix included)
// holding `records` and an import tree in which record i imports the records
// listed in imports[i] (missing rows import nothing). The writer of the format
// whose reader is load_module's blob decoding (library_module.cc).
std::string write_module_blob(const std::vector<ModuleBlobRecord>& records,
                              const std::vector<std::vector<uint64_t>>& imports);

}  // namespace graphrt
#pragma GCC visibility pop

// The library's own (not exported).
namespace graphrt {
// read_ndarray_records with the small arrays (those not sharing the host mapping) from
// `runtime`'s CPU device API: what a runtime's record loaders read.
std::vector<NDArray> read_ndarray_records(const Runtime& runtime, BlobReader& reader,
                                          const std::vector<std::string>& names, const char* context_key);
}  // namespace graphrt
