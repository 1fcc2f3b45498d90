#include "register.h"

#include "elf_library.h"
#include "iree_executable_module.h"
#include "object_export.h"
#include "object_library.h"

namespace graphrt {
namespace elf {

void register_backend(Runtime& runtime) {
  runtime.register_library_loader("elf", &load_elf_library);
  // TVM .tar exports and bare .o files: claimed by content, whatever loader was named.
  runtime.register_library_loader("elf-object", &load_object_library, &is_object_export);
  register_iree_executable_loader(runtime);
}

}  // namespace elf
}  // namespace graphrt
