// Shared by the Vulkan suites: the relax-vulkan fixture cases and the real
// "vulkan" module of one of them, decoded, as the base of crafted modules.
#pragma once

#include <dirent.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_module.h"
#include "graphrt/module.h"
#include "test_support.h"

namespace vulkan_test {

inline std::string case_dir(const std::string& name) {
  return graphrt_test::fixtures_dir() + "/relax-vulkan/" + name;
}

inline std::vector<std::string> case_names() {
  std::vector<std::string> out;
  const std::string root = graphrt_test::fixtures_dir() + "/relax-vulkan";
  DIR* d = graphrt_test::fixtures_dir().empty() ? nullptr : opendir(root.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, "relax_", 6) == 0) out.push_back(e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

inline nlohmann::json case_info(const std::string& name) {
  std::ifstream f(case_dir(name) + "/case.json");
  return nlohmann::json::parse(f);
}

// The vulkan module in a loaded export's import tree, or null.
inline graphrt::vulkan_backend::VulkanModuleNode* find_vulkan_module(const graphrt::Module& m) {
  if (auto* v = dynamic_cast<graphrt::vulkan_backend::VulkanModuleNode*>(m.get())) return v;
  for (const graphrt::Module& i : m->imports()) {
    if (auto* v = find_vulkan_module(i)) return v;
  }
  return nullptr;
}

}  // namespace vulkan_test
