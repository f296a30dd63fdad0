// N-D operands (tensor.hpp: items of up to 7 dimensions, the leading ones
// folded into the channels): the shape-agnostic layers on 5-D operands, each
// against a NumPy-style reference loop over row-major indices written here.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "kuiper/expression.hpp"
#include "kuiper/layer.hpp"
#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

using Shape = std::vector<uint32_t>;

// The row-major multi-index of element `offset` of `shape`, and back.
Shape NdIndexOf(uint64_t offset, const Shape& shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<uint32_t>(offset % shape[d]);
    offset /= shape[d];
  }
  return index;
}

uint64_t NdOffsetOf(const Shape& index, const Shape& shape) {
  uint64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + index[d];
  return offset;
}

uint64_t NdCount(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), uint64_t{1}, std::multiplies<>());
}

// The one output item of a fresh layer for `op` run on one input item.
sftensor NdForwardOne(const RuntimeOperator& op, const std::vector<sftensor>& inputs,
                      InferStatus expected = InferStatus::kInferSuccess) {
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(LayerRegisterer::CreateLayer(op)->Forward(inputs, outputs), expected) << op.type;
  return outputs[0];
}

// ---- Tensor.permute ----

// out[i] = in[j] where j[dims[d+1]-1] = i[d]: torch.permute on the item.
std::vector<float> NaivePermute(const sftensor& in, const std::vector<int>& dims) {
  const Shape& shape = in->raw_shapes();
  Shape out_shape(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) out_shape[d] = shape[dims[d + 1] - 1];
  const std::vector<float> values = in->values(true);
  std::vector<float> out(values.size());
  for (uint64_t o = 0; o < out.size(); ++o) {
    const Shape i = NdIndexOf(o, out_shape);
    Shape j(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) j[dims[d + 1] - 1] = i[d];
    out[o] = values[NdOffsetOf(j, shape)];
  }
  return out;
}

TEST(NdPermute, FiveDOperandMatchesTheReferenceLoop) {
  OperatorWithInputs op("Tensor.permute", 1);
  op.op().params["dims"] = std::vector<int>{0, 3, 1, 4, 2};
  const sftensor in = SeededTensor({2, 3, 4, 5}, 7);
  const sftensor out = NdForwardOne(op.op(), {in});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({4, 2, 5, 3}));
  EXPECT_EQ(out->values(true), NaivePermute(in, {0, 3, 1, 4, 2}));
}

TEST(NdPermute, NegativeDimsCountFromTheEnd) {
  OperatorWithInputs op("Tensor.permute", 1);
  op.op().params["dims"] = std::vector<int>{0, 1, 3, -1, 2};  // YOLOv5's (0,1,3,4,2)
  const sftensor in = SeededTensor({3, 7, 4, 5}, 8);
  const sftensor out = NdForwardOne(op.op(), {in});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({3, 4, 5, 7}));
  EXPECT_EQ(out->values(true), NaivePermute(in, {0, 1, 3, 4, 2}));
}

TEST(NdPermute, NineDimensionsAreRejectedNamingTheOperator) {
  OperatorWithInputs op("torch.permute", 1);
  op.op().params["dims"] = std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8};
  try {
    LayerRegisterer::CreateLayer(op.op());
    FAIL() << "a 9-D permute was accepted";
  } catch (const LayerError& e) {
    EXPECT_NE(std::string(e.what()).find("'op_under_test' (torch.permute)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("2 to 8 dimensions"), std::string::npos) << e.what();
  }
}

// ---- torch.transpose ----

TEST(NdTranspose, SwapsTwoDimensionsOfAFiveDOperand) {
  OperatorWithInputs op("torch.transpose", 1);
  op.op().params["dim0"] = 1;
  op.op().params["dim1"] = -1;
  const sftensor in = SeededTensor({2, 3, 4, 5}, 14);
  const sftensor out = NdForwardOne(op.op(), {in});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({5, 3, 4, 2}));
  EXPECT_EQ(out->values(true), NaivePermute(in, {0, 4, 2, 3, 1}));
}

