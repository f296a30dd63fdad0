// The MatMul lowering, case by case: the operators emitted and their result
// against a naive matmul written here.
#include <gtest/gtest.h>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

using Types = std::vector<std::string>;

struct Case {
  std::vector<int64_t> a, b, y;
};

// NumPy's promotion of vectors, for NaiveMatmul: a 1-D A is the row (1,K), a
// 1-D B the column (K,1), and the result gains that 1 back; row-major, the
// values are the same.
Case Promoted(Case c) {
  const bool a_vector = c.a.size() == 1, b_vector = c.b.size() == 1;
  if (a_vector) {
    c.a.insert(c.a.begin(), 1);
    c.y.insert(c.y.end() - (b_vector ? 0 : 1), 1);
  }
  if (b_vector) {
    c.b.push_back(1);
    c.y.push_back(1);
  }
  return c;
}

// Converts MatMul(A, B) with B a graph input (or an initializer) and checks
// the result against NaiveMatmul.
pnnx::Graph CheckMatmul(const Case& c, bool b_constant) {
  const std::vector<float> a = Iota(Count(c.a)), b = Iota(Count(c.b), -1.f, 0.125f);
  OneNodeModel m("MatMul", 13);
  m.Input("A", c.a);
  if (b_constant) {
    m.Constant(FloatTensor("B", c.b, b));
  } else {
    m.Input("B", c.b);
  }
  m.Output("Y", c.y);
  const pnnx::Graph graph = ConvertOnnx(m.model);
  const std::vector<float> got = b_constant ? RunGraph(graph, {a}) : RunGraph(graph, {a, b});
  const Case p = Promoted(c);
  EXPECT_LE(MaxAbsDiff(got, NaiveMatmul(a, p.a, b, p.b, p.y)), 1e-4f);
  return graph;
}

TEST(MatmulLowering, TwoDimensionalConstantBIsOneDense) {
  const pnnx::Graph g = CheckMatmul({{3, 4}, {4, 5}, {3, 5}}, true);
  EXPECT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "nn.Linear", "pnnx.Output"}));
  EXPECT_EQ(g.operators[1].attrs.at("weight").shape, (std::vector<int>{5, 4}));  // B^T
}

TEST(MatmulLowering, TwoDimensionalInputBIsTransposeAndDense) {
  const pnnx::Graph g = CheckMatmul({{3, 4}, {4, 5}, {3, 5}}, false);
  EXPECT_EQ(OperatorTypes(g),
            (Types{"pnnx.Input", "pnnx.Input", "torch.permute", "F.linear", "pnnx.Output"}));
}

TEST(MatmulLowering, HigherByTwoDimensionalIsReshapeDenseReshape) {
  const pnnx::Graph g = CheckMatmul({{2, 3, 4, 5}, {5, 6}, {2, 3, 4, 6}}, true);
  EXPECT_EQ(OperatorTypes(g),
            (Types{"pnnx.Input", "Tensor.reshape", "nn.Linear", "Tensor.reshape", "pnnx.Output"}));
  // [-1] + a_shape[a_rank-1:], with the engine's batch kept first.
  EXPECT_EQ(g.operators[1].params.at("shape").ai, (std::vector<int>{-1, 12, 5}));
  EXPECT_EQ(g.operators[3].params.at("shape").ai, (std::vector<int>{-1, 3, 4, 6}));
}

TEST(MatmulLowering, ThreeByTwoDimensionalWithInputB) {
  const pnnx::Graph g = CheckMatmul({{2, 3, 4}, {4, 5}, {2, 3, 5}}, false);
  EXPECT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "pnnx.Input", "Tensor.reshape", "torch.permute",
                                     "F.linear", "Tensor.reshape", "pnnx.Output"}));
}

