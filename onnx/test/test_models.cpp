// ResNet18 and YOLOv5s exported by tools/export_onnx.py (torch.onnx.export of
// the same seeded recipes as the PNNX files) run through the importer and
// match PyTorch and the PNNX path within 1e-4 x max|reference|.
#include <gtest/gtest.h>

#include <filesystem>

#include "kuiper/npy.hpp"
#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

namespace fs = std::filesystem;

std::string ModelFile(const std::string& name, const std::string& suffix) {
  return std::string(KUIPER_SOURCE_DIR) + "/build/models/" + name + "/" + name + suffix;
}

float MaxAbs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::abs(x));
  return m;
}

void CheckModel(const std::string& name) {
  const std::string onnx_path = ModelFile(name, ".onnx");
  if (!fs::exists(onnx_path) || !fs::exists(ModelFile(name, ".pnnx.param"))) {
    // The build's onnx_models target makes them; a skipped check would hide a broken build.
    FAIL() << onnx_path << " or the PNNX files are missing: build the onnx_models target or run "
           << "/usr/bin/python3 tools/make_models.py && /usr/bin/python3 tools/export_onnx.py";
  }
  const std::vector<sftensor> input = NpyToBatch(LoadNpy(ModelFile(name, ".input.npy")));
  const std::vector<float> torch_out = LoadNpy(ModelFile(name, ".output.npy")).data;
  const float bound = 1e-4f * MaxAbs(torch_out);

  std::unique_ptr<RuntimeGraph> onnx_graph = LoadOnnx(onnx_path);
  onnx_graph->Build();
  const std::vector<float> onnx_out = BatchToValues(onnx_graph->Forward(input));

  RuntimeGraph pnnx_graph(ModelFile(name, ".pnnx.param"), ModelFile(name, ".pnnx.bin"));
  pnnx_graph.Build();
  const std::vector<float> pnnx_out = BatchToValues(pnnx_graph.Forward(input));

  const float vs_torch = MaxAbsDiff(onnx_out, torch_out);
  const float vs_pnnx = MaxAbsDiff(onnx_out, pnnx_out);
  std::cout << name << ": max abs diff vs PyTorch " << vs_torch << ", vs PNNX path " << vs_pnnx
            << " (bound " << bound << ")\n";
  EXPECT_LE(vs_torch, bound);
  EXPECT_LE(vs_pnnx, bound);

  // The converted graph saved as PNNX and read back runs the same.
  const std::string param = std::string(KUIPER_BINARY_DIR) + "/onnx_" + name + ".pnnx.param";
  ConvertOnnxToPnnx(onnx_path, param);
  RuntimeGraph saved(param, std::string(KUIPER_BINARY_DIR) + "/onnx_" + name + ".pnnx.bin");
  saved.Build();
  EXPECT_EQ(BatchToValues(saved.Forward(input)), onnx_out);
}

TEST(OnnxModels, ResNet18MatchesPyTorchAndPnnx) { CheckModel("resnet18"); }

TEST(OnnxModels, YoloV5sMatchesPyTorchAndPnnx) { CheckModel("yolov5s"); }

}  // namespace
}  // namespace kuiper::testing
