// The layer registry and Layer::Forward report a misuse as a LayerError
// naming the layer type or the operator, never by aborting the process; and
// Error::AddContext, with which the graph names the operator running when a
// layer throws, keeps the exception's type.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"

namespace kuiper::test {
namespace {

class NeverRunLayer : public Layer {
 public:
  using Layer::Forward;  // the graph's entry point, hidden by the override below
  using Layer::Layer;
  InferStatus Forward(const std::vector<sftensor>&, std::vector<sftensor>&) override {
    ADD_FAILURE() << "the layer ran";
    return InferStatus::kInferSuccess;
  }
};

std::string LayerErrorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const LayerError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no LayerError";
  return "";
}

TEST(LayerRegistry, RegisteringATypeTwiceIsALayerErrorNamingTheType) {
  ASSERT_TRUE(LayerRegisterer::HasCreator("nn.ReLU"));  // registered by the core's relu.cpp
  const std::string what = LayerErrorOf([] {
    LayerRegisterer::RegisterCreator("nn.ReLU", [](const RuntimeOperator& op) {
      return std::make_unique<NeverRunLayer>(op.name);
    });
  });
  EXPECT_EQ(what, "layer type 'nn.ReLU' is registered twice");
}

TEST(LayerRegistry, AnEmptyCreatorIsALayerErrorAndRegistersNothing) {
  const std::string what =
      LayerErrorOf([] { LayerRegisterer::RegisterCreator("test.EmptyCreator", LayerCreator{}); });
  EXPECT_EQ(what, "layer type 'test.EmptyCreator': the creator is empty");
  EXPECT_FALSE(LayerRegisterer::HasCreator("test.EmptyCreator"));
}

TEST(LayerForwardOfOperator, WithoutAnOperatorIsALayerErrorNamingTheLayer) {
  NeverRunLayer layer("lonely");
  const std::string what = LayerErrorOf([&] { layer.Forward(); });
  EXPECT_EQ(what, "layer 'lonely' has no operator: set_runtime_operator was not called");
}

TEST(LayerForwardOfOperator, AnOperatorWithoutOutputsIsALayerErrorNamingIt) {
  RuntimeOperator op;
  op.name = "sink";
  op.type = "test.Sink";
  NeverRunLayer layer(op.name);
  layer.set_runtime_operator(&op);
  const std::string what = LayerErrorOf([&] { layer.Forward(); });
  EXPECT_EQ(what, "operator 'sink' (test.Sink) has no output operand to run into");
}

TEST(ErrorContext, AddContextAppendsItAndARethrowKeepsTheType) {
  try {
    try {
      throw ShapeError("(2,3) does not fit (4)");
    } catch (Error& e) {
      e.AddContext("in operator 'mm'");
      throw;
    }
  } catch (const ShapeError& e) {
    EXPECT_EQ(std::string(e.what()), "(2,3) does not fit (4) (in operator 'mm')");
    return;
  } catch (...) {
    FAIL() << "the rethrown error is no longer a ShapeError";
  }
  FAIL() << "nothing was thrown";
}

}  // namespace
}  // namespace kuiper::test
