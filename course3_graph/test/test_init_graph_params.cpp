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
  EXPECT_TRUE(std::holds_alternative<std::monostate>(op_->params.at("a_none")))
      << "see README §3.2";
  EXPECT_TRUE(std::holds_alternative<std::monostate>(op_->params.at("b_empty")))
      << "see README §3.2";
}

TEST_F(EveryParameterKind, Bools) {
  EXPECT_EQ(op_->param<bool>("c_true"), true) << "see README §3.2";
  EXPECT_EQ(op_->param<bool>("d_false"), false) << "see README §3.2";
}

TEST_F(EveryParameterKind, Int) { EXPECT_EQ(op_->param<int>("e_int"), -7); }

TEST_F(EveryParameterKind, FloatsInEverySpelling) {
  EXPECT_FLOAT_EQ(op_->param<float>("f_float_e"), 1e-5f) << "see README §3.2";
  EXPECT_FLOAT_EQ(op_->param<float>("g_float_short"), 1e-5f) << "see README §3.2";
  EXPECT_FLOAT_EQ(op_->param<float>("h_float_dot"), 0.001f) << "see README §3.2";
  EXPECT_FLOAT_EQ(op_->param<float>("i_float_one"), 1.0f) << "see README §3.2";
}

TEST_F(EveryParameterKind, StringsIncludingAnExpression) {
  EXPECT_EQ(op_->param<std::string>("j_string"), "zeros") << "see README §3.2";
  EXPECT_EQ(op_->param<std::string>("n_expr"), "add(@0,@1)") << "see README §3.2";
}

TEST_F(EveryParameterKind, Arrays) {
  EXPECT_EQ(op_->param<std::vector<int>>("k_ints"), std::vector<int>({1, 2, 3}))
      << "see README §3.2";
  EXPECT_EQ(op_->param<std::vector<float>>("l_floats"), std::vector<float>({0.5f, 2.5f}))
      << "see README §3.2";
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
  EXPECT_THROW(op_->param<int>("no_such_parameter"), LayerError) << "see README §3.2";
}

// ---- parameters built by hand: every kind, edge values, the tag alone decides ----

pnnx::Parameter Make(pnnx::ParameterType type) {
  pnnx::Parameter p;
  p.type = type;
  return p;
}

// InitGraphParams on one parameter `name`, on an operator called "hand_op".
RuntimeOperator ConvertOne(const std::string& name, const pnnx::Parameter& parameter) {
  RuntimeOperator op;
  op.name = "hand_op";
  op.type = "custom.Hand";
  RuntimeGraph::InitGraphParams({{name, parameter}}, op);
  return op;
}

TEST(InitGraphParams, AlternativeIndexEqualsTheTypeNumberForEveryKind) {
  // RuntimeParameter lists its alternatives in the order of pnnx::ParameterType.
  for (int type = 0; type <= 7; ++type) {
    const RuntimeOperator op = ConvertOne("p", Make(static_cast<pnnx::ParameterType>(type)));
    ASSERT_EQ(op.params.count("p"), 1u) << "type " << type << "; see README §3.2";
    EXPECT_EQ(op.params.at("p").index(), static_cast<size_t>(type))
        << "ParameterType " << type << " was stored as a " << ParameterTypeName(op.params.at("p"))
        << "; see README §3.2 (the mapping)";
  }
}

TEST(InitGraphParams, EmptyArraysKeepTheirKind) {
  // PNNX spells an empty array "()", which the reader turns into None; a graph
  // built in memory can still hold empty arrays, and they are arrays.
  const RuntimeOperator ints = ConvertOne("a", Make(pnnx::ParameterType::kIntArray));
  EXPECT_EQ(ints.param<std::vector<int>>("a"), std::vector<int>())
      << "an empty int array is still an int array; see README §3.2";
  const RuntimeOperator floats = ConvertOne("a", Make(pnnx::ParameterType::kFloatArray));
  EXPECT_EQ(floats.param<std::vector<float>>("a"), std::vector<float>())
      << "an empty float array is still a float array; see README §3.2";
  const RuntimeOperator strings = ConvertOne("a", Make(pnnx::ParameterType::kStringArray));
  EXPECT_EQ(strings.param<std::vector<std::string>>("a"), std::vector<std::string>())
      << "an empty string array is still a string array; see README §3.2";
}

TEST(InitGraphParams, ZeroFalseAndEmptyStringKeepTheirKind) {
  EXPECT_EQ(ConvertOne("v", Make(pnnx::ParameterType::kBool)).param<bool>("v"), false)
      << "see README §3.2";
  EXPECT_EQ(ConvertOne("v", Make(pnnx::ParameterType::kInt)).param<int>("v"), 0)
      << "see README §3.2";
  EXPECT_TRUE(std::holds_alternative<float>(
      ConvertOne("v", Make(pnnx::ParameterType::kFloat)).params.at("v")))
      << "a float 0.0 is a float, not an int; see README §3.2";
  EXPECT_EQ(ConvertOne("v", Make(pnnx::ParameterType::kString)).param<std::string>("v"), "")
      << "PNNX reads an empty value as an empty string; see README §3.2";
}

