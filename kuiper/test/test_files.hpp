// Where test programs write files. (They read their data through KUIPER_SOURCE_DIR, a
// compile definition that is the same in every build of one source tree.)
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace kuiper::test {

// The build directory of the running test program (build/<preset>), for files that outlive
// the test (reports, converted models). Not a compile definition like KUIPER_SOURCE_DIR: it
// differs between presets, and a definition on every test object would make ccache compile
// each object once per preset. One generated file defines it (cmake/KuiperLab.cmake).
std::string BinaryDir();

// A scratch file of this process: ctest runs tests in parallel, and two builds' tests may
// run at once.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/kuiper_" + std::to_string(getpid()) + "_" + name;
}

}  // namespace kuiper::test