TEST(NdTranspose, ADimBeyondTheRankIsAShapeError) {
  OperatorWithInputs op("torch.transpose", 1);
  op.op().params["dim0"] = 1;
  op.op().params["dim1"] = 5;
  NdForwardOne(op.op(), {SeededTensor({2, 3, 4, 5}, 1)}, InferStatus::kInferFailedShapeError);
}

TEST(NdTranspose, TheBatchIsRejectedAtCreationNamingTheOperator) {
  OperatorWithInputs op("torch.transpose", 1);
  op.op().params["dim0"] = 0;
  op.op().params["dim1"] = 2;
  try {
    LayerRegisterer::CreateLayer(op.op());
    FAIL() << "a transpose of the batch was accepted";
  } catch (const LayerError& e) {
    EXPECT_NE(std::string(e.what()).find("'op_under_test' (torch.transpose)"), std::string::npos)
        << e.what();
  }
}

// ---- torch.squeeze / torch.unsqueeze ----

sftensor NdSqueezeOne(const std::string& type, const RuntimeParameter& dim, const sftensor& in,
                      InferStatus expected = InferStatus::kInferSuccess) {
  OperatorWithInputs op(type, 1);
  if (!std::holds_alternative<std::monostate>(dim)) op.op().params["dim"] = dim;
  return NdForwardOne(op.op(), {in}, expected);
}

TEST(NdSqueeze, UnsqueezeToFiveDKeepsTheValues) {
  const sftensor in = SeededTensor({3, 4, 5}, 15);
  const sftensor out = NdSqueezeOne("torch.unsqueeze", 2, in);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({3, 1, 4, 5}));
  EXPECT_EQ(out->values(true), in->values(true));
}

TEST(NdSqueeze, UnsqueezeNegativeDimCountsFromTheEndOfTheOutput) {
  const sftensor out = NdSqueezeOne("torch.unsqueeze", -1, SeededTensor({3, 4, 5}, 16));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({3, 4, 5, 1}));  // torch: (N,3,4,5).unsqueeze(-1)
}

TEST(NdSqueeze, SqueezeOneDimensionAndLeaveOneThatIsNotOne) {
  const sftensor in = SeededTensor({3, 1, 4, 1}, 17);
  const sftensor out = NdSqueezeOne("torch.squeeze", std::vector<int>{2, -1, 1}, in);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({3, 4}));  // dim 1 (size 3) stays, as in torch
  EXPECT_EQ(out->values(true), in->values(true));
}

TEST(NdSqueeze, SqueezeWithoutDimRemovesEverySizeOneItemDimension) {
  const sftensor out =
      NdSqueezeOne("torch.squeeze", std::monostate{}, SeededTensor({1, 3, 1, 4}, 18));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({3, 4}));
}

TEST(NdSqueeze, SqueezingAwayTheWholeItemIsAShapeError) {
  NdSqueezeOne("torch.squeeze", 1, SeededTensor({1}, 19), InferStatus::kInferFailedShapeError);
}

TEST(NdSqueeze, TheBatchIsRejectedAtCreation) {
  OperatorWithInputs op("torch.unsqueeze", 1);
  op.op().params["dim"] = 0;
  EXPECT_THROW(LayerRegisterer::CreateLayer(op.op()), LayerError);
}

// ---- Tensor.reshape ----

TEST(NdReshape, ToFiveDKeepsTheRowMajorOrder) {
  OperatorWithInputs op("Tensor.reshape", 1);
  op.op().params["shape"] = std::vector<int>{1, 3, 7, 4, 5};
  const sftensor in = SeededTensor({21, 4, 5}, 9);
  const sftensor out = NdForwardOne(op.op(), {in});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({3, 7, 4, 5}));
  EXPECT_EQ(out->values(true), in->values(true));
}

TEST(NdReshape, FromFiveDWithMinusOne) {
  OperatorWithInputs op("Tensor.view", 1);
  op.op().params["shape"] = std::vector<int>{1, -1, 7};
  const sftensor in = SeededTensor({3, 4, 5, 7}, 10);
  const sftensor out = NdForwardOne(op.op(), {in});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({60, 7}));
  EXPECT_EQ(out->values(true), in->values(true));
}

// ---- torch.tensor_split / torch.split on every kind of axis ----