TEST(InitGraphParams, OnlyTheMemberNamedByTypeCounts) {
  // Every member holds something; only `type` says which one is the value.
  pnnx::Parameter p;
  p.b = true;
  p.i = 7;
  p.f = 2.5f;
  p.s = "zeros";
  p.ai = {1, 2};
  p.af = {0.5f};
  p.as = {"a"};
  p.type = pnnx::ParameterType::kFloat;
  EXPECT_EQ(ConvertOne("v", p).params.at("v"), RuntimeParameter(2.5f))
      << "type kFloat: the value is f; see README §3.2";
  p.type = pnnx::ParameterType::kInt;
  EXPECT_EQ(ConvertOne("v", p).params.at("v"), RuntimeParameter(7))
      << "type kInt: the value is i; see README §3.2";
  p.type = pnnx::ParameterType::kNull;
  EXPECT_TRUE(std::holds_alternative<std::monostate>(ConvertOne("v", p).params.at("v")))
      << "type kNull: no value at all, whatever the members hold; see README §3.2";
  p.type = pnnx::ParameterType::kStringArray;
  EXPECT_EQ(ConvertOne("v", p).params.at("v"), RuntimeParameter(std::vector<std::string>{"a"}))
      << "type kStringArray: the value is as; see README §3.2";
}

TEST(InitGraphParams, UnknownTypeValueThrowsParseError) {
  pnnx::Parameter broken;
  broken.type = static_cast<pnnx::ParameterType>(42);
  RuntimeOperator op;
  op.name = "broken_op";
  EXPECT_THROW(RuntimeGraph::InitGraphParams({{"x", broken}}, op), ParseError) << "see README §3.2";
}

TEST(InitGraphParams, NegativeTypeValueThrowsParseError) {
  pnnx::Parameter broken;
  broken.type = static_cast<pnnx::ParameterType>(-1);
  RuntimeOperator op;
  op.name = "broken_op";
  EXPECT_THROW(RuntimeGraph::InitGraphParams({{"x", broken}}, op), ParseError) << "see README §3.2";
}

TEST(InitGraphParams, UnknownTypeMessageNamesOperatorParameterAndNumber) {
  pnnx::Parameter broken;
  broken.type = static_cast<pnnx::ParameterType>(42);
  RuntimeOperator op;
  op.name = "broken_op";
  try {
    RuntimeGraph::InitGraphParams({{"mystery_param", broken}}, op);
    FAIL() << "expected a ParseError; see README §3.2";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    for (const char* part : {"broken_op", "mystery_param", "42"}) {
      EXPECT_NE(what.find(part), std::string::npos)
          << "the message should contain '" << part << "': " << what << "; see README §3.2";
    }
  }
}

TEST(InitGraphParams, UnknownTypeLeavesNoEntryUnderItsName) {
  pnnx::Parameter broken;
  broken.type = static_cast<pnnx::ParameterType>(42);
  RuntimeOperator op;
  op.name = "broken_op";
  EXPECT_THROW(RuntimeGraph::InitGraphParams({{"x", broken}}, op), ParseError) << "see README §3.2";
  EXPECT_EQ(op.params.count("x"), 0u)
      << "a parameter that could not be converted is not stored, not even as None; see README §3.2";
}

TEST(InitGraphParams, AnEntryAlreadyThereIsReplaced) {
  RuntimeOperator op;
  op.name = "hand_op";
  op.params["v"] = std::string("old");
  pnnx::Parameter p = Make(pnnx::ParameterType::kInt);
  p.i = 5;
  RuntimeGraph::InitGraphParams({{"v", p}}, op);
  EXPECT_EQ(op.params.at("v"), RuntimeParameter(5))
      << "the new value replaces the old one; see README §3.2";
}

TEST(InitGraphParams, ResNet18FirstConvolution) {
  RuntimeGraph graph(kSource + "/models/fixtures/resnet18.pnnx.param", "");
  graph.Init();
  const RuntimeOperator* conv1 = graph.FindOperator("conv1");
  ASSERT_NE(conv1, nullptr);
  // From the line: bias=True dilation=(1,1) groups=1 in_channels=3
  // kernel_size=(7,7) out_channels=64 padding=(3,3) padding_mode=zeros stride=(2,2)
  EXPECT_EQ(conv1->param<bool>("bias"), true) << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->param<std::vector<int>>("dilation"), std::vector<int>({1, 1}))
      << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->param<int>("groups"), 1) << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->param<int>("in_channels"), 3) << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->param<std::vector<int>>("kernel_size"), std::vector<int>({7, 7}))
      << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->param<int>("out_channels"), 64) << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->param<std::vector<int>>("padding"), std::vector<int>({3, 3}))
      << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->param<std::string>("padding_mode"), "zeros") << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->param<std::vector<int>>("stride"), std::vector<int>({2, 2}))
      << "see README §3.1 and §3.2";
  EXPECT_EQ(conv1->params.size(), 9u) << "see README §3.1 and §3.2";
}

TEST(InitGraphParams, ResNet18PoolingAndLinear) {
  RuntimeGraph graph(kSource + "/models/fixtures/resnet18.pnnx.param", "");
  graph.Init();
  const RuntimeOperator* maxpool = graph.FindOperator("maxpool");
  ASSERT_NE(maxpool, nullptr);
  EXPECT_EQ(maxpool->param<bool>("ceil_mode"), false) << "see README §3.1 and §3.2";
  EXPECT_EQ(maxpool->param<std::vector<int>>("kernel_size"), std::vector<int>({3, 3}))
      << "see README §3.1 and §3.2";
  const RuntimeOperator* fc = graph.FindOperator("fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->param<int>("in_features"), 512) << "see README §3.1 and §3.2";
  EXPECT_EQ(fc->param<int>("out_features"), 1000) << "see README §3.1 and §3.2";
  EXPECT_EQ(fc->param<bool>("bias"), true) << "see README §3.1 and §3.2";
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
