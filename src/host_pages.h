// Large host allocations as their own mappings, backed by huge pages for
// their whole 2 MiB blocks where the kernel allows it (transparent huge pages
// in "madvise" mode).
//
// A huge page costs one fault and one zeroing pass instead of 512 faults, and
// one TLB entry: the first write into a model's params, its activations or its
// input costs a fraction of what small pages cost. The part past the last
// whole block stays in small pages, so nothing is held beyond what is asked.
#pragma once

#include <cstddef>

namespace graphrt {

// Allocations from this size up take their own mapping. Not under
// AddressSanitizer: its allocator checks every byte our code copies into or
// out of a model's storage, which a plain mapping would not.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kHostMappingMinBytes = ~size_t{0};
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr size_t kHostMappingMinBytes = ~size_t{0};
#else
constexpr size_t kHostMappingMinBytes = size_t{2} << 20;
#endif
#else
constexpr size_t kHostMappingMinBytes = size_t{2} << 20;
#endif

// `nbytes` of zeroed host memory, page aligned, and 2 MiB aligned when it
// holds a whole 2 MiB block; throws on failure. With `populate`, every page
// is mapped before this returns, in one call.
void* map_host_pages(size_t nbytes, bool populate);
void unmap_host_pages(void* data, size_t nbytes);
// The system's page size (sysconf, read once).
size_t host_page_size();

}  // namespace graphrt
