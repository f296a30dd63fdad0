// Hidden tests of course3_graph (instructor tree only): edges of
// RuntimeGraph::InitGraphAttrs that the public tests leave open. Each catches a
// wrong solution kept in grading/wrong/course3_graph/ that passes every public test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {
namespace {

template <typename T>
std::vector<char> HiddenBytes(const std::vector<T>& values) {
  std::vector<char> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

pnnx::Attribute HiddenAttr(pnnx::DataType type, std::vector<int> shape, std::vector<char> data) {
  return pnnx::Attribute{.type = type, .shape = std::move(shape), .data = std::move(data)};
}

std::vector<float> HiddenFloats(const RuntimeAttribute& stored) {
  std::vector<float> values(stored.data.size() / sizeof(float));
  std::memcpy(values.data(), stored.data.data(), values.size() * sizeof(float));
  return values;
}

RuntimeOperator HiddenOp() {
  RuntimeOperator op;
  op.name = "hidden_op";
  op.type = "custom.Hidden";
  return op;
}

TEST(InitGraphAttrsHidden, ShapeWhoseByteCountOverflowsIsRejected) {
  // 65536^4 = 2^64 elements: an unchecked 64-bit product wraps to 0, which the
  // empty data would then "match".
  RuntimeOperator op = HiddenOp();
  EXPECT_THROW(RuntimeGraph::InitGraphAttrs(
                   {{"w", HiddenAttr(pnnx::DataType::kF32, {65536, 65536, 65536, 65536}, {})}}, op),
               ParseError);
  EXPECT_EQ(op.attribute.count("w"), 0u);
}

TEST(InitGraphAttrsHidden, ElementsTimesSizeOverflowIsRejected) {
  // 2^62 elements fit in 64 bits, their 2^64 bytes (f32) do not.
  RuntimeOperator op = HiddenOp();
  EXPECT_THROW(RuntimeGraph::InitGraphAttrs(
                   {{"w", HiddenAttr(pnnx::DataType::kF32, {1 << 30, 1 << 30, 4}, {})}}, op),
               ParseError);
}

TEST(InitGraphAttrsHidden, F16SignalingNanIsNan) {
  // Exponent all ones and any non-zero mantissa is NaN, not only the quiet bit 0x0200.
  RuntimeOperator op = HiddenOp();
  RuntimeGraph::InitGraphAttrs(
      {{"w", HiddenAttr(pnnx::DataType::kF16, {3},
                        HiddenBytes(std::vector<uint16_t>{0x7C01, 0xFC01, 0x7D00}))}},
      op);
  for (float value : HiddenFloats(op.attribute.at("w"))) EXPECT_TRUE(std::isnan(value)) << value;
}

TEST(InitGraphAttrsHidden, EveryHalfMatchesTheCompilersConversion) {
  // All 65536 bit patterns against the compiler's own half type (_Float16,
  // converted by the hardware or libgcc): an independent reference.
  std::vector<uint16_t> halves(65536);
  for (uint32_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  RuntimeOperator op = HiddenOp();
  RuntimeGraph::InitGraphAttrs(
      {{"w", HiddenAttr(pnnx::DataType::kF16, {65536}, HiddenBytes(halves))}}, op);
  const std::vector<float> got = HiddenFloats(op.attribute.at("w"));
  ASSERT_EQ(got.size(), halves.size());
  int wrong = 0;
  for (size_t i = 0; i < halves.size(); ++i) {
    _Float16 half;
    std::memcpy(&half, &halves[i], sizeof(half));
    const float want = static_cast<float>(half);
    const bool same =
        std::isnan(want) ? std::isnan(got[i]) : std::memcmp(&want, &got[i], sizeof(float)) == 0;
    if (!same && ++wrong <= 5) {
      ADD_FAILURE() << "half 0x" << std::hex << halves[i] << std::dec << ": got " << got[i]
                    << ", expected " << want;
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST(InitGraphAttrsHidden, AnEntryAlreadyThereIsReplaced) {
  RuntimeOperator op = HiddenOp();
  op.attribute["w"] = HiddenAttr(pnnx::DataType::kF32, {1}, HiddenBytes(std::vector<float>{9.f}));
  RuntimeGraph::InitGraphAttrs(
      {{"w", HiddenAttr(pnnx::DataType::kF64, {2}, HiddenBytes(std::vector<double>{1.0, 2.0}))}},
      op);
  EXPECT_EQ(op.attribute.at("w").shape, std::vector<int>({2}));
  EXPECT_EQ(HiddenFloats(op.attribute.at("w")), std::vector<float>({1.f, 2.f}));
}

TEST(InitGraphAttrsHidden, CorruptAttributeLeavesNoEntryUnderItsName) {
  RuntimeOperator op = HiddenOp();
  EXPECT_THROW(RuntimeGraph::InitGraphAttrs(
                   {{"w", HiddenAttr(pnnx::DataType::kF32, {2, 3}, std::vector<char>(20))}}, op),
               ParseError);
  EXPECT_EQ(op.attribute.count("w"), 0u);
}

TEST(InitGraphAttrsHidden, ScalarShapeIsOneElement) {
  // An empty shape is a scalar (pnnx.hpp): one element, not none.
  RuntimeOperator op = HiddenOp();
  RuntimeGraph::InitGraphAttrs(
      {{"w", HiddenAttr(pnnx::DataType::kF16, {}, HiddenBytes(std::vector<uint16_t>{0xC000}))}},
      op);
  EXPECT_TRUE(op.attribute.at("w").shape.empty());
  EXPECT_EQ(HiddenFloats(op.attribute.at("w")), std::vector<float>({-2.f}));
}

TEST(InitGraphAttrsHidden, ZeroDimensionNeedsNoBytes) {
  RuntimeOperator op = HiddenOp();
  RuntimeGraph::InitGraphAttrs({{"w", HiddenAttr(pnnx::DataType::kF64, {0, 3}, {})}}, op);
  EXPECT_EQ(op.attribute.at("w").shape, std::vector<int>({0, 3}));
  EXPECT_TRUE(op.attribute.at("w").data.empty());
}

}  // namespace
}  // namespace kuiper
