// Helpers shared by the test suites: fixture discovery and .npy reading.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/npy.h"
#include "graphrt/error.h"

namespace graphrt_test {

// Path of ../shared/fixtures (GRAPHRT_FIXTURES env overrides the build-time
// default); "" when the folder is absent.
std::string fixtures_dir();
// True in CI: CI=true or GRAPHRT_REQUIRE_FIXTURES=1 in the environment, or the
// build's GRAPHRT_REQUIRE_FIXTURES option. A run without fixtures must then
// fail, not pass with its fixture tests skipped.
bool fixtures_required();
// fixtures_dir()/<relative>; calls GTEST_SKIP-able check through the macro below.
std::string fixture_path(const std::string& relative);
std::vector<uint8_t> read_file(const std::string& path);

// .npy files are read by the apps' reader (apps/common/npy.h), the project's
// one .npy parser; the Python suites check it against numpy's own files.
using Npy = graphrt_apps::NpyArray;
using graphrt_apps::read_npy;

// The graphrt::Error `f` throws, its kind checked; a test failure (and an empty error) when it
// throws none.
template <typename F>
graphrt::Error error_of(F&& f, graphrt::ErrorKind kind) {
  try {
    f();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(kind, e.kind()) << e.what();
    return e;
  }
  ADD_FAILURE() << "no error";
  return graphrt::Error("none");
}

}  // namespace graphrt_test

// Skips the test when the fixtures folder is absent; fails it instead where
// fixtures are required (fixtures_required()).
#define GRAPHRT_REQUIRE_FIXTURES()                                                                 \
  do {                                                                                             \
    if (graphrt_test::fixtures_dir().empty()) {                                                    \
      if (graphrt_test::fixtures_required())                                                       \
        FAIL() << "fixtures folder ../shared/fixtures not found, and fixtures are required in CI"; \
      GTEST_SKIP() << "fixtures folder ../shared/fixtures not found (set GRAPHRT_FIXTURES)";       \
    }                                                                                              \
  } while (0)