// Item-dimension `axis` of `in`, elements [start, start + length): NumPy's
// in[..., start:start+length, ...].
std::vector<float> NaiveRange(const sftensor& in, size_t axis, uint32_t start, uint32_t length,
                              uint32_t step = 1) {
  const Shape& shape = in->raw_shapes();
  Shape out_shape = shape;
  out_shape[axis] = length;
  const std::vector<float> values = in->values(true);
  std::vector<float> out(NdCount(out_shape));
  for (uint64_t o = 0; o < out.size(); ++o) {
    Shape i = NdIndexOf(o, out_shape);
    i[axis] = start + i[axis] * step;
    out[o] = values[NdOffsetOf(i, shape)];
  }
  return out;
}

// An operator of `type` with one input and `outputs` output operands.
class NdSplitOperator {
 public:
  NdSplitOperator(const std::string& type, size_t outputs) : outputs_(outputs) {
    op_.type = type;
    op_.name = "split_under_test";
    op_.input_operands.push_back(&input_);
    for (RuntimeOperand& output : outputs_) op_.output_operands.push_back(&output);
    op_.output_operand = op_.output_operands.front();
  }
  RuntimeOperator& op() { return op_; }

 private:
  RuntimeOperand input_;
  std::vector<RuntimeOperand> outputs_;
  RuntimeOperator op_;
};

// tensor_split(indices=(1,3)) of a (N,4,5,6,7) operand along operand
// dimension `dim`: pieces [0,1), [1,3), [3,size).
void ExpectTensorSplitMatches(int dim) {
  NdSplitOperator op("torch.tensor_split", 3);
  op.op().params["dim"] = dim;
  op.op().params["indices"] = std::vector<int>{1, 3};
  const Shape shape = {4, 5, 6, 7};
  const std::vector<sftensor> batch = {SeededTensor(shape, 11), SeededTensor(shape, 12)};
  std::vector<sftensor> outputs(6);
  ASSERT_EQ(LayerRegisterer::CreateLayer(op.op())->Forward(batch, outputs),
            InferStatus::kInferSuccess);
  const size_t axis = dim < 0 ? dim + 4 : dim - 1;
  const uint32_t size = shape[axis];
  const uint32_t starts[3] = {0, 1, 3}, lengths[3] = {1, 2, size - 3};
  for (size_t j = 0; j < 3; ++j) {
    for (size_t i = 0; i < 2; ++i) {
      Shape want = shape;
      want[axis] = lengths[j];
      const sftensor& out = outputs[j * 2 + i];
      ASSERT_EQ(out->raw_shapes(), want) << "dim " << dim << " piece " << j;
      EXPECT_EQ(out->values(true), NaiveRange(batch[i], axis, starts[j], lengths[j]))
          << "dim " << dim << " piece " << j << " item " << i;
    }
  }
}

// Operand dims 1 and 2 are folded into the channels (dim 1 outermost, dim 2
// inside it, 4 blocks of it), 3 is the rows and 4 the columns: every case of
// item_axis.hpp.
TEST(NdSplit, TensorSplitAlongALeadingDimension) { ExpectTensorSplitMatches(1); }
TEST(NdSplit, TensorSplitAlongAnInnerLeadingDimension) { ExpectTensorSplitMatches(2); }
TEST(NdSplit, TensorSplitAlongTheRows) { ExpectTensorSplitMatches(3); }
TEST(NdSplit, TensorSplitAlongTheLastDimension) { ExpectTensorSplitMatches(4); }
TEST(NdSplit, TensorSplitNegativeDim) { ExpectTensorSplitMatches(-3); }

