#include "flag_hint.h"

namespace graphrt_apps {

std::string flag_hint(const graphrt::Error& e) {
  const std::string option = e.context_value("option");
  if (option == "trust_exports") return "--trust-exports";
  if (option == "loader=dlopen") return "--loader dlopen";
  if (option == "params") return "--params FILE.params";
  if (option == "graph") return "--graph G.json";
  if (option == "function") return "--function NAME";
  const std::string device = "device=";
  if (option.compare(0, device.size(), device) == 0) return "--device " + option.substr(device.size()) + ":0";
  return "";
}

}  // namespace graphrt_apps
