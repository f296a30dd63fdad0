// pnnx.Attribute: a constant with no input, shaped by its output operand or,
// failing that, by its data's shape; the statuses and the data it refuses.
#include <gtest/gtest.h>

#include "conv_pool_test_util.hpp"
#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

// An attribute operator holding `data` of `data_shape`, whose output operand
// (when `output_shape` is not empty) is annotated `output_shape`.
class AttributeOperator {
 public:
  AttributeOperator(const std::vector<int>& data_shape, const std::vector<float>& data,
                    const std::vector<int>& output_shape = {}) {
    op_.type = "pnnx.Attribute";
    op_.name = "op_under_test";
    op_.attribute["data"] = FloatAttribute(data_shape, data);
    output_.shapes = output_shape;
    if (!output_shape.empty()) op_.output_operand = &output_;
  }
  const RuntimeOperator& op() const { return op_; }
  std::unique_ptr<Layer> Create() const { return LayerRegisterer::CreateLayer(op_); }

 private:
  RuntimeOperand output_;
  RuntimeOperator op_;
};

const std::vector<float> kSix = {1, 2, 3, 4, 5, 6};

TEST(Attribute, EveryItemSharesTheConstantShapedByTheOperand) {
  const AttributeOperator op({2, 3}, kSix, {2, 3, 2});  // batch 2 of (3, 2)
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(op.Create()->Forward({}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), (std::vector<uint32_t>{3, 2}));
  EXPECT_EQ(outputs[0]->values(), kSix);  // row-major, as stored
  EXPECT_EQ(outputs[0], outputs[1]);
}

TEST(Attribute, WithoutAnOperandTheDataShapeLosesItsLeadingOnes) {
  const AttributeOperator op({1, 1, 2, 3}, kSix);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(op.Create()->Forward({}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(outputs[0]->at(0, 1, 0), 4.f);
}

TEST(Attribute, AnOperandOfAnotherSizeFallsBackToTheDataShape) {
  // PNNX's own files annotate the operand with the bare attribute shape.
  const AttributeOperator op({2, 3}, kSix, {2, 3});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(op.Create()->Forward({}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), (std::vector<uint32_t>{2, 3}));
}

TEST(Attribute, AScalarIsOneValue) {
  const AttributeOperator op({}, {7});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(op.Create()->Forward({}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), (std::vector<uint32_t>{1}));
  EXPECT_EQ(outputs[0]->values(), (std::vector<float>{7}));
}

TEST(Attribute, AnInputIsASizeMismatch) {
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(AttributeOperator({6}, kSix).Create()->Forward({TensorCreate({6})}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(Attribute, NoOutputSlotsIsOutputEmpty) {
  std::vector<sftensor> outputs;
  EXPECT_EQ(AttributeOperator({6}, kSix).Create()->Forward({}, outputs),
            InferStatus::kInferFailedOutputEmpty);
}

// YOLOv5's grid constant (1,3,ny,nx,2) is one 4-D item: the batch 1 dropped.
TEST(Attribute, FiveDDataIsAFourDItem) {
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(AttributeOperator({1, 3, 1, 1, 2}, kSix).Create()->Forward({}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), (std::vector<uint32_t>{3, 1, 1, 2}));
  EXPECT_EQ(outputs[0]->values(), kSix);
}

TEST(Attribute, CreationRejectsEmptyData) {
  ExpectCreationError(AttributeOperator({0}, {}).op(), "is not a batch item of 1 to 7 dimensions");
}

TEST(Attribute, CreationNeedsTheDataAttribute) {
  RuntimeOperator op;
  op.type = "pnnx.Attribute";
  op.name = "op_under_test";
  ExpectCreationError(op, "data");
}

}  // namespace
}  // namespace kuiper::test
