// ResNet18 and YOLOv5s exported by tools/export_onnx.py (torch.onnx.export of
// the same seeded recipes as the PNNX files) run through the importer and, like
// the PNNX path, come within 1e-4 x max|reference| of PyTorch's float64 output.
//
// Why float64 and not PyTorch's float32 output: on YOLOv5s, two float32 runs
// each sit up to ~0.1 from the exact result on the largest boxes (their sizes
// are (2 sigmoid(t))^2 x anchor, which magnifies the rounding of t), so two
// correct runs can be 0.17 apart against a bound of 0.149. Measured with
// tools/fp64_reference.py: PyTorch float32 0.097, PNNX path 0.103, ONNX path
// 0.098 (0.135 while x * Sigmoid(x) ran as two rounded passes instead of one
// SiLU: docs/onnx.md §6). Each run is judged by its own error.
#include <gtest/gtest.h>

#include <filesystem>

#include "kuiper/npy.hpp"
#include "onnx_test_util.hpp"
#include "test_files.hpp"

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
  if (!fs::exists(onnx_path) || !fs::exists(ModelFile(name, ".pnnx.param")) ||
      !fs::exists(ModelFile(name, ".output_f64.npy"))) {
    // The build's onnx_models target makes them; a skipped check would hide a broken build.
    FAIL() << onnx_path << " or the PNNX files are missing: build the onnx_models target or run "
           << "/usr/bin/python3 tools/make_models.py && /usr/bin/python3 tools/export_onnx.py";
  }
  const std::vector<sftensor> input = NpyToBatch(LoadNpy(ModelFile(name, ".input.npy")));
  const std::vector<float> exact = LoadNpy(ModelFile(name, ".output_f64.npy")).data;
  const std::vector<float> torch_out = LoadNpy(ModelFile(name, ".output.npy")).data;
  const float bound = 1e-4f * MaxAbs(exact);

  std::unique_ptr<RuntimeGraph> onnx_graph = LoadOnnx(onnx_path);
  onnx_graph->Build();
  const std::vector<float> onnx_out = BatchToValues(onnx_graph->Forward(input));

  RuntimeGraph pnnx_graph(ModelFile(name, ".pnnx.param"), ModelFile(name, ".pnnx.bin"));
  pnnx_graph.Build();
  const std::vector<float> pnnx_out = BatchToValues(pnnx_graph.Forward(input));

  const float onnx_error = MaxAbsDiff(onnx_out, exact);
  const float pnnx_error = MaxAbsDiff(pnnx_out, exact);
  std::cout << name << ": max abs error against PyTorch float64: ONNX path " << onnx_error
            << ", PNNX path " << pnnx_error << ", PyTorch float32 " << MaxAbsDiff(torch_out, exact)
            << " (bound " << bound << ")\n";
  EXPECT_LE(onnx_error, bound);
  EXPECT_LE(pnnx_error, bound);

  // The converted graph saved as PNNX and read back runs the same.
  const std::string param = test::BinaryDir() + "/onnx_" + name + ".pnnx.param";
  ConvertOnnxToPnnx(onnx_path, param);
  RuntimeGraph saved(param, test::BinaryDir() + "/onnx_" + name + ".pnnx.bin");
  saved.Build();
  EXPECT_EQ(BatchToValues(saved.Forward(input)), onnx_out);
}

TEST(OnnxModels, ResNet18MatchesPyTorchLikeThePnnxPath) { CheckModel("resnet18"); }

TEST(OnnxModels, YoloV5sMatchesPyTorchLikeThePnnxPath) { CheckModel("yolov5s"); }

// The Detect head fused into models.yolo.Detect is an optimisation: converted
// node by node (5-D Reshape, Transpose, Slice, broadcasting expressions), the
// model gives the same output up to float rounding, within the same bound.
TEST(OnnxModels, YoloV5sNodeByNodeMatchesTheFusedHead) {
  const std::string onnx_path = ModelFile("yolov5s", ".onnx");
  ASSERT_TRUE(fs::exists(onnx_path)) << "build the onnx_models target";
  const std::vector<sftensor> input = NpyToBatch(LoadNpy(ModelFile("yolov5s", ".input.npy")));
  const std::vector<float> exact = LoadNpy(ModelFile("yolov5s", ".output_f64.npy")).data;
  OnnxImportOptions node_by_node;
  node_by_node.fuse_detect_head = false;
  std::vector<float> outputs[2];
  for (bool fuse : {true, false}) {
    std::unique_ptr<RuntimeGraph> graph =
        LoadOnnx(onnx_path, fuse ? OnnxImportOptions{} : node_by_node);
    graph->Build();
    size_t detect = 0;
    for (const auto& op : graph->operators()) detect += op->type == "models.yolo.Detect";
    EXPECT_EQ(detect, fuse ? 3u : 0u);
    outputs[fuse ? 0 : 1] = BatchToValues(graph->Forward(input));
  }
  EXPECT_LE(MaxAbsDiff(outputs[1], outputs[0]), 1e-6f * MaxAbs(exact));
  EXPECT_LE(MaxAbsDiff(outputs[1], exact), 1e-4f * MaxAbs(exact));
}

}  // namespace
}  // namespace kuiper::testing
