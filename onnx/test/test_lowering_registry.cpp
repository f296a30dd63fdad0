// The lowerings register themselves from their own files; these tests check
// that the registry the importer dispatches on holds them all.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kuiper/onnx_import.hpp"

namespace kuiper::testing {
namespace {

// The operator types of the importer's former central dispatch table: a
// registration that the linker drops (a lowering file left out of the
// library, or an object file a static library would not pull in) shows here.
const std::set<std::string> kRegistryExpectedTypes = {"Abs",
                                                      "Acos",
                                                      "Acosh",
                                                      "Add",
                                                      "And",
                                                      "ArgMax",
                                                      "ArgMin",
                                                      "Asin",
                                                      "Asinh",
                                                      "Atan",
                                                      "Atanh",
                                                      "AveragePool",
                                                      "BatchNormalization",
                                                      "BitShift",
                                                      "Cast",
                                                      "CastLike",
                                                      "Ceil",
                                                      "Celu",
                                                      "Clip",
                                                      "Concat",
                                                      "Constant",
                                                      "ConstantOfShape",
                                                      "Conv",
                                                      "ConvTranspose",
                                                      "Cos",
                                                      "Cosh",
                                                      "CumSum",
                                                      "DepthToSpace",
                                                      "Div",
                                                      "Dropout",
                                                      "Elu",
                                                      "Equal",
                                                      "Erf",
                                                      "Exp",
                                                      "Expand",
                                                      "Flatten",
                                                      "Floor",
                                                      "Gather",
                                                      "GatherElements",
                                                      "Gemm",
                                                      "GlobalAveragePool",
                                                      "GlobalMaxPool",
                                                      "Greater",
                                                      "GreaterOrEqual",
                                                      "HardSigmoid",
                                                      "HardSwish",
                                                      "Hardmax",
                                                      "Identity",
                                                      "IsInf",
                                                      "IsNaN",
                                                      "LeakyRelu",
                                                      "Less",
                                                      "LessOrEqual",
                                                      "Log",
                                                      "LogSoftmax",
                                                      "MatMul",
                                                      "Max",
                                                      "MaxPool",
                                                      "Mean",
                                                      "Min",
                                                      "Mish",
                                                      "Mod",
                                                      "Mul",
                                                      "Neg",
                                                      "Not",
                                                      "Or",
                                                      "PRelu",
                                                      "Pad",
                                                      "Pow",
                                                      "Range",
                                                      "Reciprocal",
                                                      "ReduceL1",
                                                      "ReduceL2",
                                                      "ReduceLogSum",
                                                      "ReduceLogSumExp",
                                                      "ReduceMax",
                                                      "ReduceMean",
                                                      "ReduceMin",
                                                      "ReduceProd",
                                                      "ReduceSum",
                                                      "ReduceSumSquare",
                                                      "Relu",
                                                      "Reshape",
                                                      "Resize",
                                                      "Round",
                                                      "Selu",
                                                      "Shape",
                                                      "Shrink",
                                                      "Sigmoid",
                                                      "Sign",
                                                      "Sin",
                                                      "Sinh",
                                                      "Size",
                                                      "Slice",
                                                      "Softmax",
                                                      "Softplus",
                                                      "Softsign",
                                                      "SpaceToDepth",
                                                      "Split",
                                                      "Sqrt",
                                                      "Squeeze",
                                                      "Sub",
                                                      "Sum",
                                                      "Tan",
                                                      "Tanh",
                                                      "ThresholdedRelu",
                                                      "Tile",
                                                      "Transpose",
                                                      "Trilu",
                                                      "Unsqueeze",
                                                      "Upsample",
                                                      "Where",
                                                      "Xor"};

TEST(LoweringRegistry, HoldsEveryOperatorOfTheImporter) {
  const std::vector<std::string> types = SupportedOnnxOperators();
  const std::set<std::string> registered(types.begin(), types.end());
  EXPECT_EQ(kRegistryExpectedTypes.size(), 113u);
  for (const std::string& type : kRegistryExpectedTypes) {
    EXPECT_TRUE(registered.count(type)) << type << " has no registered lowering";
  }
  for (const std::string& type : registered) {
    EXPECT_TRUE(kRegistryExpectedTypes.count(type)) << type << " is registered but not listed here";
  }
}

TEST(LoweringRegistry, EveryOperatorStatesItsConstraints) {
  for (const OnnxOperatorInfo& info : OnnxOperators()) {
    EXPECT_FALSE(info.constraints.empty()) << info.type;
    EXPECT_EQ(info.constraints.find('\n'), std::string::npos) << info.type << ": one line";
  }
}

}  // namespace
}  // namespace kuiper::testing
