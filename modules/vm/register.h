// The VM back end's single registration point (design: explicit registration
// from modules/register_all.cc, no static initialisers).
#pragma once

namespace graphrt {
namespace vm {

void register_module();

}  // namespace vm
}  // namespace graphrt
