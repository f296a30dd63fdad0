// Whole graphs on N-D operands: the real-pnnx shape of a YOLOv5
// head on 5-D tensors (models/tiny_yolo_head.py) against PyTorch, a graph with
// a dynamic batch (`?` in PNNX) at batch 1 and 3, and the errors for what the
// engine refuses: a symbolic dimension other than the batch, and a layout
// layer (N x C x H x W only) given another rank. Loading needs lab course3,
// F.sigmoid course5.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "kuiper/graph.hpp"
#include "kuiper/npy.hpp"
#include "test_files.hpp"

namespace kuiper::test {
namespace {

const std::string kNdFixtures = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/";
const std::string kNdGraphs = std::string(KUIPER_SOURCE_DIR) + "/kuiper/test/data/graph/";

float NdMaxAbs(const std::vector<float>& values) {
  float m = 0;
  for (float v : values) m = std::max(m, std::abs(v));
  return m;
}

TEST(NdGraph, TinyYoloHeadOnFiveDTensorsMatchesPyTorch) {
  const std::string base = kNdFixtures + "tiny_yolo_head";
  RuntimeGraph graph(base + ".pnnx.param", base + ".pnnx.bin");
  graph.Build();
  const NpyArray input = LoadNpy(base + ".input.npy");
  const NpyArray expected = LoadNpy(base + ".output.npy");
  const NpyArray output = BatchToNpy(graph.Forward(NpyToBatch(input)));
  ASSERT_EQ(output.shape, expected.shape);
  const float tolerance = 1e-5f * std::max(1.f, NdMaxAbs(expected.data));
  for (size_t i = 0; i < output.data.size(); ++i) {
    ASSERT_NEAR(output.data[i], expected.data[i], tolerance)
        << "row-major index " << i << " (see models/tiny_yolo_head.py for the graph)";
  }
}

// dynamic_batch_5d.pnnx.param, written out for one item x of (6,2,3):
// r = x.reshape(2,3,2,3); p = r.permute(0,2,3,1) (item dims); s = sigmoid(p) * t
// with t = (1,2,3) on the last dimension; then tensor_split at 1 on the last
// dimension and cat(piece1, piece0): out[a,c,d,k] = s[a,c,d,(k+1)%3].
std::vector<float> DynamicBatchReference(const std::vector<float>& x) {
  const float t[3] = {1, 2, 3};
  std::vector<float> out;
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 2; ++c) {
      for (int d = 0; d < 3; ++d) {
        for (int k = 0; k < 3; ++k) {
          const int b = (k + 1) % 3;
          const float r = x[((a * 3 + b) * 2 + c) * 3 + d];
          out.push_back(1.f / (1.f + std::exp(-r)) * t[b]);
        }
      }
    }
  }
  return out;
}

void ExpectDynamicBatchRunsAt(RuntimeGraph& graph, int64_t batch) {
  NpyArray input{{batch, 6, 2, 3}, {}};
  for (int64_t i = 0; i < batch * 36; ++i) input.data.push_back(std::sin(0.37f * i) * 3);
  const NpyArray output = BatchToNpy(graph.Forward(NpyToBatch(input)));
  ASSERT_EQ(output.shape, (std::vector<int64_t>{batch, 2, 2, 3, 3}));
  for (int64_t n = 0; n < batch; ++n) {
    const std::vector<float> x(input.data.begin() + n * 36, input.data.begin() + (n + 1) * 36);
    const std::vector<float> want = DynamicBatchReference(x);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(output.data[n * 36 + i], want[i], 1e-6f) << "batch " << batch << " item " << n;
    }
  }
}

TEST(NdGraph, QuestionMarkBatchRunsAtTheBatchGiven) {
  RuntimeGraph graph(kNdGraphs + "dynamic_batch_5d.pnnx.param", "");
  graph.Build();
  ExpectDynamicBatchRunsAt(graph, 1);
  ExpectDynamicBatchRunsAt(graph, 3);
  ExpectDynamicBatchRunsAt(graph, 1);
}

std::string NdWriteGraph(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

TEST(NdGraph, ASymbolicDimensionOtherThanTheBatchIsAnErrorNamingTheInput) {
  const std::string path = NdWriteGraph("symbolic.pnnx.param",
                                        "7767517\n3 2\n"
                                        "pnnx.Input in0 0 1 0 #0=(1,?,4)f32\n"
                                        "nn.ReLU relu 1 1 0 1 #0=(1,?,4)f32 #1=(1,?,4)f32\n"
                                        "pnnx.Output out0 1 0 1 #1=(1,?,4)f32\n");
  RuntimeGraph graph(path, "");
  try {
    graph.Build();
    FAIL() << "an input of shape (1,?,4) was accepted";
  } catch (const GraphError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("input 'in0' (pnnx.Input)"), std::string::npos) << what;
    EXPECT_NE(what.find("dimension 1 unknown"), std::string::npos) << what;
  }
}

TEST(NdGraph, ALayoutLayerGivenFiveDNamesTheOperatorAndTheRank) {
  const std::string path = NdWriteGraph(
      "pool5d.pnnx.param",
      "7767517\n3 2\n"
      "pnnx.Input in0 0 1 0 #0=(1,2,3,4,5)f32\n"
      "nn.MaxPool2d pool 1 1 0 1 ceil_mode=False dilation=(1,1) kernel_size=(2,2) "
      "padding=(0,0) return_indices=False stride=(2,2) #0=(1,2,3,4,5)f32 #1=(1,2,3,2,2)f32\n"
      "pnnx.Output out0 1 0 1 #1=(1,2,3,2,2)f32\n");
  RuntimeGraph graph(path, "");
  graph.Build();
  NpyArray input{{1, 2, 3, 4, 5}, std::vector<float>(120, 1.f)};
  try {
    graph.Forward(NpyToBatch(input));
    FAIL() << "a max pool ran on a 5-D operand";
  } catch (const LayerError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'pool' (nn.MaxPool2d)"), std::string::npos) << what;
    EXPECT_NE(what.find("(1,2,3,4,5) of rank 5"), std::string::npos) << what;
  }
}

TEST(NdGraph, ShapesThatDoNotBroadcastNameTheOperatorAndTheShapes) {
  const std::string path =
      NdWriteGraph("mismatch.pnnx.param",
                   "7767517\n4 3\n"
                   "pnnx.Input in0 0 1 0 #0=(1,3,4,2)f32\n"
                   "pnnx.Input in1 0 1 1 #1=(1,5,4,2)f32\n"
                   "pnnx.Expression add 2 1 0 1 2 expr=add(@0,@1) #0=(1,3,4,2)f32 #1=(1,5,4,2)f32 "
                   "#2=(1,3,4,2)f32\n"
                   "pnnx.Output out0 1 0 2 #2=(1,3,4,2)f32\n");
  RuntimeGraph graph(path, "");
  graph.Build();
  const auto ones = [](int64_t c) {
    return NpyToBatch(NpyArray{{1, c, 4, 2}, std::vector<float>(c * 8, 1.f)});
  };
  try {
    graph.Forward({ones(3), ones(5)});
    FAIL() << "(1,3,4,2) + (1,5,4,2) was computed";
  } catch (const LayerError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'add' (pnnx.Expression)"), std::string::npos) << what;
    EXPECT_NE(what.find("(1,3,4,2) of rank 4, (1,5,4,2) of rank 4"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kuiper::test
