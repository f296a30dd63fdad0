// course3 stretch task: a RuntimeParameter written as PNNX writes it. The
// expected spellings are those of the PNNX files in models/fixtures (for
// example eps=1.000000e-05, scale_factor=(2.000000e+00,2.000000e+00)), and the
// core's reader pnnx::ParseParameter must read every one back as the same kind.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "kuiper/pnnx.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper::stretch {
// Defined in course3_graph/src/stretch_pnnx_text.cpp.
std::string PnnxText(const RuntimeParameter& value);
}  // namespace kuiper::stretch

namespace kuiper {
namespace {

using stretch::PnnxText;

TEST(PnnxText, NoneAndBools) {
  EXPECT_EQ(PnnxText(std::monostate{}), "None") << "see README §10";
  EXPECT_EQ(PnnxText(true), "True") << "Python's spelling; see README §10";
  EXPECT_EQ(PnnxText(false), "False") << "Python's spelling; see README §10";
}

TEST(PnnxText, IntsInDecimal) {
  EXPECT_EQ(PnnxText(-7), "-7") << "see README §10";
  EXPECT_EQ(PnnxText(64), "64") << "see README §10";
}

TEST(PnnxText, FloatsInPrintfE) {
  EXPECT_EQ(PnnxText(1e-5f), "1.000000e-05") << "PNNX writes %e; see README §10";
  EXPECT_EQ(PnnxText(2.0f), "2.000000e+00") << "a whole float is still written %e; see README §10";
  EXPECT_EQ(PnnxText(-0.5f), "-5.000000e-01") << "see README §10";
  EXPECT_EQ(PnnxText(std::numeric_limits<float>::infinity()), "inf") << "see README §10";
}

TEST(PnnxText, StringsAsTheyAre) {
  EXPECT_EQ(PnnxText(std::string("zeros")), "zeros") << "see README §10";
  EXPECT_EQ(PnnxText(std::string("add(@0,@1)")), "add(@0,@1)") << "see README §10";
}

TEST(PnnxText, ArraysInParentheses) {
  EXPECT_EQ(PnnxText(std::vector<int>{7, 7}), "(7,7)") << "see README §10";
  EXPECT_EQ(PnnxText(std::vector<int>{1, -1}), "(1,-1)") << "see README §10";
  EXPECT_EQ(PnnxText(std::vector<float>{2.f, 2.f}), "(2.000000e+00,2.000000e+00)")
      << "see README §10";
  EXPECT_EQ(PnnxText(std::vector<std::string>{"height", "width"}), "(height,width)")
      << "see README §10";
}

TEST(PnnxText, EmptyArraysAreEmptyParentheses) {
  EXPECT_EQ(PnnxText(std::vector<int>{}), "()") << "see README §10";
  EXPECT_EQ(PnnxText(std::vector<float>{}), "()") << "see README §10";
  EXPECT_EQ(PnnxText(std::vector<std::string>{}), "()") << "see README §10";
}

TEST(PnnxText, ReaderReadsEveryNonEmptyKindBack) {
  const std::vector<RuntimeParameter> values = {std::monostate{},
                                                true,
                                                -12,
                                                0.25f,
                                                std::string("zeros"),
                                                std::vector<int>{1, 2, 3},
                                                std::vector<float>{0.5f, 2.5f},
                                                std::vector<std::string>{"a", "b"}};
  for (const RuntimeParameter& value : values) {
    const std::string text = PnnxText(value);
    const pnnx::Parameter read = pnnx::ParseParameter(text);
    EXPECT_EQ(static_cast<size_t>(read.type), value.index())
        << "'" << text << "' reads back as type " << static_cast<int>(read.type) << ", not "
        << ParameterTypeName(value) << "; see README §10";
  }
}

}  // namespace
}  // namespace kuiper
