// A module blob's import tree (TVM's `_import_tree`: row pointers into a
// child list), shared by the readers of every blob layout.
#pragma once

#include <cstdint>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"

namespace graphrt {

// The first module on a cycle of the import graph given as rows of children
// (rows[i] = the modules module i imports), or -1 when it is a DAG.
int64_t module_on_import_cycle(const std::vector<std::vector<uint64_t>>& rows);

// Checks the tree against `modules` (every row inside the child list, every
// child an existing module, no module importing itself, no cycle), then adds
// the imports. Errors come from `reader`, naming the module at fault.
void attach_imports(BlobReader& reader, const std::vector<Module>& modules, const std::vector<uint64_t>& row_ptr,
                    const std::vector<uint64_t>& children);

}  // namespace graphrt
