// course3_graph: RuntimeGraph::InitGraphAttrs turns every PNNX attribute (raw
// bytes, element type, shape) into float32 weights, and refuses bytes that do
// not fit the shape. The expected floats come from numpy (np.float16 and
// np.float32 casts) and from the bit layout worked out in README §3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {
namespace {

const std::string kAttrSource = KUIPER_SOURCE_DIR;
const std::string kTinyNet = kAttrSource + "/models/fixtures/tiny_net";

template <typename T>
std::vector<char> RawBytes(const std::vector<T>& values) {
  std::vector<char> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

pnnx::Attribute MakeAttr(pnnx::DataType type, std::vector<int> shape, std::vector<char> data) {
  return pnnx::Attribute{.type = type, .shape = std::move(shape), .data = std::move(data)};
}

// InitGraphAttrs on one attribute `name` of an operator called `op_name`.
RuntimeOperator ConvertAttr(const pnnx::Attribute& attr, const std::string& name = "w",
                            const std::string& op_name = "hand_op") {
  RuntimeOperator op;
  op.name = op_name;
  op.type = "custom.Hand";
  RuntimeGraph::InitGraphAttrs({{name, attr}}, op);
  return op;
}

// The floats an operator's attribute holds, read straight from its bytes.
std::vector<float> StoredFloats(const RuntimeOperator& op, const std::string& name = "w") {
  const RuntimeAttribute& stored = op.attribute.at(name);
  EXPECT_EQ(stored.type, pnnx::DataType::kF32) << "weights are stored as f32; see README §4";
  std::vector<float> values(stored.data.size() / sizeof(float));
  std::memcpy(values.data(), stored.data.data(), values.size() * sizeof(float));
  return values;
}

// The floats a list of half-precision bit patterns becomes.
std::vector<float> FromHalves(const std::vector<uint16_t>& halves) {
  const int count = static_cast<int>(halves.size());
  return StoredFloats(ConvertAttr(MakeAttr(pnnx::DataType::kF16, {count}, RawBytes(halves))));
}

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

TEST(InitGraphAttrs, F32BytesArriveUnchanged) {
  const std::vector<float> values = {1.5f, -2.f, 0.1f};
  const RuntimeOperator op = ConvertAttr(MakeAttr(pnnx::DataType::kF32, {3}, RawBytes(values)));
  EXPECT_EQ(op.attribute.at("w").data, RawBytes(values)) << "see README §4";
}

TEST(InitGraphAttrs, ResultIsF32WithTheSameShape) {
  const RuntimeOperator op =
      ConvertAttr(MakeAttr(pnnx::DataType::kF64, {2, 3}, RawBytes(std::vector<double>(6, 1.0))));
  ASSERT_EQ(op.attribute.count("w"), 1u) << "see README §4";
  const RuntimeAttribute& stored = op.attribute.at("w");
  EXPECT_EQ(stored.type, pnnx::DataType::kF32) << "see README §4";
  EXPECT_EQ(stored.shape, std::vector<int>({2, 3})) << "see README §4";
  EXPECT_EQ(stored.data.size(), 6 * sizeof(float)) << "6 floats of 4 bytes; see README §4";
}

TEST(InitGraphAttrs, F64IsRoundedToTheNearestFloat) {
  // numpy: np.float32(np.float64(0.1)).view(np.uint32) == 1036831949;
  // np.float32(1/3) == 0.3333333432674408.
  const std::vector<float> got = StoredFloats(ConvertAttr(MakeAttr(
      pnnx::DataType::kF64, {4}, RawBytes(std::vector<double>{0.25, -1e10, 0.1, 1.0 / 3}))));
  ASSERT_EQ(got.size(), 4u) << "see README §4";
  EXPECT_EQ(got[0], 0.25f);
  EXPECT_EQ(got[1], -1e10f);
  EXPECT_EQ(Bits(got[2]), 1036831949u) << "0.1 as the nearest float; see README §4";
  EXPECT_EQ(got[3], 0.3333333432674408f);
}

TEST(InitGraphAttrs, F16NormalNumbers) {
  // 0x3C00 = +2^0 * 1.0; 0xC000 = -2^1 * 1.0; 0x3555 = 2^-2 * (1 + 341/1024);
  // 0x7BFF = 2^15 * (1 + 1023/1024), the largest half; 0x0400 = 2^-14, the
  // smallest normal; 0x3E00 = 2^0 * (1 + 512/1024). np.float16 agrees.
  EXPECT_EQ(FromHalves({0x3C00, 0xC000, 0x3555, 0x7BFF, 0x0400, 0x3E00}),
            std::vector<float>({1.f, -2.f, 0.333251953125f, 65504.f, 6.103515625e-05f, 1.5f}))
      << "see README §3";
}

TEST(InitGraphAttrs, F16SubnormalsAreNotZero) {
  // Exponent field 0: 0.mantissa * 2^-14. 0x0001 = 2^-24, the smallest half;
  // 0x83FF = -(1023 * 2^-24), the largest subnormal; 0x0200 = 2^-15.
  EXPECT_EQ(
      FromHalves({0x0001, 0x83FF, 0x0200}),
      std::vector<float>({5.960464477539063e-08f, -6.097555160522461e-05f, 3.0517578125e-05f}))
      << "see README §3 (subnormals)";
}

TEST(InitGraphAttrs, F16NegativeZeroKeepsItsSign) {
  const std::vector<float> got = FromHalves({0x8000, 0x0000});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(Bits(got[0]), 0x80000000u) << "0x8000 is -0.0; see README §3";
  EXPECT_EQ(Bits(got[1]), 0u) << "0x0000 is +0.0; see README §3";
}

TEST(InitGraphAttrs, F16Infinities) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FromHalves({0x7C00, 0xFC00}), std::vector<float>({inf, -inf})) << "see README §3";
}

