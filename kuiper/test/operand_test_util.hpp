// Helpers for the tests of the layers the ONNX importer emits (torch.matmul,
// F.linear, torch.permute, pnnx.Attribute, kuiper.Resize): seeded tensors and
// operators with as many input operands as the graph would give them.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kuiper/layer.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper::test {

// A tensor of `shape` (1-D to 3-D) with values uniform in [-1, 1) from `seed`.
inline sftensor SeededTensor(const std::vector<uint32_t>& shape, uint32_t seed) {
  sftensor t = TensorCreate(shape);
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> values(t->size());
  for (float& v : values) v = uniform(engine);
  t->Fill(values, /*row_major=*/true);
  return t;
}

inline sftensor RowMajorTensor(const std::vector<uint32_t>& shape,
                               const std::vector<float>& values) {
  sftensor t = TensorCreate(shape);
  t->Fill(values, /*row_major=*/true);
  return t;
}

// An operator of `type` whose `inputs` input operands are dummies: creators
// only count them.
class OperatorWithInputs {
 public:
  OperatorWithInputs(const std::string& type, size_t inputs) : operands_(inputs) {
    op_.type = type;
    op_.name = "op_under_test";
    for (RuntimeOperand& operand : operands_) op_.input_operands.push_back(&operand);
  }
  RuntimeOperator& op() { return op_; }
  std::unique_ptr<Layer> Create() const { return LayerRegisterer::CreateLayer(op_); }

 private:
  std::vector<RuntimeOperand> operands_;
  RuntimeOperator op_;
};

// The status of a fresh two-operand layer of `type` run on `inputs` into
// `slots` empty output slots.
inline InferStatus ForwardStatus(const std::string& type, const std::vector<sftensor>& inputs,
                                 size_t slots = 1) {
  std::vector<sftensor> outputs(slots);
  return OperatorWithInputs(type, 2).Create()->Forward(inputs, outputs);
}

// The expected output item of a two-operand layer, computed by a naive loop.
using NaiveTwoOperand = sftensor (*)(const ftensor& a, const ftensor& b,
                                     const std::vector<uint32_t>& out_shape);

// Runs a two-operand layer of `type` on a batch of two seeded items (shapes
// a_shape and b_shape) and expects each output item to be `naive` of its pair.
inline void ExpectMatchesNaive(const std::string& type, const std::vector<uint32_t>& a_shape,
                               const std::vector<uint32_t>& b_shape,
                               const std::vector<uint32_t>& out_shape, NaiveTwoOperand naive) {
  const std::vector<sftensor> a = {SeededTensor(a_shape, 1), SeededTensor(a_shape, 2)};
  const std::vector<sftensor> b = {SeededTensor(b_shape, 3), SeededTensor(b_shape, 4)};
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(OperatorWithInputs(type, 2).Create()->Forward({a[0], a[1], b[0], b[1]}, outputs),
            InferStatus::kInferSuccess);
  for (size_t n = 0; n < 2; ++n) {
    ASSERT_EQ(outputs[n]->raw_shapes(), out_shape);
    EXPECT_TRUE(TensorIsSame(outputs[n], naive(*a[n], *b[n], out_shape), 1e-5f)) << "item " << n;
  }
}

// Expects creating the layer for `op` to throw a LayerError that names the
// operator and contains `text`.
inline void ExpectCreationError(const RuntimeOperator& op, const std::string& text) {
  try {
    LayerRegisterer::CreateLayer(op);
    ADD_FAILURE() << "no LayerError for " << op.type;
  } catch (const LayerError& e) {
    EXPECT_NE(std::string(e.what()).find(op.name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

}  // namespace kuiper::test