TEST(NdSplit, SplitSizesOnTheYoloHeadsLastDimension) {
  NdSplitOperator op("torch.split", 3);
  op.op().params["dim"] = -1;
  op.op().params["split_size_or_sections"] = std::vector<int>{2, 2, 3};
  const sftensor in = SeededTensor({3, 4, 5, 7}, 13);
  std::vector<sftensor> outputs(3);
  ASSERT_EQ(LayerRegisterer::CreateLayer(op.op())->Forward({in}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(true), NaiveRange(in, 3, 0, 2));
  EXPECT_EQ(outputs[1]->values(true), NaiveRange(in, 3, 2, 2));
  EXPECT_EQ(outputs[2]->values(true), NaiveRange(in, 3, 4, 3));
}

TEST(NdSplit, ADimBeyondTheRankIsAShapeError) {
  NdSplitOperator op("torch.tensor_split", 2);
  op.op().params["dim"] = 5;
  op.op().params["sections"] = 2;
  std::vector<sftensor> outputs(2);
  EXPECT_EQ(
      LayerRegisterer::CreateLayer(op.op())->Forward({SeededTensor({3, 4, 5, 6}, 1)}, outputs),
      InferStatus::kInferFailedShapeError);
}

// ---- torch.cat ----

// NumPy's concatenate((a, b), axis) of two items.
std::vector<float> NaiveConcat(const sftensor& a, const sftensor& b, size_t axis) {
  Shape out_shape = a->raw_shapes();
  out_shape[axis] += b->raw_shapes()[axis];
  const std::vector<float> va = a->values(true), vb = b->values(true);
  std::vector<float> out(NdCount(out_shape));
  for (uint64_t o = 0; o < out.size(); ++o) {
    Shape i = NdIndexOf(o, out_shape);
    const uint32_t split = a->raw_shapes()[axis];
    if (i[axis] < split) {
      out[o] = va[NdOffsetOf(i, a->raw_shapes())];
    } else {
      i[axis] -= split;
      out[o] = vb[NdOffsetOf(i, b->raw_shapes())];
    }
  }
  return out;
}

void ExpectCatMatches(int dim) {
  RuntimeOperator op;
  op.type = "torch.cat";
  op.name = "cat_under_test";
  op.params["dim"] = dim;
  const size_t axis = dim < 0 ? dim + 4 : dim - 1;
  Shape sa = {2, 3, 4, 5}, sb = sa;
  sb[axis] = 2;
  const sftensor a = SeededTensor(sa, 21), b = SeededTensor(sb, 22);
  const sftensor out = NdForwardOne(op, {a, b});
  ASSERT_TRUE(out);
  Shape want = sa;
  want[axis] += 2;
  ASSERT_EQ(out->raw_shapes(), want) << "dim " << dim;
  EXPECT_EQ(out->values(true), NaiveConcat(a, b, axis)) << "dim " << dim;
}

TEST(NdCat, AlongALeadingDimension) { ExpectCatMatches(1); }
TEST(NdCat, AlongAnInnerLeadingDimension) { ExpectCatMatches(2); }
TEST(NdCat, AlongTheRows) { ExpectCatMatches(3); }
TEST(NdCat, AlongTheLastDimensionNegative) { ExpectCatMatches(-1); }

TEST(NdCat, MismatchedShapesAreAShapeError) {
  RuntimeOperator op;
  op.type = "torch.cat";
  op.name = "cat_under_test";
  op.params["dim"] = 4;
  NdForwardOne(op, {SeededTensor({3, 4, 5, 2}, 1), SeededTensor({3, 4, 6, 2}, 2)},
               InferStatus::kInferFailedShapeError);
}

// ---- Tensor.slice with a step on a folded dimension ----

TEST(NdSlice, StepAlongAnInnerLeadingDimension) {
  OperatorWithInputs op("Tensor.slice", 1);
  op.op().params["dim"] = 2;
  op.op().params["start"] = 1;
  op.op().params["end"] = 5;
  op.op().params["step"] = 2;
  const sftensor in = SeededTensor({2, 5, 3, 4}, 31);
  const sftensor out = NdForwardOne(op.op(), {in});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->raw_shapes(), Shape({2, 2, 3, 4}));
  EXPECT_EQ(out->values(true), NaiveRange(in, 1, 1, 2, 2));
}

// ---- nn.Softmax along every kind of axis ----

// softmax along item dimension `axis`, element by element from its formula.
std::vector<float> NaiveSoftmax(const sftensor& in, size_t axis) {
  const Shape& shape = in->raw_shapes();
  const std::vector<float> x = in->values(true);
  std::vector<float> out(x.size());
  for (uint64_t o = 0; o < x.size(); ++o) {
    Shape i = NdIndexOf(o, shape);
    double sum = 0;
    for (uint32_t k = 0; k < shape[axis]; ++k) {
      i[axis] = k;
      sum += std::exp(static_cast<double>(x[NdOffsetOf(i, shape)]));
    }
    out[o] = static_cast<float>(std::exp(static_cast<double>(x[o])) / sum);
  }
  return out;
}

