// A graphrt plugin: registers a blob record handler and a global function.
#include "graphrt/binary_loader.h"
#include "graphrt/registry.h"

namespace {

class EchoModuleNode : public graphrt::ModuleNode {
 public:
  explicit EchoModuleNode(std::string greeting) : greeting_(std::move(greeting)) {}
  std::string type_key() const override { return "sample_plugin"; }
  graphrt::PackedFunc find_function(const std::string& name, const graphrt::Module& self) override {
    if (name != "greeting") return graphrt::PackedFunc();
    graphrt::Module keep = self;
    return graphrt::make_function([keep, this](const graphrt::TVMArgs&, graphrt::RetValue* ret) { ret->set_string(greeting_); });
  }

 private:
  std::string greeting_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) int graphrt_plugin_init(void) {
  graphrt::register_binary_loader("sample_plugin", [](graphrt::BlobReader& reader) {
    return graphrt::Module(graphrt::make_ref<EchoModuleNode>(reader.read_string("greeting")));
  });
  graphrt::registry_set("sample_plugin.add_one", graphrt::make_function([](const graphrt::TVMArgs& args, graphrt::RetValue* ret) {
    ret->set_int(args.as_int(0) + 1);
  }));
  return 0;
}
