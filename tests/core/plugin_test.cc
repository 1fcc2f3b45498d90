// Plugins loaded by path add blob handlers and functions.
#include "fixture_cases.h"
#include "graphrt/c_api.h"
#include "graphrt/registry.h"
#include "module/library_module.h"

using namespace graphrt;

TEST(Plugin, RegistersHandlerAndFunction) {
  ASSERT_EQ(0, graphrt_load_plugin(GRAPHRT_SAMPLE_PLUGIN)) << TVMGetLastError();
  RetValue r = call_function(registry_get("sample_plugin.add_one"), ArgList().add_int(41));
  EXPECT_EQ(r.as_int(), 42);
  // A blob whose only record is the plugin's: legacy layout, so a library root imports it.
  BlobWriter payload;
  payload.write_u64(1);
  payload.write_string("sample_plugin");
  payload.write_string("hello from a plugin");
  std::string body = payload.take();
  BlobWriter blob;
  blob.write_u64(body.size());
  blob.write_raw(body.data(), body.size());
  std::string bytes = blob.take();
  // Any shared library will do as the "_lib" image: use the plugin itself.
  Module lib(make_ref<LibraryModuleNode>(load_library("dlopen", LibrarySource{GRAPHRT_SAMPLE_PLUGIN, nullptr, 0})));
  Module ctx;
  Module root = parse_module_blob(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t", lib, &ctx);
  ASSERT_EQ(root->imports().size(), 1u);
  EXPECT_EQ(root->imports()[0]->type_key(), "sample_plugin");
  EXPECT_EQ(call_function(root->get_function("greeting", true), ArgList()).as_string(), "hello from a plugin");
}

TEST(Plugin, MissingPluginAndMissingInitAreErrors) {
  EXPECT_EQ(-GRAPHRT_ERROR_NOT_FOUND, graphrt_load_plugin("/no/such/plugin.so"));
  EXPECT_NE(std::string(TVMGetLastError()).find("/no/such/plugin.so"), std::string::npos);
  EXPECT_EQ(-GRAPHRT_ERROR_NOT_FOUND, graphrt_load_plugin(GRAPHRT_NOT_A_PLUGIN));
  EXPECT_NE(std::string(TVMGetLastError()).find("graphrt_plugin_init"), std::string::npos) << TVMGetLastError();
}