TEST(InitGraphAttrs, F16NotANumber) {
  const std::vector<float> got = FromHalves({0x7E00, 0xFE00});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(std::isnan(got[0])) << "0x7E00 is NaN; see README §3";
  EXPECT_TRUE(std::isnan(got[1])) << "0xFE00 is NaN; see README §3";
}

TEST(InitGraphAttrs, SignedIntegersKeepTheirValue) {
  using pnnx::DataType;
  EXPECT_EQ(StoredFloats(ConvertAttr(
                MakeAttr(DataType::kI64, {2}, RawBytes(std::vector<int64_t>{-3, 1LL << 40})))),
            std::vector<float>({-3.f, 1099511627776.f}))
      << "i64; see README §4";
  EXPECT_EQ(StoredFloats(ConvertAttr(
                MakeAttr(DataType::kI32, {2}, RawBytes(std::vector<int32_t>{-7, 100000})))),
            std::vector<float>({-7.f, 100000.f}))
      << "i32; see README §4";
  EXPECT_EQ(StoredFloats(ConvertAttr(
                MakeAttr(DataType::kI16, {2}, RawBytes(std::vector<int16_t>{-32768, 32767})))),
            std::vector<float>({-32768.f, 32767.f}))
      << "i16; see README §4";
  EXPECT_EQ(StoredFloats(ConvertAttr(
                MakeAttr(DataType::kI8, {2}, RawBytes(std::vector<int8_t>{-128, 127})))),
            std::vector<float>({-128.f, 127.f}))
      << "i8; see README §4";
}

TEST(InitGraphAttrs, U8IsUnsigned) {
  EXPECT_EQ(StoredFloats(ConvertAttr(
                MakeAttr(pnnx::DataType::kU8, {3}, RawBytes(std::vector<uint8_t>{0, 128, 255})))),
            std::vector<float>({0.f, 128.f, 255.f}))
      << "u8 bytes are 0..255 (a char may be signed); see README §4";
}

TEST(InitGraphAttrs, BoolIsZeroOrOne) {
  EXPECT_EQ(StoredFloats(ConvertAttr(
                MakeAttr(pnnx::DataType::kBool, {3}, RawBytes(std::vector<uint8_t>{0, 1, 2})))),
            std::vector<float>({0.f, 1.f, 1.f}))
      << "any non-zero byte is true; see README §4";
}

TEST(InitGraphAttrs, TooFewOrTooManyBytesThrowParseError) {
  // (2,3)f32 needs 6 * 4 = 24 bytes.
  EXPECT_THROW(ConvertAttr(MakeAttr(pnnx::DataType::kF32, {2, 3}, std::vector<char>(20))),
               ParseError)
      << "20 bytes for 24; see README §4";
  EXPECT_THROW(ConvertAttr(MakeAttr(pnnx::DataType::kF32, {2, 3}, std::vector<char>(28))),
               ParseError)
      << "28 bytes for 24; see README §4";
}

