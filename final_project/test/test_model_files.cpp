// How MODEL arguments resolve to files, and what a missing model says.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "kuiper/error.hpp"
#include "model_files.hpp"
#include "test_files.hpp"

namespace kuiper::app {
namespace {

namespace fs = std::filesystem;

const std::string kFixtureDir = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures";

using test::TempPath;

std::string MessageOf(const std::string& model) {
  try {
    ResolveModel(model);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ResolveModel, ParamPathFindsTheBinBesideIt) {
  const ModelFiles files = ResolveModel(kFixtureDir + "/tiny_net.pnnx.param");
  EXPECT_EQ(files.name, "tiny_net");
  EXPECT_EQ(files.dir, kFixtureDir);
  EXPECT_EQ(files.bin, kFixtureDir + "/tiny_net.pnnx.bin");
}

TEST(ResolveModel, OtherExtensionIsRejected) {
  EXPECT_NE(MessageOf(kFixtureDir + "/tiny_net.input.npy").find("not a .pnnx.param or .onnx file"),
            std::string::npos);
}

TEST(ResolveModel, MissingBinIsNamedUnlessOnlyTheGraphIsNeeded) {
  const std::string param = kFixtureDir + "/resnet18.pnnx.param";  // committed without weights
  EXPECT_NE(MessageOf(param).find("resnet18.pnnx.bin"), std::string::npos);
  EXPECT_EQ(ResolveModel(param, /*need_bin=*/false).param, param);
}

TEST(ResolveModel, NameIsLookedUpUnderKuiperModels) {
  setenv("KUIPER_MODELS", "/nonexistent-models", 1);
  const std::string message = MessageOf("resnet18");
  unsetenv("KUIPER_MODELS");
  EXPECT_NE(message.find("/nonexistent-models/resnet18/resnet18.pnnx.param"), std::string::npos);
  EXPECT_NE(message.find("/usr/bin/python3 tools/make_models.py"), std::string::npos);
}

TEST(ResolveModel, DefaultRootIsTheRepositorysBuildModels) {
  unsetenv("KUIPER_MODELS");
  EXPECT_EQ(ModelsRoot(), std::string(KUIPER_SOURCE_DIR) + "/build/models");
}

TEST(ResolveModel, DirectoryHoldsAModelNamedLikeIt) {
  const fs::path dir = fs::path(TempPath("models")) / "final_mymodel";
  fs::create_directories(dir);
  for (const char* ext : {".pnnx.param", ".pnnx.bin"}) {
    fs::copy_file(kFixtureDir + "/tiny_net" + ext, dir / (std::string("final_mymodel") + ext),
                  fs::copy_options::overwrite_existing);
  }
  const ModelFiles files = ResolveModel(dir.string() + "/");
  EXPECT_EQ(files.name, "final_mymodel");
  EXPECT_EQ(files.param, (dir / "final_mymodel.pnnx.param").string());
}

TEST(ResolveModel, DirectoryWithoutItsModelNamesTheFileLookedFor) {
  EXPECT_NE(MessageOf(kFixtureDir).find("fixtures/fixtures.pnnx.param"), std::string::npos);
}

}  // namespace
}  // namespace kuiper::app
