#include "iree_executable_module.h"

#include "graphrt/binary_loader.h"

namespace graphrt {
namespace elf {

namespace {

const char kOrdinalPrefix[] = "dispatch_";

class IreeExecutableModuleNode : public ModuleNode {
 public:
  explicit IreeExecutableModuleNode(std::shared_ptr<IreeExecutableLibrary> library) : library_(std::move(library)) {}

  std::string type_key() const override { return "iree_executable"; }

  PackedFunc find_function(const std::string& name, const Module& self) override {
    int ordinal = ordinal_of(name);
    if (ordinal < 0) return PackedFunc();
    Module keep = self;
    IreeExecutableLibrary* library = library_.get();
    return make_function([keep, library, ordinal, name](const TVMArgs& args, RetValue*) {
      IreeDispatch call;
      for (int i = 0; i < args.size(); ++i) {
        DLTensor* t = args.as_tensor(i);
        if (t->device.device_type != kDLCPU) throw Error(ErrorKind::kUnsupported,
                                                         "IREE executable bindings must be host tensors").with("symbol", name);
        call.bindings.push_back(static_cast<char*>(t->data) + t->byte_offset);
        call.binding_lengths.push_back(tensor_nbytes(t));
      }
      try {
        library->dispatch(static_cast<size_t>(ordinal), call);
      } catch (Error& e) {
        throw e.with("symbol", name);
      }
    }, name);
  }

  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (size_t i = 0; i < library_->export_count(); ++i) {
      if (!library_->export_info(i).name.empty()) names.push_back(library_->export_info(i).name);
      names.push_back(kOrdinalPrefix + std::to_string(i));
    }
    return names;
  }

 private:
  int ordinal_of(const std::string& name) const {
    int named = library_->find_export(name);
    if (named >= 0) return named;
    if (name.compare(0, sizeof(kOrdinalPrefix) - 1, kOrdinalPrefix) != 0) return -1;
    std::string digits = name.substr(sizeof(kOrdinalPrefix) - 1);
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    size_t ordinal = std::stoul(digits);
    return ordinal < library_->export_count() ? static_cast<int>(ordinal) : -1;
  }

  std::shared_ptr<IreeExecutableLibrary> library_;
};

}  // namespace

Module make_iree_executable_module(std::shared_ptr<IreeExecutableLibrary> library) {
  return Module(make_ref<IreeExecutableModuleNode>(std::move(library)));
}

void register_iree_executable_loader(Runtime& runtime) {
  runtime.register_binary_loader("iree_executable", [](BlobReader& reader) {
    std::string image = reader.read_string("iree_executable ELF image");
    std::shared_ptr<IreeExecutableLibrary> library =
        IreeExecutableLibrary::load_memory(reinterpret_cast<const uint8_t*>(image.data()), image.size(), "iree_executable record");
    return make_iree_executable_module(std::move(library));
  });
}

}  // namespace elf
}  // namespace graphrt