TEST(InitGraphAttrs, ByteCountMessageNamesOperatorAttributeAndNumbers) {
  // (2,3)f16 needs 6 * 2 = 12 bytes; the data holds 10.
  try {
    ConvertAttr(MakeAttr(pnnx::DataType::kF16, {2, 3}, std::vector<char>(10)), "weight", "conv9");
    FAIL() << "expected a ParseError; see README §4";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    for (const char* part : {"conv9", "weight", "12", "10"}) {
      EXPECT_NE(what.find(part), std::string::npos)
          << "the message should contain '" << part << "': " << what << "; see README §4";
    }
  }
}

TEST(InitGraphAttrs, NegativeDimensionThrowsParseError) {
  // (-2,-2) multiplies to 4 in int: 16 bytes would "fit" four floats.
  EXPECT_THROW(ConvertAttr(MakeAttr(pnnx::DataType::kF32, {-2, -2}, std::vector<char>(16))),
               ParseError)
      << "a dimension below zero is corrupt, whatever the product; see README §4";
}

TEST(InitGraphAttrs, NullTypeThrowsParseError) {
  EXPECT_THROW(ConvertAttr(MakeAttr(pnnx::DataType::kNull, {1}, {})), ParseError)
      << "kNull has no element size; see README §4";
}

TEST(InitGraphAttrs, TypeOutsideTheEnumThrowsParseError) {
  EXPECT_THROW(ConvertAttr(MakeAttr(static_cast<pnnx::DataType>(42), {1}, {})), ParseError)
      << "see README §4";
}

TEST(InitGraphAttrs, EveryAttributeOfTheOperatorIsStored) {
  RuntimeOperator op;
  op.name = "hand_op";
  RuntimeGraph::InitGraphAttrs(
      {{"bias", MakeAttr(pnnx::DataType::kF16, {1}, RawBytes(std::vector<uint16_t>{0x3C00}))},
       {"weight", MakeAttr(pnnx::DataType::kF64, {1}, RawBytes(std::vector<double>{-2.0}))}},
      op);
  EXPECT_EQ(op.attribute.size(), 2u) << "see README §4";
  EXPECT_EQ(StoredFloats(op, "bias"), std::vector<float>({1.f}));
  EXPECT_EQ(StoredFloats(op, "weight"), std::vector<float>({-2.f}));
}

TEST(InitGraphAttrs, TinyNetWeightsLoadAsTheBytesOfTheFile) {
  RuntimeGraph graph(kTinyNet + ".pnnx.param", kTinyNet + ".pnnx.bin");
  graph.Init();
  const pnnx::Graph file = pnnx::Load(kTinyNet + ".pnnx.param", kTinyNet + ".pnnx.bin");
  int attributes = 0;
  for (const pnnx::Operator& source : file.operators) {
    const RuntimeOperator* op = graph.FindOperator(source.name);
    ASSERT_NE(op, nullptr) << source.name;
    ASSERT_EQ(op->attribute.size(), source.attrs.size()) << source.name;
    for (const auto& [key, attr] : source.attrs) {
      ++attributes;
      const RuntimeAttribute& stored = op->attribute.at(key);
      EXPECT_EQ(stored.type, pnnx::DataType::kF32) << source.name << "@" << key;
      EXPECT_EQ(stored.shape, attr.shape) << source.name << "@" << key;
      EXPECT_EQ(stored.data, attr.data) << source.name << "@" << key << ": f32 bytes stay as read";
    }
  }
  EXPECT_EQ(attributes, 6);  // weight and bias of conv1, conv2 and fc
}

TEST(InitGraphAttrs, TinyNetStoredAsF64LoadsTheSameWeights) {
  // Every float is exactly a double, so the f64 graph must give back the f32 bytes.
  const pnnx::Graph file = pnnx::Load(kTinyNet + ".pnnx.param", kTinyNet + ".pnnx.bin");
  pnnx::Graph wide = file;
  for (pnnx::Operator& op : wide.operators) {
    for (auto& [key, attr] : op.attrs) {
      const std::vector<float> floats = attr.ToFloat();
      attr.type = pnnx::DataType::kF64;
      attr.data = RawBytes(std::vector<double>(floats.begin(), floats.end()));
    }
  }
  RuntimeGraph graph(std::move(wide), "tiny_net_f64");
  graph.Init();
  for (const pnnx::Operator& source : file.operators) {
    const RuntimeOperator* op = graph.FindOperator(source.name);
    ASSERT_NE(op, nullptr) << source.name;
    for (const auto& [key, attr] : source.attrs) {
      EXPECT_EQ(op->attribute.at(key).data, attr.data) << source.name << "@" << key;
    }
  }
}

}  // namespace
}  // namespace kuiper
