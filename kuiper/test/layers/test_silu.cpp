// nn.SiLU: x * sigmoid(x) = x / (1 + e^-x), with its own vectorized e^-x.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "../op_test.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/activation.hpp"

namespace kuiper {
namespace {

std::unique_ptr<Layer> CreateSilu(const std::string& type = "nn.SiLU") {
  RuntimeOperator op;
  op.type = type;
  op.name = "silu";
  return LayerRegisterer::CreateLayer(op);
}

// Through the op-test harness (op_test.hpp): every mode, on values in [-6, 5.5).
TEST(Silu, MatchesXTimesSigmoid) {
  for (const std::string type : {"nn.SiLU", "F.silu"}) {
    test::TestElementwise(
        type, {}, {2, 3, 4}, [](float v) { return v / (1.f + std::exp(-v)); }, 1e-6f, -6.f, 5.5f);
  }
}

// How many floats lie between a and b (same sign or zero; 0 when equal).
int64_t UlpDistance(float a, float b) {
  const auto key = [](float v) {
    const int32_t bits = std::bit_cast<int32_t>(v);
    return bits < 0 ? -int64_t{bits & 0x7fffffff} : int64_t{bits};
  };
  return std::abs(key(a) - key(b));
}

// SiLU of every x in `values`, through the layer (one item, big enough to be shared among threads).
std::vector<float> SiluOf(const std::vector<float>& values) {
  sftensor x = TensorCreate({static_cast<uint32_t>(values.size())});
  x->Fill(values);
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(CreateSilu()->Forward({x}, outputs), InferStatus::kInferSuccess);
  return outputs[0]->values();
}

std::vector<float> Sweep(float from, float to, float step) {
  std::vector<float> values;
  for (float v = from; v <= to; v += step) values.push_back(v);
  return values;
}

// Computed in float (activation.cpp), SiLU rounds e^-x, 1 + e^-x and the
// quotient: within two ulps of the exact value, as PyTorch's float32 F.silu
// is on the same sweep (measured with /usr/bin/python3: at most 2 ulps).
// -88..110 covers e^-x from 0 to 1.7e38, and results down to 5e-37.
TEST(Silu, IsWithinTwoUlpsOfTheExactValue) {
  const std::vector<float> values = Sweep(-88.f, 110.f, 1e-4f);
  const std::vector<float> y = SiluOf(values);
  for (size_t i = 0; i < values.size(); ++i) {
    const double x = values[i];
    const float exact = static_cast<float>(x / (1.0 + std::exp(-x)));  // in double, then rounded
    ASSERT_LE(UlpDistance(y[i], exact), 2)
        << "x = " << values[i] << ": " << y[i] << " vs " << exact;
  }
}

std::vector<uint32_t> Bits(const std::vector<float>& values) {
  std::vector<uint32_t> bits;
  for (const float v : values) bits.push_back(std::bit_cast<uint32_t>(v));
  return bits;
}

TEST(Silu, FusedFormAddsTheBiasFirst) {
  // A convolution's epilogue: x = SiLU(x + bias), in place, for every length
  // up to two registers and a bit (whole and partial registers).
  for (int64_t n = 1; n <= 40; ++n) {
    std::vector<float> x(n), expected(n);
    for (int64_t i = 0; i < n; ++i) x[i] = 0.37f * static_cast<float>(i) - 7.f;
    for (int64_t i = 0; i < n; ++i) expected[i] = x[i] + 1.25f;
    SiluSpan(expected.data(), expected.data(), n);
    AddBiasAndActivate(x.data(), n, 1.25f, Activation::kSilu);
    EXPECT_EQ(Bits(x), Bits(expected)) << n << " values";
  }
}

TEST(Silu, SpecialValuesFollowTheFormula) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> y =
      SiluOf({0.f, kInf, 1e30f, -1e30f, -kInf, std::numeric_limits<float>::quiet_NaN(), 20.f});
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[1], kInf);
  EXPECT_EQ(y[2], 1e30f);  // e^-x = 0
  EXPECT_EQ(y[3], 0.f);    // -1e30 / (1 + e^1e30) = -0
  EXPECT_TRUE(std::signbit(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));  // -inf / inf, as in PyTorch
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_EQ(y[6], 20.f);  // 20 (1 - 2e-9) rounds to 20
}

TEST(Silu, LeavesInputUnchanged) {
  sftensor x = TensorCreate({3});
  x->Fill({-1, 0, 1});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateSilu()->Forward({x}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(x->values(), std::vector<float>({-1, 0, 1}));
  EXPECT_EQ(outputs[0]->index(1), 0.f);
}

TEST(Silu, InputChecksAreReported) {
  auto layer = CreateSilu();
  std::vector<sftensor> outputs(1), none;
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate({2})}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate({2}), TensorCreate({2})}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

}  // namespace
}  // namespace kuiper
