#include "register.h"

#include "object_export.h"
#include "object_library.h"

namespace graphrt {
namespace elf_object {

void register_backend(Runtime& runtime) {
  // Claimed by content, whatever loader was named.
  runtime.register_library_loader("elf-object", &elf::load_object_library, &elf::is_object_export);
}

}  // namespace elf_object
}  // namespace graphrt
