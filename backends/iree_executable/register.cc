#include "register.h"

#include "iree_executable_module.h"

namespace graphrt {
namespace iree_executable {

void register_backend(Runtime& runtime) { elf::register_iree_executable_loader(runtime); }

}  // namespace iree_executable
}  // namespace graphrt
