// How the process's default Runtime is composed, from the top down.
//
// The core never calls up: it knows no layer above it, and no symbol its
// objects reference is defined above it (tests/core/link_layering_test.py).
// The composition unit of libgraphrt (backends/register_all.cc) builds the
// default runtime: an empty Runtime, the core's registrations
// (register_core), then the graph executor's and every back end's. It hands
// the core that recipe through install_default_runtime_factory, before any
// code of the process can ask for runtime(); runtime() calls it once, on its
// first use, from whichever thread comes first.
//
// A program that links the core without the composition unit (the core's
// white-box tests) gets a default runtime holding the core's registrations
// only.
#pragma once

#include <memory>

#include "graphrt/runtime.h"

namespace graphrt {

// The core's own registrations: the CPU device, the core's global functions
// (__tvm_set_device, runtime.SystemLib, ...) and record loaders (const_loader,
// metadata), the time evaluator.
void register_core(Runtime& runtime);

// Builds the process's default runtime; it must register into the runtime it
// creates, never call runtime() (that would wait on its own initialisation).
using DefaultRuntimeFactory = std::unique_ptr<Runtime> (*)();

// Installs the factory runtime() uses on its first call. Installing after the
// default runtime exists changes nothing: the composition unit installs it
// from the library's first initialiser, before anything can have asked.
void install_default_runtime_factory(DefaultRuntimeFactory factory);

}  // namespace graphrt