void ExpectSoftmaxMatches(int dim) {
  RuntimeOperator op;
  op.type = "nn.Softmax";
  op.name = "softmax_under_test";
  op.params["dim"] = dim;
  const sftensor in = SeededTensor({3, 4, 5, 6}, 61);
  const sftensor out = NdForwardOne(op, {in});
  ASSERT_TRUE(out);
  ASSERT_EQ(out->raw_shapes(), in->raw_shapes());
  const std::vector<float> got = out->values(true);
  const std::vector<float> want = NaiveSoftmax(in, dim < 0 ? dim + 4 : dim - 1);
  for (size_t o = 0; o < got.size(); ++o) {
    EXPECT_NEAR(got[o], want[o], 1e-6f) << "dim " << dim << " at row-major " << o;
  }
}

TEST(NdSoftmax, AlongALeadingDimension) { ExpectSoftmaxMatches(1); }
TEST(NdSoftmax, AlongAnInnerLeadingDimension) { ExpectSoftmaxMatches(2); }
TEST(NdSoftmax, AlongTheRows) { ExpectSoftmaxMatches(3); }
TEST(NdSoftmax, AlongTheLastDimensionNegative) { ExpectSoftmaxMatches(-1); }

// ---- torch.matmul on stacks of matrices ----

// C[.., i, j] = sum_k A[.., i, k] B[.., k, j]; a side with one matrix is
// used for every matrix of the other.
std::vector<float> NaiveStackedMatmul(const sftensor& a, const sftensor& b, const Shape& out) {
  const Shape& sa = a->raw_shapes();
  const Shape& sb = b->raw_shapes();
  const uint32_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const uint64_t ma = NdCount(sa) / (m * k), mb = NdCount(sb) / (k * n);
  const std::vector<float> va = a->values(true), vb = b->values(true);
  std::vector<float> c(NdCount(out), 0.f);
  for (uint64_t s = 0; s < c.size() / (m * n); ++s) {
    const float* x = &va[(ma == 1 ? 0 : s) * m * k];
    const float* y = &vb[(mb == 1 ? 0 : s) * k * n];
    for (uint32_t i = 0; i < m; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        float sum = 0;
        for (uint32_t l = 0; l < k; ++l) sum += x[i * k + l] * y[l * n + j];
        c[(s * m + i) * n + j] = sum;
      }
    }
  }
  return c;
}

void ExpectStackedMatmul(const Shape& sa, const Shape& sb, const Shape& want) {
  const sftensor a = SeededTensor(sa, 71), b = SeededTensor(sb, 72);
  const sftensor out = NdForwardOne(OperatorWithInputs("torch.matmul", 2).op(), {a, b});
  ASSERT_TRUE(out);
  ASSERT_EQ(out->raw_shapes(), want);
  const std::vector<float> got = out->values(true), expected = NaiveStackedMatmul(a, b, want);
  for (size_t o = 0; o < got.size(); ++o) EXPECT_NEAR(got[o], expected[o], 1e-5f) << o;
}

TEST(NdMatmul, FourDStacksKeepTheirLeadingDimensions) {
  ExpectStackedMatmul({2, 3, 4, 5}, {2, 3, 5, 6}, {2, 3, 4, 6});
}
TEST(NdMatmul, OneMatrixIsBroadcastOverAFourDStack) {
  ExpectStackedMatmul({2, 3, 4, 5}, {5, 6}, {2, 3, 4, 6});
}

TEST(NdMatmul, StacksIndexedDifferentlyAreAShapeError) {
  OperatorWithInputs op("torch.matmul", 2);
  NdForwardOne(op.op(), {SeededTensor({2, 3, 4, 5}, 1), SeededTensor({6, 5, 2}, 2)},
               InferStatus::kInferFailedShapeError);
}

// ---- expression broadcasting ----

