#include "register.h"

#include "elf_library.h"

namespace graphrt {
namespace elf_so {

void register_backend(Runtime& runtime) { runtime.register_library_loader("elf", &elf::load_elf_library); }

}  // namespace elf_so
}  // namespace graphrt
