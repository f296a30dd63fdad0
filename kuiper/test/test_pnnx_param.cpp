// Specification of the PNNX text reader: how each parameter spelling is read,
// what LoadParam builds from a small graph, and the exact ParseError every
// kind of malformed file gets. Well-formed graphs are committed under
// kuiper/test/data/pnnx/; each malformed file is written by its own test, so
// the text and the expected message sit side by side.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "kuiper/error.hpp"
#include "kuiper/pnnx.hpp"
#include "test_files.hpp"

namespace kuiper::pnnx {
namespace {

const std::string kParamDataDir = KUIPER_SOURCE_DIR "/kuiper/test/data/pnnx/";

// Writes `text` to a file named after the running test, under the build
// directory, so that two builds running the tests at once never share it.
std::string WriteParam(std::string_view text) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::path(test::BinaryDir()) / "test_tmp" / "pnnx";
  std::filesystem::create_directories(dir);
  const auto path =
      dir / (std::string(test->test_suite_name()) + "." + test->name() + ".pnnx.param");
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// The message of the ParseError LoadParam throws for `path`.
std::string LoadParamError(const std::string& path) {
  try {
    LoadParam(path);
  } catch (const ParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "LoadParam(\"" << path << "\") did not throw ParseError";
  return "";
}

std::string ParseParameterError(std::string_view text) {
  try {
    ParseParameter(text);
  } catch (const ParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "ParseParameter(\"" << text << "\") did not throw ParseError";
  return "";
}

// ---------------------------------------------------------------------------
// ParseParameter

TEST(PnnxParameter, NoneIsNull) { EXPECT_EQ(ParseParameter("None").type, ParameterType::kNull); }

TEST(PnnxParameter, EmptyParenthesesAreNull) {
  EXPECT_EQ(ParseParameter("()").type, ParameterType::kNull);
}

TEST(PnnxParameter, EmptyBracketsAreNull) {
  EXPECT_EQ(ParseParameter("[]").type, ParameterType::kNull);
}

TEST(PnnxParameter, TrueIsBoolTrue) {
  const Parameter p = ParseParameter("True");
  EXPECT_EQ(p.type, ParameterType::kBool);
  EXPECT_TRUE(p.b);
}

TEST(PnnxParameter, FalseIsBoolFalse) {
  const Parameter p = ParseParameter("False");
  EXPECT_EQ(p.type, ParameterType::kBool);
  EXPECT_FALSE(p.b);
}

TEST(PnnxParameter, IntegerIsInt) {
  const Parameter p = ParseParameter("64");
  EXPECT_EQ(p.type, ParameterType::kInt);
  EXPECT_EQ(p.i, 64);
}

TEST(PnnxParameter, NegativeIntegerIsInt) {
  const Parameter p = ParseParameter("-1");
  EXPECT_EQ(p.type, ParameterType::kInt);
  EXPECT_EQ(p.i, -1);
}

TEST(PnnxParameter, LargestIntIsInt) {
  EXPECT_EQ(ParseParameter("2147483647").i, std::numeric_limits<int>::max());
}

TEST(PnnxParameter, IntegerBeyondIntThrows) {
  EXPECT_EQ(ParseParameterError("2147483648"), "integer 2147483648 does not fit in int");
}

// Expects `text` to be read as the float `value`: every way PNNX (C's %e) or
// a hand-written file spells a float.
void ExpectFloat(std::string_view text, float value) {
  const Parameter p = ParseParameter(text);
  EXPECT_EQ(p.type, ParameterType::kFloat);
  EXPECT_EQ(p.f, value);
}

TEST(PnnxParameter, PnnxExponentIsFloat) { ExpectFloat("1.000000e-05", 1e-5f); }
TEST(PnnxParameter, ShortExponentIsFloat) { ExpectFloat("1e-05", 1e-5f); }
TEST(PnnxParameter, UpperCaseExponentIsFloat) { ExpectFloat("2.5E+02", 250.f); }
TEST(PnnxParameter, DecimalIsFloat) { ExpectFloat("0.001", 0.001f); }
TEST(PnnxParameter, WholeDecimalIsFloat) { ExpectFloat("1.0", 1.f); }
TEST(PnnxParameter, NegativeDecimalIsFloat) { ExpectFloat("-0.5", -0.5f); }
TEST(PnnxParameter, InfIsFloat) { ExpectFloat("inf", std::numeric_limits<float>::infinity()); }
TEST(PnnxParameter, NegativeInfIsFloat) {
  ExpectFloat("-inf", -std::numeric_limits<float>::infinity());
}
TEST(PnnxParameter, SubnormalIsFloat) { ExpectFloat("1e-40", 1e-40f); }

TEST(PnnxParameter, NanIsFloatNan) {
  const Parameter p = ParseParameter("nan");
  EXPECT_EQ(p.type, ParameterType::kFloat);
  EXPECT_TRUE(std::isnan(p.f));
}

TEST(PnnxParameter, FloatBeyondFloatThrows) {
  EXPECT_EQ(ParseParameterError("1e50"), "float 1e50 does not fit in float");
}

TEST(PnnxParameter, WordIsString) {
  const Parameter p = ParseParameter("nearest");
  EXPECT_EQ(p.type, ParameterType::kString);
  EXPECT_EQ(p.s, "nearest");
}

TEST(PnnxParameter, WordWithLetterEIsString) {
  const Parameter p = ParseParameter("zeros");
  EXPECT_EQ(p.type, ParameterType::kString);
  EXPECT_EQ(p.s, "zeros");
}

TEST(PnnxParameter, ExpressionWithParenthesesAndCommasIsString) {
  const Parameter p = ParseParameter("add(@0,@1)");
  EXPECT_EQ(p.type, ParameterType::kString);
  EXPECT_EQ(p.s, "add(@0,@1)");
}

TEST(PnnxParameter, EmptyValueIsEmptyString) {
  const Parameter p = ParseParameter("");
  EXPECT_EQ(p.type, ParameterType::kString);
  EXPECT_EQ(p.s, "");
}

TEST(PnnxParameter, IntegersInParenthesesAreIntArray) {
  const Parameter p = ParseParameter("(1,-2,3)");
  EXPECT_EQ(p.type, ParameterType::kIntArray);
  EXPECT_EQ(p.ai, std::vector<int>({1, -2, 3}));
}

TEST(PnnxParameter, IntegersInBracketsAreIntArray) {
  const Parameter p = ParseParameter("[7]");
  EXPECT_EQ(p.type, ParameterType::kIntArray);
  EXPECT_EQ(p.ai, std::vector<int>({7}));
}

TEST(PnnxParameter, ArrayWithAnyFloatIsFloatArray) {
  const Parameter p = ParseParameter("(1,2.5,1.000000e-05)");
  EXPECT_EQ(p.type, ParameterType::kFloatArray);
  EXPECT_EQ(p.af, std::vector<float>({1.f, 2.5f, 1e-5f}));
}

TEST(PnnxParameter, ArrayOfWordsIsStringArray) {
  const Parameter p = ParseParameter("(a,b)");
  EXPECT_EQ(p.type, ParameterType::kStringArray);
  EXPECT_EQ(p.as, std::vector<std::string>({"a", "b"}));
}

TEST(PnnxParameter, ArrayMixingNumbersAndWordsIsStringArrayAsWritten) {
  const Parameter p = ParseParameter("(1,a,2.0)");
  EXPECT_EQ(p.type, ParameterType::kStringArray);
  EXPECT_EQ(p.as, std::vector<std::string>({"1", "a", "2.0"}));
}

TEST(PnnxParameter, UnclosedParenthesisThrows) {
  EXPECT_EQ(ParseParameterError("(1,2"), "array '(1,2' does not end with ')'");
}

TEST(PnnxParameter, MismatchedBracketThrows) {
  EXPECT_EQ(ParseParameterError("(1,2]"), "array '(1,2]' does not end with ')'");
}

TEST(PnnxParameter, EmptyArrayElementThrows) {
  EXPECT_EQ(ParseParameterError("(1,,2)"), "empty element in array '(1,,2)'");
}

TEST(PnnxParameter, NestedArrayThrows) {
  EXPECT_EQ(ParseParameterError("((1,2),(3,4))"),
            "nested array '((1,2),(3,4))' is not a PNNX parameter");
}

// ---------------------------------------------------------------------------
// LoadParam on tiny.pnnx.param: input -> conv -> relu, add(conv, relu) -> output

class PnnxTinyGraph : public ::testing::Test {
 protected:
  Graph graph_ = LoadParam(kParamDataDir + "tiny.pnnx.param");
  const Operator& conv_ = graph_.operators.at(1);
  const Operator& expr_ = graph_.operators.at(3);
};

TEST_F(PnnxTinyGraph, OperatorsKeepFileOrder) {
  ASSERT_EQ(graph_.operators.size(), 5u);
  std::vector<std::string> names;
  for (const Operator& op : graph_.operators) names.push_back(op.type + " " + op.name);
  EXPECT_EQ(names,
            std::vector<std::string>({"pnnx.Input pnnx_input_0", "nn.Conv2d conv", "nn.ReLU relu",
                                      "pnnx.Expression pnnx_expr_0", "pnnx.Output pnnx_output_0"}));
}

TEST_F(PnnxTinyGraph, OperandsAreNumberedInOrderOfFirstMention) {
  std::vector<std::string> names;
  for (const Operand& operand : graph_.operands) names.push_back(operand.name);
  EXPECT_EQ(names, std::vector<std::string>({"0", "1", "2", "3"}));
}

TEST_F(PnnxTinyGraph, OperatorsListTheirInputAndOutputOperands) {
  EXPECT_EQ(expr_.inputs, std::vector<int>({1, 2}));
  EXPECT_EQ(expr_.outputs, std::vector<int>({3}));
}

TEST_F(PnnxTinyGraph, OperandsKnowTheirProducerAndConsumers) {
  const Operand& conv_out = graph_.operands.at(1);
  EXPECT_EQ(conv_out.producer, 1);
  EXPECT_EQ(conv_out.consumers, std::vector<int>({2, 3}));
}

TEST_F(PnnxTinyGraph, ParametersAreTyped) {
  EXPECT_EQ(conv_.params.size(), 9u);
  EXPECT_TRUE(conv_.params.at("bias").b);
  EXPECT_EQ(conv_.params.at("kernel_size").ai, std::vector<int>({1, 1}));
  EXPECT_EQ(conv_.params.at("out_channels").i, 2);
  EXPECT_EQ(conv_.params.at("padding_mode").s, "zeros");
  EXPECT_EQ(expr_.params.at("expr").s, "add(@0,@1)");
}

TEST_F(PnnxTinyGraph, AttributesHaveTypeAndShapeButNoDataYet) {
  ASSERT_EQ(conv_.attrs.size(), 2u);
  const Attribute& weight = conv_.attrs.at("weight");
  EXPECT_EQ(weight.type, DataType::kF32);
  EXPECT_EQ(weight.shape, std::vector<int>({2, 3, 1, 1}));
  EXPECT_TRUE(weight.data.empty());
  EXPECT_EQ(conv_.attrs.at("bias").shape, std::vector<int>({2}));
}

TEST_F(PnnxTinyGraph, DollarItemsNameInputs) {
  EXPECT_EQ(conv_.input_names, std::vector<std::string>({"input"}));
}

TEST_F(PnnxTinyGraph, UnnamedInputsHaveEmptyNames) {
  EXPECT_EQ(expr_.input_names, std::vector<std::string>({"", ""}));
}

TEST_F(PnnxTinyGraph, AnnotationsGiveOperandShapeWithUnknownDimsAsMinusOne) {
  const Operand& input = graph_.operands.at(0);
  EXPECT_EQ(input.type, DataType::kF32);
  EXPECT_EQ(input.shape, std::vector<int>({1, 3, -1, -1}));
}

TEST_F(PnnxTinyGraph, OperatorsRememberTheirLine) {
  EXPECT_EQ(graph_.operators.front().line, 3);
  EXPECT_EQ(conv_.line, 4);
}

// unordered.pnnx.param is the same graph with the operator lines reversed,
// no annotations and a blank line.
TEST(PnnxParam, ConsumersMayComeBeforeTheirProducer) {
  const Graph graph = LoadParam(kParamDataDir + "unordered.pnnx.param");
  ASSERT_EQ(graph.operators.size(), 5u);
  ASSERT_EQ(graph.operands.size(), 4u);
  const Operand& conv_out = graph.operands.at(1);  // order of first mention: 3, 1, 2, 0
  EXPECT_EQ(conv_out.name, "1");
  EXPECT_EQ(graph.operators.at(conv_out.producer).name, "conv");
  EXPECT_EQ(conv_out.consumers, std::vector<int>({1, 2}));
}

TEST(PnnxParam, BlankLinesAreSkippedButCounted) {
  const Graph graph = LoadParam(kParamDataDir + "unordered.pnnx.param");
  EXPECT_EQ(graph.operators.at(3).name, "conv");
  EXPECT_EQ(graph.operators.at(3).line, 7);
}

TEST(PnnxParam, UnannotatedOperandHasNoTypeOrShape) {
  const Graph graph = LoadParam(kParamDataDir + "unordered.pnnx.param");
  EXPECT_EQ(graph.operands.at(0).type, DataType::kNull);
  EXPECT_TRUE(graph.operands.at(0).shape.empty());
}

TEST(PnnxParam, OperandUsedTwiceByOneOperatorIsConsumedTwiceAndNamedPerPosition) {
  const Graph graph =
      LoadParam(WriteParam("7767517\n3 2\n"
                           "pnnx.Input in 0 1 x\n"
                           "pnnx.Expression square 2 1 x x y expr=mul(@0,@1) $input=x $other=x\n"
                           "pnnx.Output out 1 0 y\n"));
  EXPECT_EQ(graph.operands.at(0).consumers, std::vector<int>({1, 1}));
  EXPECT_EQ(graph.operators.at(1).input_names, std::vector<std::string>({"input", "other"}));
}

TEST(PnnxParam, ScalarAttributeHasEmptyShape) {
  const Graph graph = LoadParam(
      WriteParam("7767517\n2 1\npnnx.Attribute scale 0 1 s @data=()f32\npnnx.Output out 1 0 s\n"));
  EXPECT_TRUE(graph.operators.at(0).attrs.at("data").shape.empty());
}

// ---------------------------------------------------------------------------
// Malformed files: each gets a ParseError naming the file and the line.

TEST(PnnxParamError, MissingFile) {
  const std::string path = kParamDataDir + "no_such_file.pnnx.param";
  EXPECT_EQ(LoadParamError(path), path + ": cannot open PNNX param file");
}

TEST(PnnxParamError, EmptyFile) {
  const std::string path = WriteParam("");
  EXPECT_EQ(LoadParamError(path), path + ":1: expected magic 7767517, found an empty file");
}

TEST(PnnxParamError, WrongMagic) {
  const std::string path = WriteParam("7767518\n0 0\n");
  EXPECT_EQ(LoadParamError(path), path + ":1: expected magic 7767517, found '7767518'");
}

TEST(PnnxParamError, BinaryJunkIsQuotedShortly) {
  const std::string path = WriteParam(std::string(100, 'x') + "\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":1: expected magic 7767517, found '" + std::string(40, 'x') + "...'");
}

TEST(PnnxParamError, MissingCountsLine) {
  const std::string path = WriteParam("7767517\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":2: expected '<operator count> <operand count>', found end of file");
}

TEST(PnnxParamError, CountsLineWithOneNumber) {
  const std::string path = WriteParam("7767517\n3\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":2: expected '<operator count> <operand count>', found '3'");
}

TEST(PnnxParamError, CountsLineNotNumbers) {
  const std::string path = WriteParam("7767517\nthree 2\n");
  EXPECT_EQ(LoadParamError(path), path + ":2: operator count 'three' is not an integer");
}

TEST(PnnxParamError, NegativeCount) {
  const std::string path = WriteParam("7767517\n0 -1\n");
  EXPECT_EQ(LoadParamError(path), path + ":2: operand count -1 is negative");
}

TEST(PnnxParamError, AbsurdCount) {
  const std::string path = WriteParam("7767517\n2000000000 1\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":2: operator count 2000000000 is larger than the limit 16777216");
}

TEST(PnnxParamError, CountBeyondIntIsAbsurd) {
  const std::string path = WriteParam("7767517\n1 99999999999999999999\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":2: operand count 99999999999999999999 is larger than the limit 16777216");
}

TEST(PnnxParamError, OperatorCountDiffersFromOperatorLines) {
  const std::string path = WriteParam("7767517\n3 1\npnnx.Input in 0 1 x\npnnx.Output out 1 0 x\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":2: the counts line says 3 operators, but the file has 2 operator lines");
}

TEST(PnnxParamError, OperandCountDiffersFromDistinctOperands) {
  const std::string path = WriteParam("7767517\n2 2\npnnx.Input in 0 1 x\npnnx.Output out 1 0 x\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":2: the counts line says 2 operands, but the operator lines name 1");
}

TEST(PnnxParamError, OperatorLineWithoutCounts) {
  const std::string path = WriteParam("7767517\n1 0\nnn.ReLU relu\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":3: expected '<type> <name> <input count> <output count> ...', found 2 tokens");
}

TEST(PnnxParamError, FewerOperandNamesThanCounts) {
  const std::string path = WriteParam("7767517\n1 1\nnn.ReLU relu 1 1 0\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":3: 1 inputs and 1 outputs need 2 operand names, but the line has only 1");
}

TEST(PnnxParamError, HugeInputCountDoesNotAllocate) {
  const std::string path = WriteParam("7767517\n1 1\nnn.ReLU relu 2147483647 1 0 1\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":3: 2147483647 inputs and 1 outputs need 2147483648 "
                                      "operand names, but the line has only 2");
}

TEST(PnnxParamError, NegativeInputCount) {
  const std::string path = WriteParam("7767517\n1 1\nnn.ReLU relu -1 1 0\n");
  EXPECT_EQ(LoadParamError(path), path + ":3: input count '-1' is not a non-negative integer");
}

TEST(PnnxParamError, ParameterWhereAnOperandNameIsExpected) {
  const std::string path =
      WriteParam("7767517\n2 2\npnnx.Input in 0 1 0\nnn.ReLU relu 2 1 0 1 inplace=False\n");
  EXPECT_EQ(LoadParamError(path),
            path +
                ":4: operand name 'inplace=False' contains '=': do the input and output "
                "counts match the operands?");
}

TEST(PnnxParamError, DuplicateOperatorName) {
  const std::string path =
      WriteParam("7767517\n3 2\npnnx.Input a 0 1 x\nnn.ReLU a 1 1 x y\npnnx.Output out 1 0 y\n");
  EXPECT_EQ(LoadParamError(path), path + ":4: operator name 'a' is already used on line 3");
}

TEST(PnnxParamError, OperandNeverProduced) {
  const std::string path =
      WriteParam("7767517\n2 3\npnnx.Input in 0 1 x\nnn.ReLU relu 1 1 ghost y\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":4: operand 'ghost' is an input of operator 'relu', "
                                      "but no operator produces it");
}

TEST(PnnxParamError, OperandProducedTwice) {
  const std::string path =
      WriteParam("7767517\n3 1\npnnx.Input a 0 1 x\npnnx.Input b 0 1 x\npnnx.Output out 1 0 x\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":4: operand 'x' is already produced by operator 'a' on line 3");
}

TEST(PnnxParamError, OperandTwiceAmongOneOperatorsOutputs) {
  const std::string path =
      WriteParam("7767517\n2 1\npnnx.Input in 0 2 x x\npnnx.Output out 1 0 x\n");
  EXPECT_EQ(LoadParamError(path), path + ":3: operand 'x' is listed twice as an output");
}

TEST(PnnxParamError, UnknownParameterSyntax) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Input in 0 1 x shape=(1,3\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":3: parameter 'shape': array '(1,3' does not end with ')'");
}

TEST(PnnxParamError, ItemWithoutEquals) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Input in 0 1 x inplace\n");
  EXPECT_EQ(LoadParamError(path),
            path +
                ":3: expected key=value, @attribute=(shape)type, $input=operand or "
                "#operand=(shape)type, found 'inplace'");
}

TEST(PnnxParamError, ParameterTwice) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Input in 0 1 x a=1 a=2\n");
  EXPECT_EQ(LoadParamError(path), path + ":3: parameter 'a' appears twice");
}

TEST(PnnxParamError, AttributeWithoutParentheses) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Attribute w 0 1 x @data=2,3f32\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":3: attribute @data: expected (shape)type such as "
                                      "(1,3,224,224)f32, found '2,3f32'");
}

TEST(PnnxParamError, AttributeOfUnknownType) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Attribute w 0 1 x @data=(2)f31\n");
  EXPECT_EQ(LoadParamError(path),
            path +
                ":3: attribute @data: unknown data type 'f31' (expected f32, f64, f16, i64, "
                "i32, i16, i8, u8 or bool)");
}

TEST(PnnxParamError, AttributeOfComplexType) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Attribute w 0 1 x @data=(2)c64\n");
  EXPECT_EQ(LoadParamError(path), path + ":3: attribute @data: unsupported data type 'c64'");
}

TEST(PnnxParamError, AttributeOfNullType) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Attribute w 0 1 x @data=(2)null\n");
  EXPECT_EQ(LoadParamError(path), path + ":3: attribute @data needs a data type, found null");
}

TEST(PnnxParamError, AttributeWithUnknownDim) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Attribute w 0 1 x @data=(?,3)f32\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":3: attribute @data: dim '?' in '(?,3)f32' is not a "
                                      "non-negative integer");
}

TEST(PnnxParamError, AttributeWithDimBeyondInt) {
  const std::string path =
      WriteParam("7767517\n1 1\npnnx.Attribute w 0 1 x @data=(99999999999)f32\n");
  EXPECT_EQ(LoadParamError(path),
            path + ":3: attribute @data: integer 99999999999 does not fit in int");
}

TEST(PnnxParamError, AttributeOverTwoToThe31Elements) {
  const std::string path =
      WriteParam("7767517\n1 1\npnnx.Attribute w 0 1 x @data=(65536,32769)f32\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":3: attribute @data: shape '(65536,32769)f32' has "
                                      "more than 2^31 elements");
}

TEST(PnnxParamError, AttributeWhoseElementCountOverflows) {
  const std::string path = WriteParam(
      "7767517\n1 1\npnnx.Attribute w 0 1 x @data=(2147483647,2147483647,2147483647)f32\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":3: attribute @data: shape "
                                      "'(2147483647,2147483647,2147483647)f32' has more than "
                                      "2^31 elements");
}

TEST(PnnxParamError, AnnotationWithoutParentheses) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Input in 0 1 x #x=1,3f32\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":3: annotation #x: expected (shape)type such as "
                                      "(1,3,224,224)f32, found '1,3f32'");
}

TEST(PnnxParamError, AnnotationWithBadDim) {
  const std::string path = WriteParam("7767517\n1 1\npnnx.Input in 0 1 x #x=(1,-3)f32\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":3: annotation #x: dim '-3' in '(1,-3)f32' is not a "
                                      "non-negative integer or ?");
}

TEST(PnnxParamError, AnnotationOfAnotherOperatorsOperand) {
  const std::string path =
      WriteParam("7767517\n2 2\npnnx.Input in 0 1 x\npnnx.Input in2 0 1 y #x=(1)f32\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":4: #x annotates operand 'x', which is not an input or "
                                      "output of this operator");
}

TEST(PnnxParamError, InputNameForAnOperandThatIsNotAnInput) {
  const std::string path =
      WriteParam("7767517\n2 2\npnnx.Input in 0 1 x\nnn.ReLU relu 1 1 x y $input=y\n");
  EXPECT_EQ(LoadParamError(path), path +
                                      ":4: $input=y names operand 'y', which is not an "
                                      "unnamed input of this operator");
}

}  // namespace
}  // namespace kuiper::pnnx
