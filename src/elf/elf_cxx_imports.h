// What C++ code in an embedded image may import: the C++ runtime entry points
// that TVM's C codegen output (BYOC "ccompiler" modules) uses, and graphrt's
// TVM object ABI. A fixed list; anything else stays unresolved.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace graphrt {
namespace elf {

// Address of an allow-listed C++ runtime symbol, or nullptr.
void* cxx_allowlist_symbol(const std::string& name);
std::vector<std::string> cxx_allowlist_names();

// __cxa_atexit for embedded images: destructors of an image's static objects
// are kept here, not in libc's exit list, and run when the image unloads
// (libc would call them at exit, after the image is unmapped).
extern "C" int graphrt_elf_cxa_atexit(void (*fn)(void*), void* arg, void* dso_handle);
// Runs (newest first) and forgets the destructors whose dso_handle lies in
// [begin, begin + size).
void run_image_atexit(const void* begin, size_t size);

}  // namespace elf
}  // namespace graphrt
