// Core-internal helpers of library loading shared by the loaders and the blob
// reader: the core's readings of a library's facts (graphrt/library.h).
#pragma once

#include <string>
#include <vector>

#include "graphrt/library.h"

namespace graphrt {

// Bytes readable from `address` to the end of the run of the library's
// memory holding it (with `writable`, of writable memory), or 0 when none
// holds it. For an image the dynamic linker mapped, an address outside its
// own segments is looked up among every object it loaded.
size_t library_mapped_bytes(const Library& library, const void* address, bool writable = false);

// The size of `name` (0 when unknown) and whether it may be code (false only
// when known to be data), from the facts or, for an image the dynamic linker
// mapped, from its symbol entry.
size_t library_symbol_size(const Library& library, const std::string& name);
bool library_symbol_is_function(const Library& library, const std::string& name);

// True when `address` lies in a code run of the facts.
bool library_holds_code(const LibraryFacts& facts, const void* address);

// How many bytes of the data symbol `name` at `address` may be read: its size
// where known, never past the end of its segment. Throws naming the symbol
// and the library when the address lies in no segment.
size_t readable_symbol_bytes(const Library& library, const std::string& name, const void* address);

// The segments of the image whose dynamic linker record is `link_map`
// (dlinfo's RTLD_DI_LINKMAP), for a dlopen loader's facts.
std::vector<LibraryRange> dynamic_linker_ranges(const void* link_map);

// Every name runtime_symbol() answers (tests compare them with what generated code imports).
std::vector<std::string> runtime_symbol_names();

}  // namespace graphrt
