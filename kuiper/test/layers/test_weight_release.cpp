// RuntimeGraph::Build hands the weights to the layers and frees the raw
// attribute data (graph.hpp): the graph must still run, run again, build
// again, and count the weights against the memory limit. On tiny_net
// (models/fixtures), whose PyTorch output is committed next to it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/npy.hpp"

namespace kuiper {
namespace {

const std::string kReleaseNet = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/tiny_net";

RuntimeGraph ReleaseNet() {
  return RuntimeGraph(kReleaseNet + ".pnnx.param", kReleaseNet + ".pnnx.bin");
}

// Forward on the committed input, checked against PyTorch's output (the
// tolerance of the other tiny fixtures, test_light_fixtures.cpp).
void ExpectReleaseNetOutput(RuntimeGraph& graph, const std::string& when) {
  const std::vector<sftensor> input = NpyToBatch(LoadNpy(kReleaseNet + ".input.npy"));
  const std::vector<sftensor> expected = NpyToBatch(LoadNpy(kReleaseNet + ".output.npy"));
  const std::vector<sftensor> output = graph.Forward(input);
  ASSERT_EQ(output.size(), expected.size()) << when;
  for (size_t i = 0; i < output.size(); ++i) {
    const std::vector<float> got = output[i]->values(true), want = expected[i]->values(true);
    ASSERT_EQ(got.size(), want.size()) << when;
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_NEAR(got[j], want[j], 1e-4f + 1e-6f * std::abs(want[j]))
          << when << ": item " << i << ", index " << j << " (see graph.hpp, Build)";
    }
  }
}

TEST(WeightRelease, BuiltGraphKeepsAttributeShapesButNotTheirData) {
  RuntimeGraph loaded = ReleaseNet();
  loaded.Init();
  RuntimeGraph built = ReleaseNet();
  built.Build();
  int attributes = 0;
  for (const auto& op : loaded.operators()) {
    const RuntimeOperator* same = built.FindOperator(op->name);
    ASSERT_NE(same, nullptr) << op->name;
    ASSERT_EQ(same->attribute.size(), op->attribute.size()) << op->name;
    for (const auto& [key, attr] : op->attribute) {
      ++attributes;
      EXPECT_FALSE(attr.data.empty()) << op->name << "@" << key << " loaded by Init";
      const RuntimeAttribute& kept = same->attribute.at(key);
      EXPECT_TRUE(kept.data.empty()) << op->name << "@" << key << " still holds its bytes";
      EXPECT_EQ(kept.shape, attr.shape) << op->name << "@" << key;
      EXPECT_EQ(kept.type, attr.type) << op->name << "@" << key;
    }
  }
  EXPECT_EQ(attributes, 6);  // weight and bias of conv1, conv2 and fc
}

TEST(WeightRelease, GraphMatchesPyTorchOnEveryForward) {
  RuntimeGraph graph = ReleaseNet();
  graph.Build();
  ExpectReleaseNetOutput(graph, "first Forward");
  ExpectReleaseNetOutput(graph, "second Forward");
}

TEST(WeightRelease, BuildingAgainReloadsTheWeights) {
  RuntimeGraph graph = ReleaseNet();
  graph.Build();
  ExpectReleaseNetOutput(graph, "after the first Build");
  graph.Build();
  ASSERT_TRUE(graph.built());
  ExpectReleaseNetOutput(graph, "after the second Build");
}

// tiny_net's weights: conv1 8*3*3*3 + 8, conv2 8*8*3*3 + 8, fc 10*8 + 10 =
// 898 floats, 3592 bytes. Its operands hold 6938 floats per batch item
// (3*16*16 + 2 * 8*16*16 + 4 * 8*8*8 + 8 + 8 + 10), 27752 bytes. At batch 2
// the memory check of Forward (memory_limit.hpp) counts 3592 + 2 * 27752 =
// 59096 bytes: the weights still count after Build freed the attributes,
// since the layers hold them.
TEST(WeightRelease, LargerBatchStillCountsTheWeightsAgainstTheMemoryLimit) {
  const MemoryLimitScope limit(59095);
  RuntimeGraph graph = ReleaseNet();
  graph.Build();  // batch 1: 31344 bytes
  std::vector<sftensor> batch;
  for (int i = 0; i < 2; ++i) batch.push_back(TensorCreate(3, 16, 16));
  try {
    graph.Forward(batch);
    FAIL() << "batch 2 takes 59096 bytes with the weights, over the limit of 59095";
  } catch (const ResourceError& e) {
    EXPECT_NE(std::string(e.what()).find("would take 59096 bytes"), std::string::npos) << e.what();
  }
}

TEST(WeightRelease, LargerBatchExactlyAtTheMemoryLimitRuns) {
  const MemoryLimitScope limit(59096);
  RuntimeGraph graph = ReleaseNet();
  graph.Build();
  std::vector<sftensor> batch;
  for (int i = 0; i < 2; ++i) batch.push_back(TensorCreate(3, 16, 16));
  EXPECT_EQ(graph.Forward(batch).size(), 2u);
}

}  // namespace
}  // namespace kuiper
