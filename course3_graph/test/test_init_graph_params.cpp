// course3_graph: RuntimeGraph::InitGraphParams turns every PNNX parameter
// kind into the matching typed RuntimeParameter.
#include <gtest/gtest.h>

#include <string>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {
namespace {

const std::string kSource = KUIPER_SOURCE_DIR;

class EveryParameterKind : public ::testing::Test {
 protected:
  void SetUp() override {
    graph_.Init();
    op_ = graph_.FindOperator("all");
    ASSERT_NE(op_, nullptr);
  }
  RuntimeGraph graph_{kSource + "/course3_graph/test/data/every_param.pnnx.param", ""};
  RuntimeOperator* op_ = nullptr;
};

TEST_F(EveryParameterKind, AllFourteenParametersArrive) { EXPECT_EQ(op_->params.size(), 14u); }

TEST_F(EveryParameterKind, NoneAndEmptyBracketsAreNone) {
  EXPECT_TRUE(std::holds_alternative<std::monostate>(op_->params.at("a_none")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(op_->params.at("b_empty")));
}

TEST_F(EveryParameterKind, Bools) {
  EXPECT_EQ(op_->param<bool>("c_true"), true);
  EXPECT_EQ(op_->param<bool>("d_false"), false);
}

TEST_F(EveryParameterKind, Int) { EXPECT_EQ(op_->param<int>("e_int"), -7); }

TEST_F(EveryParameterKind, FloatsInEverySpelling) {
  EXPECT_FLOAT_EQ(op_->param<float>("f_float_e"), 1e-5f);
  EXPECT_FLOAT_EQ(op_->param<float>("g_float_short"), 1e-5f);
  EXPECT_FLOAT_EQ(op_->param<float>("h_float_dot"), 0.001f);
  EXPECT_FLOAT_EQ(op_->param<float>("i_float_one"), 1.0f);
}

TEST_F(EveryParameterKind, StringsIncludingAnExpression) {
  EXPECT_EQ(op_->param<std::string>("j_string"), "zeros");
  EXPECT_EQ(op_->param<std::string>("n_expr"), "add(@0,@1)");
}

TEST_F(EveryParameterKind, Arrays) {
  EXPECT_EQ(op_->param<std::vector<int>>("k_ints"), std::vector<int>({1, 2, 3}));
  EXPECT_EQ(op_->param<std::vector<float>>("l_floats"), std::vector<float>({0.5f, 2.5f}));
  EXPECT_EQ(op_->param<std::vector<std::string>>("m_strings"),
            std::vector<std::string>({"height", "width"}));
}

TEST_F(EveryParameterKind, MistypedAccessNamesOperatorAndTypes) {
  try {
    op_->param<std::vector<int>>("e_int");
    FAIL() << "reading an int as an int array must throw";
  } catch (const LayerError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'all'"), std::string::npos) << what;
    EXPECT_NE(what.find("'e_int' is int, expected int array"), std::string::npos) << what;
  }
}

TEST_F(EveryParameterKind, MissingParameterIsReported) {
  EXPECT_THROW(op_->param<int>("no_such_parameter"), LayerError);
}

TEST(InitGraphParams, UnknownTypeValueThrowsParseError) {
  pnnx::Parameter broken;
  broken.type = static_cast<pnnx::ParameterType>(42);
  RuntimeOperator op;
  op.name = "broken_op";
  EXPECT_THROW(RuntimeGraph::InitGraphParams({{"x", broken}}, op), ParseError);
}

TEST(InitGraphParams, ResNet18FirstConvolution) {
  RuntimeGraph graph(kSource + "/models/fixtures/resnet18.pnnx.param", "");
  graph.Init();
  const RuntimeOperator* conv1 = graph.FindOperator("conv1");
  ASSERT_NE(conv1, nullptr);
  // From the line: bias=True dilation=(1,1) groups=1 in_channels=3
  // kernel_size=(7,7) out_channels=64 padding=(3,3) padding_mode=zeros stride=(2,2)
  EXPECT_EQ(conv1->param<bool>("bias"), true);
  EXPECT_EQ(conv1->param<std::vector<int>>("dilation"), std::vector<int>({1, 1}));
  EXPECT_EQ(conv1->param<int>("groups"), 1);
  EXPECT_EQ(conv1->param<int>("in_channels"), 3);
  EXPECT_EQ(conv1->param<std::vector<int>>("kernel_size"), std::vector<int>({7, 7}));
  EXPECT_EQ(conv1->param<int>("out_channels"), 64);
  EXPECT_EQ(conv1->param<std::vector<int>>("padding"), std::vector<int>({3, 3}));
  EXPECT_EQ(conv1->param<std::string>("padding_mode"), "zeros");
  EXPECT_EQ(conv1->param<std::vector<int>>("stride"), std::vector<int>({2, 2}));
  EXPECT_EQ(conv1->params.size(), 9u);
}

TEST(InitGraphParams, ResNet18PoolingAndLinear) {
  RuntimeGraph graph(kSource + "/models/fixtures/resnet18.pnnx.param", "");
  graph.Init();
  const RuntimeOperator* maxpool = graph.FindOperator("maxpool");
  ASSERT_NE(maxpool, nullptr);
  EXPECT_EQ(maxpool->param<bool>("ceil_mode"), false);
  EXPECT_EQ(maxpool->param<std::vector<int>>("kernel_size"), std::vector<int>({3, 3}));
  const RuntimeOperator* fc = graph.FindOperator("fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->param<int>("in_features"), 512);
  EXPECT_EQ(fc->param<int>("out_features"), 1000);
  EXPECT_EQ(fc->param<bool>("bias"), true);
}

TEST(InitGraphParams, EveryResNet18OperatorGetsAllItsParameters) {
  RuntimeGraph with(kSource + "/models/fixtures/resnet18.pnnx.param", "");
  with.Init();
  const pnnx::Graph source = pnnx::LoadParam(kSource + "/models/fixtures/resnet18.pnnx.param");
  ASSERT_EQ(with.operators().size(), source.operators.size());
  for (size_t i = 0; i < source.operators.size(); ++i) {
    EXPECT_EQ(with.operators()[i]->params.size(), source.operators[i].params.size())
        << source.operators[i].name;
  }
}

}  // namespace
}  // namespace kuiper