// NumPy's a * b with broadcasting: shapes aligned from the last dimension.
std::vector<float> NaiveBroadcastMul(const sftensor& a, const sftensor& b, const Shape& out) {
  const std::vector<float> va = a->values(true), vb = b->values(true);
  const auto read = [&out](const std::vector<float>& v, const Shape& shape, const Shape& i) {
    Shape j(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      j[d] = shape[d] == 1 ? 0 : i[d + out.size() - shape.size()];
    }
    return v[NdOffsetOf(j, shape)];
  };
  std::vector<float> result(NdCount(out));
  for (uint64_t o = 0; o < result.size(); ++o) {
    const Shape i = NdIndexOf(o, out);
    result[o] = read(va, a->raw_shapes(), i) * read(vb, b->raw_shapes(), i);
  }
  return result;
}

void ExpectBroadcastMul(const Shape& sa, const Shape& sb, const Shape& want) {
  const sftensor a = SeededTensor(sa, 41), b = SeededTensor(sb, 42);
  const sftensor out = TensorElementBinary(TokenType::kMul, a, b);
  ASSERT_EQ(out->raw_shapes(), want);
  EXPECT_EQ(out->values(true), NaiveBroadcastMul(a, b, want));
}

TEST(NdBroadcast, AnchorGridAgainstTheHead) {
  ExpectBroadcastMul({3, 4, 5, 2}, {3, 1, 1, 2}, {3, 4, 5, 2});
}
TEST(NdBroadcast, GridWithFewerDimensions) {
  ExpectBroadcastMul({3, 4, 5, 2}, {4, 5, 2}, {3, 4, 5, 2});
}
TEST(NdBroadcast, BothSidesExpand) { ExpectBroadcastMul({3, 1, 5, 1}, {1, 4, 1, 2}, {3, 4, 5, 2}); }
TEST(NdBroadcast, SixDimensions) {
  ExpectBroadcastMul({2, 1, 3, 1, 2, 3}, {3, 4, 2, 1}, {2, 1, 3, 4, 2, 3});
}
TEST(NdBroadcast, AOneElementTensor) { ExpectBroadcastMul({3, 4, 5, 2}, {1}, {3, 4, 5, 2}); }

TEST(NdBroadcast, IncompatibleShapesNameTheFunctionAndShapes) {
  try {
    TensorElementBinary(TokenType::kMul, SeededTensor({3, 4, 5, 2}, 1),
                        SeededTensor({2, 1, 1, 2}, 2));
    FAIL() << "(3,4,5,2) * (2,1,1,2) was accepted";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("(3,4,5,2) and (2,1,1,2) do not broadcast"),
              std::string::npos)
        << e.what();
  }
}

// The YOLOv5 head's mul(pow(mul(@0,2),2),@1) on a batch of two 4-D items, one
// ApplyFunction per call, in the order the lab's stack machine makes them.
TEST(NdBroadcast, ApplyFunctionOnFiveDOperands) {
  const std::vector<sftensor> wh = {SeededTensor({3, 4, 5, 2}, 51), SeededTensor({3, 4, 5, 2}, 52)};
  const sftensor anchor = SeededTensor({3, 1, 1, 2}, 53);
  const std::vector<sftensor> two(2, SeededTensor({1}, 54));
  two[0]->index(0) = 2.f;
  const std::vector<sftensor> doubled = ApplyFunction(TokenType::kMul, {wh, two}, 2);
  const std::vector<sftensor> squared = ApplyFunction(TokenType::kPow, {doubled, two}, 2);
  const std::vector<sftensor> outputs =
      ApplyFunction(TokenType::kMul, {squared, {anchor, anchor}}, 2);
  for (size_t n = 0; n < 2; ++n) {
    const std::vector<float> x = wh[n]->values(true), a = anchor->values(true);
    const std::vector<float> got = outputs[n]->values(true);
    ASSERT_EQ(outputs[n]->raw_shapes(), Shape({3, 4, 5, 2}));
    for (uint64_t o = 0; o < got.size(); ++o) {
      const Shape i = NdIndexOf(o, {3, 4, 5, 2});
      const float want = (x[o] * 2) * (x[o] * 2) * a[i[0] * 2 + i[3]];
      EXPECT_NEAR(got[o], want, 1e-6f * std::max(1.f, std::abs(want)))
          << "item " << n << " at " << o;
    }
  }
}

}  // namespace
}  // namespace kuiper::test