TEST(MatmulLowering, BothHigherIsReshapesBatchMatmulReshape) {
  const pnnx::Graph g = CheckMatmul({{2, 3, 4, 5}, {2, 3, 5, 6}, {2, 3, 4, 6}}, false);
  EXPECT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "pnnx.Input", "Tensor.reshape", "Tensor.reshape",
                                     "torch.matmul", "Tensor.reshape", "pnnx.Output"}));
  // Batch mode: -1 is the engine batch (2), each item holds 3 matrices.
  EXPECT_EQ(g.operators[2].params.at("shape").ai, (std::vector<int>{-1, 3, 4, 5}));
  EXPECT_EQ(g.operators[3].params.at("shape").ai, (std::vector<int>{-1, 3, 5, 6}));
  EXPECT_EQ(g.operators[5].params.at("shape").ai, (std::vector<int>{-1, 3, 4, 6}));
}

TEST(MatmulLowering, BothThreeDimensional) {
  CheckMatmul({{2, 3, 4}, {2, 4, 3}, {2, 3, 3}}, false);
}

TEST(MatmulLowering, BroadcastsASingleMatrixOfA) {
  // out_batch is the element-wise maximum for equal ranks: (1,..) against (2,..).
  CheckMatmul({{1, 3, 4}, {2, 4, 5}, {2, 3, 5}}, false);
}

TEST(MatmulLowering, BroadcastsALowerRankConstantB) {
  // a_rank > b_rank: out_batch is A's; B's (3) pairs with A's last batch dim.
  const pnnx::Graph g = CheckMatmul({{2, 3, 4, 5}, {3, 5, 2}, {2, 3, 4, 2}}, true);
  EXPECT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "Tensor.reshape", "pnnx.Attribute",
                                     "torch.matmul", "Tensor.reshape", "pnnx.Output"}));
}

TEST(MatmulLowering, BroadcastsAHigherRankB) {
  // a_rank < b_rank: out_batch is B's. Single-item mode: the one item holds B's 2 matrices.
  const pnnx::Graph g = CheckMatmul({{3, 4}, {2, 4, 5}, {2, 3, 5}}, false);
  ASSERT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "pnnx.Input", "Tensor.reshape", "Tensor.reshape",
                                     "torch.matmul", "Tensor.reshape", "pnnx.Output"}));
  EXPECT_EQ(g.operators[2].params.at("shape").ai, (std::vector<int>{-1, 1, 3, 4}));
  EXPECT_EQ(g.operators[3].params.at("shape").ai, (std::vector<int>{-1, 2, 4, 5}));
  EXPECT_EQ(g.operators[5].params.at("shape").ai, (std::vector<int>{-1, 2, 3, 5}));
}

TEST(MatmulLowering, ABroadcastAFlattenedBatchCannotExpressStopsTheConversion) {
  // NumPy pairs B's 3 matrices with A's last batch dim, repeated over the 2
  // before it; flattened, A's 6 matrices cannot pair with B's 3.
  OneNodeModel m("MatMul", 13);
  m.Input("A", {1, 2, 3, 4, 5}).Constant(FloatTensor("B", {3, 5, 6}, Iota(90)));
  m.Output("Y", {1, 2, 3, 4, 6});
  ExpectErrorNamingNode(m.model,
                        "batch dimensions (1,2,3) and (3) broadcast in a way a flattened batch "
                        "matmul cannot express");
}

TEST(MatmulLowering, VectorTimesMatrixByHand) {
  // (1,2,3) x ((1,2),(3,4),(5,6)) = (1+6+15, 2+8+18).
  OneNodeModel m("MatMul", 13);
  m.Input("A", {3}).Constant(FloatTensor("B", {3, 2}, {1, 2, 3, 4, 5, 6})).Output("Y", {2});
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {{1, 2, 3}}), (std::vector<float>{22, 28}));
}

TEST(MatmulLowering, VectorTimesConstantMatrixIsOneDense) {
  // A (K) is the row (1,K); dense maps the vector to the vector (N) directly.
  const pnnx::Graph g = CheckMatmul({{4}, {4, 5}, {5}}, true);
  EXPECT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "nn.Linear", "pnnx.Output"}));
}

TEST(MatmulLowering, VectorTimesInputMatrixIsTransposeAndDense) {
  CheckMatmul({{4}, {4, 5}, {5}}, false);
}

