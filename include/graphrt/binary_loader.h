// The `loadbinary_<tkey>` handler registry for blob records.
//
// A handler reads exactly its record's payload from the reader and returns a
// module. Handlers live in the global registry under
// "runtime.module.loadbinary_<tkey>" (as in TVM) taking the BlobReader* as an
// opaque handle, so plugins can add them with registry_set as well.
#pragma once

#include <functional>
#include <string>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"

namespace graphrt {

using BinaryLoader = std::function<Module(BlobReader& reader)>;
void register_binary_loader(const std::string& tkey, BinaryLoader loader);
// Throws an Error naming the tkey (and the available ones) when none is registered.
Module load_binary(const std::string& tkey, BlobReader& reader);

// NDArray record (spec §3.2) inside any blob or params file.
NDArray read_ndarray_record(BlobReader& reader);
void write_ndarray_record(BlobWriter& writer, const DLTensor* tensor);

}  // namespace graphrt