TEST(MatmulLowering, MatrixTimesConstantVectorDropsTheColumn) {
  // B (K) is the column (K,1): dense gives (M,1), reshaped to (M).
  const pnnx::Graph g = CheckMatmul({{3, 4}, {4}, {3}}, true);
  EXPECT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "nn.Linear", "Tensor.reshape", "pnnx.Output"}));
  EXPECT_EQ(g.operators[1].attrs.at("weight").shape, (std::vector<int>{1, 4}));
}

TEST(MatmulLowering, MatrixTimesInputVectorReshapesTheVectorToARow) {
  // The column (K,1) transposed is the row (1,K): a reshape, not a permute.
  const pnnx::Graph g = CheckMatmul({{3, 4}, {4}, {3}}, false);
  EXPECT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "pnnx.Input", "Tensor.reshape", "F.linear",
                                     "Tensor.reshape", "pnnx.Output"}));
}

TEST(MatmulLowering, VectorTimesVectorIsTheDotProduct) {
  CheckMatmul({{4}, {4}, {}}, false);
  CheckMatmul({{4}, {4}, {}}, true);
}

TEST(MatmulLowering, BatchOfMatricesTimesVector) {
  const pnnx::Graph g = CheckMatmul({{2, 3, 4}, {4}, {2, 3}}, true);
  EXPECT_EQ(OperatorTypes(g),
            (Types{"pnnx.Input", "Tensor.reshape", "nn.Linear", "Tensor.reshape", "pnnx.Output"}));
}

TEST(MatmulLowering, VectorTimesBatchOfMatrices) {
  const pnnx::Graph g = CheckMatmul({{4}, {2, 4, 5}, {2, 5}}, false);
  EXPECT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "pnnx.Input", "Tensor.reshape", "Tensor.reshape",
                                     "torch.matmul", "Tensor.reshape", "pnnx.Output"}));
}

TEST(MatmulLowering, AScalarInputStopsTheConversion) {
  OneNodeModel m("MatMul", 13);
  m.Constant(FloatTensor("A", {}, {2.f})).Input("B", {3}).Output("Y", {3});
  ExpectErrorNamingNode(m.model, "a scalar is not a matrix");
}

TEST(MatmulLowering, AVectorResultOfTheWrongLengthStopsTheConversion) {
  OneNodeModel m("MatMul", 13);
  m.Input("A", {3, 4}).Input("B", {4}).Output("Y", {3, 1});  // the 1 must go
  ExpectErrorNamingNode(m.model, "the lowered result has shape (3)");
}

TEST(MatmulLowering, ThreeInputsStopTheConversionNamingTheNode) {
  OneNodeModel m("MatMul", 13);
  m.Input("A", {2, 3}).Input("B", {3, 2}).Input("C", {2, 2}).Output("Y", {2, 2});
  ExpectErrorNamingNode(m.model, "exactly 2 inputs");
}

TEST(MatmulLowering, AnOutputShapeThatDisagreesStopsTheConversion) {
  OneNodeModel m("MatMul", 13);
  m.Input("A", {2, 3, 4}).Input("B", {2, 4, 5}).Output("Y", {2, 3, 6});
  ExpectErrorNamingNode(m.model, "the lowered result has shape (2,3,5)");
}

TEST(MatmulLowering, UnsupportedOperatorsAreListedAtOnce) {
  onnx::ModelProto model;
  model.add_opset_import()->set_version(13);
  for (const char* type : {"Foo", "Bar", "Foo"}) {
    auto* node = model.mutable_graph()->add_node();
    node->set_op_type(type);
    node->set_name(std::string("n_") + type + std::to_string(model.graph().node_size()));
  }
  try {
    ConvertOnnx(model);
    FAIL() << "no error";
  } catch (const UnsupportedOperatorError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("2 unsupported"), std::string::npos) << what;
    EXPECT_NE(what.find("Bar (nodes n_Bar2)"), std::string::npos) << what;
    EXPECT_NE(what.find("Foo (nodes n_Foo1, n_Foo3)"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kuiper::testing
