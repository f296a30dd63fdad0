// Element-wise ONNX nodes as one pnnx.Expression each: math
// functions, activations with parameters, comparisons, logic, Where, Mod,
// integer Div, BitShift, the variadic Sum/Mean/Min/Max and Cast. The
// expression layer already broadcasts N-D operands as NumPy does, so one
// mechanism covers them all, and PNNX graphs get the same functions.
//
// The engine computes in float32: an integer or bool value travels as the
// float32 holding its ONNX value (bool: 0 or 1). Where ONNX's integer
// semantics differ from float arithmetic (Div truncates, Mod takes the
// divisor's sign, Cast to an integer truncates and wraps), the expression
// says so, chosen from the elem types shape inference gives every value.
// Add, Sub, Mul, Pow and the unary functions of unary_ops.def are expressions
// too; Identity and Dropout (at inference) are copies.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>

#include "kuiper/unary_ops.hpp"
#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

bool ElemIsUnsigned(int type) {
  return type == onnx::TensorProto::UINT8 || type == onnx::TensorProto::UINT16 ||
         type == onnx::TensorProto::UINT32 || type == onnx::TensorProto::UINT64;
}

int ElemBits(int type) {
  switch (type) {
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
      return 8;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
      return 16;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 32;
    default:
      return 64;
  }
}

// Types the engine holds exactly or as float32: the floats, the integers, bool.
bool ElemIsNumeric(int type) {
  return type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE ||
         type == onnx::TensorProto::BOOL || ElemIsInteger(type);
}

// A float constant in expression syntax: 9 significant digits read back as
// the same float.
std::string ElemNumber(double value) { return fmt::format("{:.8e}", static_cast<float>(value)); }

// The largest finite float: x > it only for +inf.
const std::string& ElemFloatMax() {
  static const std::string text = ElemNumber(std::numeric_limits<float>::max());
  return text;
}

// Functions of two inputs with NumPy broadcasting.
const std::map<std::string, std::string>& ElemBinaryCalls() {
  static const std::map<std::string, std::string> calls = {
      {"Equal", "eq"},          {"Less", "lt"}, {"Greater", "gt"}, {"LessOrEqual", "le"},
      {"GreaterOrEqual", "ge"}, {"And", "and"}, {"Or", "or"},      {"Xor", "xor"},
  };
  return calls;
}

// The node has `least` to `most` inputs, and the first `least` are given.
void NeedInputs(Context& ctx, const onnx::NodeProto& node, int least, int most) {
  const int n = node.input_size();
  if (n < least || n > most) {
    ctx.Fail(node, least == most ? fmt::format("needs {} input(s), has {}", least, n)
                                 : fmt::format("needs {} to {} inputs, has {}", least, most, n));
  }
  for (int k = 0; k < least; ++k) {
    if (node.input(k).empty()) ctx.Fail(node, fmt::format("input {} is missing", k));
  }
}

// A finite float attribute (NaN and infinities refused naming the node).
float FiniteAttribute(Context& ctx, const onnx::NodeProto& node, const std::string& name,
                      float fallback) {
  const float value = ctx.FloatAttributeChecked(node, name, fallback);
  if (std::isinf(value)) ctx.Fail(node, fmt::format("attribute '{}' is infinite", name));
  return value;
}

// The expression over @0..@(n-1) = the node's inputs that computes `node`
// with ONNX's semantics for the elem types of its values, or "@0" for a copy:
// one builder per family of operators.
using ExpressionBuilder = std::string (*)(Context& ctx, const onnx::NodeProto& node);

std::string ComparisonExpression(Context& ctx, const onnx::NodeProto& node) {
  NeedInputs(ctx, node, 2, 2);
  return fmt::format("{}(@0,@1)", ElemBinaryCalls().at(node.op_type()));
}

std::string DivExpression(Context& ctx, const onnx::NodeProto& node) {
  NeedInputs(ctx, node, 2, 2);
  // Integer division truncates toward zero (C's /, ONNX Runtime's kernels).
  return ElemIsInteger(ctx.ElemType(node.output(0))) ? "trunc(div(@0,@1))" : "div(@0,@1)";
}

std::string WhereExpression(Context& ctx, const onnx::NodeProto& node) {
  NeedInputs(ctx, node, 3, 3);
  return "where(@0,@1,@2)";
}

// Sum, Mean, Max and Min of any number of inputs.
std::string VariadicExpression(Context& ctx, const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  const int n = node.input_size();
  NeedInputs(ctx, node, 1, std::max(1, n));
  const char* call = type == "Max" ? "max" : type == "Min" ? "min" : "add";
  std::string expr = "@0";
  for (int k = 1; k < n; ++k) {
    if (node.input(k).empty()) ctx.Fail(node, fmt::format("input {} is missing", k));
    expr = fmt::format("{}({},@{})", call, expr, k);
  }
  if (type == "Mean" && n > 1) expr = fmt::format("div({},{})", expr, n);
  return expr;
}

std::string ModExpression(Context& ctx, const onnx::NodeProto& node) {
  NeedInputs(ctx, node, 2, 2);
  const bool fmod = AttributeInt(node, "fmod", 0) != 0;
  if (!fmod && !ElemIsInteger(ctx.ElemType(node.input(0)))) {
    ctx.Fail(node, "fmod=0 is defined for integer inputs only; a floating-point Mod needs fmod=1");
  }
  // fmod=1: C's fmod (the dividend's sign); fmod=0: Python's % (the divisor's).
  return fmod ? "fmod(@0,@1)" : "remainder(@0,@1)";
}

std::string BitShiftExpression(Context& ctx, const onnx::NodeProto& node) {
  NeedInputs(ctx, node, 2, 2);
  const int elem = ctx.ElemType(node.input(0));
  if (!ElemIsUnsigned(elem)) ctx.Fail(node, "needs unsigned integer inputs");
  const std::string direction = AttributeString(node, "direction", "");
  // x << y wraps modulo 2^bits; x >> y drops the low bits. Both are exact
  // in float32 for every value float32 holds exactly (powers of two).
  if (direction == "LEFT") {
    return fmt::format("remainder(mul(@0,pow(2,@1)),{})",
                       ElemNumber(std::ldexp(1.0, ElemBits(elem))));
  }
  if (direction == "RIGHT") return "floor(div(@0,pow(2,@1)))";
  ctx.Fail(node, fmt::format("direction must be LEFT or RIGHT, is '{}'", direction));
}

std::string IsInfExpression(Context& ctx, const onnx::NodeProto& node) {
  NeedInputs(ctx, node, 1, 1);
  const bool positive = AttributeInt(node, "detect_positive", 1) != 0;
  const bool negative = AttributeInt(node, "detect_negative", 1) != 0;
  if (positive && negative) return fmt::format("gt(abs(@0),{})", ElemFloatMax());
  if (positive) return fmt::format("gt(@0,{})", ElemFloatMax());
  if (negative) return fmt::format("lt(@0,-{})", ElemFloatMax());
  return "ne(abs(@0),abs(@0))";  // detects nothing: false, except that NaN is no infinity
}

// The activations with parameters: PRelu, LeakyRelu, ThresholdedRelu, Elu,
// Celu, Selu, Shrink.
std::string ParametricActivationExpression(Context& ctx, const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  if (type == "PRelu") {
    NeedInputs(ctx, node, 2, 2);
    return "where(lt(@0,0),mul(@0,@1),@0)";
  }
  if (type == "LeakyRelu") {
    NeedInputs(ctx, node, 1, 1);
    return fmt::format("where(lt(@0,0),mul(@0,{}),@0)",
                       ElemNumber(FiniteAttribute(ctx, node, "alpha", 0.01f)));
  }
  if (type == "ThresholdedRelu") {
    NeedInputs(ctx, node, 1, 1);
    return fmt::format("where(gt(@0,{}),@0,0)",
                       ElemNumber(FiniteAttribute(ctx, node, "alpha", 1.f)));
  }
  if (type == "Elu") {
    NeedInputs(ctx, node, 1, 1);
    return fmt::format("where(gt(@0,0),@0,mul(sub(exp(@0),1),{}))",
                       ElemNumber(FiniteAttribute(ctx, node, "alpha", 1.f)));
  }
  if (type == "Celu") {
    NeedInputs(ctx, node, 1, 1);
    const float alpha = FiniteAttribute(ctx, node, "alpha", 1.f);
    if (alpha == 0) ctx.Fail(node, "alpha must not be 0");
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    return fmt::format("add(max(@0,0),min(mul(sub(exp(div(@0,{0})),1),{0}),0))", ElemNumber(alpha));
  }
  if (type == "Selu") {
    NeedInputs(ctx, node, 1, 1);
    // ONNX's defaults, the float32 values of the constants of Klambauer et al.
    const float alpha = FiniteAttribute(ctx, node, "alpha", 1.67326319217681884765625f);
    const float gamma = FiniteAttribute(ctx, node, "gamma", 1.05070102214813232421875f);
    return fmt::format("mul(where(gt(@0,0),@0,mul(sub(exp(@0),1),{})),{})", ElemNumber(alpha),
                       ElemNumber(gamma));
  }
  if (type == "Shrink") {
    NeedInputs(ctx, node, 1, 1);
    const float bias = FiniteAttribute(ctx, node, "bias", 0.f),
                lambd = FiniteAttribute(ctx, node, "lambd", 0.5f);
    return fmt::format("where(lt(@0,{}),add(@0,{}),where(gt(@0,{}),sub(@0,{}),0))",
                       ElemNumber(-lambd), ElemNumber(bias), ElemNumber(lambd), ElemNumber(bias));
  }
  ctx.Fail(node, "is not a parametric activation");
}

std::string CastExpression(Context& ctx, const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  NeedInputs(ctx, node, type == "Cast" ? 1 : 2, type == "Cast" ? 1 : 2);
  const int from = ctx.ElemType(node.input(0));
  int to = 0;
  if (type == "Cast") {
    const onnx::AttributeProto* a = FindAttribute(node, "to");
    if (!a) ctx.Fail(node, "attribute 'to' is missing");
    to = static_cast<int>(a->i());
  } else {
    to = ctx.ElemType(node.input(1));
  }
  for (const int t : {from, to}) {
    if (!ElemIsNumeric(t)) {
      const std::string name =
          onnx::TensorProto::DataType_IsValid(t)
              ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t))
              : std::to_string(t);
      ctx.Fail(node, fmt::format("Cast {} ONNX type {} is not supported: the engine holds float, "
                                 "double, integer and bool values only, as float32",
                                 t == from ? "from" : "to", name));
    }
  }
  if (to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE) return "@0";
  if (to == onnx::TensorProto::BOOL) return from == to ? "@0" : "ne(@0,0)";
  // To an integer: a float truncates toward zero, and an 8- or 16-bit
  // target keeps the low bits of the value (C's conversion of integers;
  // identity for a value in range). Wider targets: float32 holds every
  // value it can hold exactly already.
  std::string expr = ElemIsInteger(from) || from == onnx::TensorProto::BOOL ? "@0" : "trunc(@0)";
  const int bits = ElemBits(to);
  if (bits <= 16 && from != onnx::TensorProto::BOOL) {
    const std::string modulus = ElemNumber(std::ldexp(1.0, bits));
    if (ElemIsUnsigned(to)) {
      expr = fmt::format("remainder({},{})", expr, modulus);
    } else {
      const std::string half = ElemNumber(std::ldexp(1.0, bits - 1));
      expr = fmt::format("sub(remainder(add({},{}),{}),{})", expr, half, modulus, half);
    }
  }
  return expr;
}

int ElementwiseOutput(Context& ctx, const onnx::NodeProto& node, int output) {
  const std::string& name = node.output(output);
  const int elem = ctx.ElemType(name);
  if (!ElemIsNumeric(elem)) {
    ctx.Fail(node, fmt::format("output '{}' is of ONNX type {}; the engine holds float, double, "
                               "integer and bool values only",
                               name, elem));
  }
  const int operand = ctx.NewOperand(name, ctx.EngineShape(ctx.ShapeOf(node, name)));
  ctx.Alias(name, operand);
  return operand;
}

void EmitElementwise(Context& ctx, const onnx::NodeProto& node, const std::string& expr,
                     int arity = -1) {
  // Every input is an operand of the expression, also one it does not read
  // (CastLike's `like`, Dropout's runtime ratio): the engine refuses a graph
  // input that no operator reads.
  if (arity < 0) arity = node.input_size();
  const auto reads = [&](int k) {
    const std::string at = fmt::format("@{}", k);
    for (size_t p = expr.find(at); p != std::string::npos; p = expr.find(at, p + 1)) {
      const size_t end = p + at.size();
      if (end >= expr.size() || !std::isdigit(static_cast<unsigned char>(expr[end]))) return true;
    }
    return false;
  };
  // Items broadcast among themselves: in batch mode a computed operand must
  // have the output's rank, or NumPy would align its batch with another dim.
  const size_t rank = ctx.ShapeOf(node, node.output(0)).size();
  for (int k = 0; k < arity; ++k) {
    if (ctx.batch_mode() && reads(k) && !ctx.Constant(node.input(k)) &&
        ctx.ShapeOf(node, node.input(k)).size() != rank) {
      ctx.FailBatch(node, "broadcasts a computed operand of lower rank over the batch dimension");
    }
  }
  std::vector<int> inputs;
  for (int k = 0; k < arity; ++k) inputs.push_back(ctx.Input(node, k));
  pnnx::Operator& op =
      ctx.Emit("pnnx.Expression", ctx.NodeName(node), inputs, ElementwiseOutput(ctx, node, 0));
  op.params["expr"] = StringParam(expr);
}

// An element-wise node of a family: one output, the expression of its builder.
template <ExpressionBuilder Build>
void LowerAsExpression(Context& ctx, const onnx::NodeProto& node) {
  if (node.output_size() != 1) {
    ctx.Fail(node, fmt::format("needs 1 output, has {}", node.output_size()));
  }
  EmitElementwise(ctx, node, Build(ctx, node));
}

// The ONNX column of the table of unary functions (kuiper/unary_ops.def).
struct OnnxUnaryRow {
  const char* onnx_type;
  const char* form;
};

constexpr OnnxUnaryRow kOnnxUnaryRows[] = {
#define KUIPER_UNARY(onnx_type, pnnx_types, form) {onnx_type, form},
#include "kuiper/unary_ops.def"
#undef KUIPER_UNARY
};

// A function of one input, by its row of the table: the engine layer the row
// names, or the row's expression.
void LowerUnary(Context& ctx, const onnx::NodeProto& node) {
  const auto row =
      std::find_if(std::begin(kOnnxUnaryRows), std::end(kOnnxUnaryRows),
                   [&](const OnnxUnaryRow& r) { return node.op_type() == r.onnx_type; });
  const std::string form = row->form;
  if (IsUnaryLayerForm(form)) {
    ctx.EmitUnary(node, form);
    return;
  }
  if (node.output_size() != 1) {
    ctx.Fail(node, fmt::format("needs 1 output, has {}", node.output_size()));
  }
  NeedInputs(ctx, node, 1, 1);
  EmitElementwise(ctx, node, form);
}

bool RegisterUnaryLowerings() {
  for (const OnnxUnaryRow& row : kOnnxUnaryRows) {
    const std::string form = row.form;
    LoweringRegisterer({row.onnx_type}, LowerUnary,
                       IsUnaryLayerForm(form)
                           ? "any shape: the engine layer " + form
                           : "any shape and numeric type: the expression " + form);
  }
  return true;
}

// Dropout(x, ratio, training_mode) -> (y, mask). At inference (training_mode
// absent or false, and before opset 12 always) y = x and the mask is all
// true. Training with a ratio of 0 is the same; with any other ratio the
// result is random, which an inference engine does not reproduce.
void LowerDropout(Context& ctx, const onnx::NodeProto& node) {
  if (node.input_size() < 1 || node.input_size() > 3 || node.output_size() < 1 ||
      node.output_size() > 2) {
    ctx.Fail(node, fmt::format("needs 1 to 3 inputs and 1 or 2 outputs, has {} and {}",
                               node.input_size(), node.output_size()));
  }
  bool training = false;
  if (ctx.HasInput(node, 2)) {
    const onnx::TensorProto& mode = ctx.RequireConstant(node, 2);
    // A bool tensor keeps one byte per value in raw_data, else int32_data.
    std::vector<int> values;
    if (mode.has_raw_data()) {
      for (char c : mode.raw_data()) values.push_back(c != 0);
    } else {
      values.assign(mode.int32_data().begin(), mode.int32_data().end());
    }
    if (mode.data_type() != onnx::TensorProto::BOOL || values.size() != 1) {
      ctx.Fail(node, "training_mode must be one bool");
    }
    training = values[0] != 0;
  }
  if (training) {
    float ratio = 0.5f;
    if (ctx.HasInput(node, 1)) {
      const std::vector<float> r = OnnxTensorFloats(ctx.RequireConstant(node, 1));
      if (r.size() != 1) ctx.Fail(node, "ratio must be a scalar");
      ratio = r[0];
    }
    if (ratio != 0) {
      ctx.Fail(node, fmt::format("training_mode=true with ratio {} drops random elements; the "
                                 "engine runs inference only",
                                 ratio));
    }
  }
  const std::string& out = node.output(0);
  const bool graph_output = ctx.IsGraphOutput(out);
  const int input = ctx.Input(node, 0);
  // A ratio computed at run time (a graph input) is read by no one at
  // inference; the copy reads it, since the engine refuses an unread input.
  const bool runtime_ratio = ctx.HasInput(node, 1) && !ctx.Constant(node.input(1));
  if (!out.empty() && runtime_ratio) {
    EmitElementwise(ctx, node, "@0", /*arity=*/2);  // x and ratio; training_mode is a constant
  } else if (!out.empty()) {
    if (graph_output) {
      ctx.Emit("pnnx.Expression", ctx.NodeName(node), {input}, ElementwiseOutput(ctx, node, 0))
          .params["expr"] = StringParam("@0");
    } else {
      ctx.Alias(out, input);  // the same values under a second name
    }
  }
  if (node.output_size() == 2 && !node.output(1).empty() && ctx.IsUsed(node.output(1))) {
    // or(x, 1) is 1 of x's shape whatever x holds (NaN included).
    ctx.Emit("pnnx.Expression", ctx.NodeName(node) + "_mask", {input},
             ElementwiseOutput(ctx, node, 1))
        .params["expr"] = StringParam("or(@0,1)");
  }
}

// Add, Sub, Mul and Pow with NumPy broadcasting.
void LowerArithmetic(Context& ctx, const onnx::NodeProto& node) {
  static const std::map<std::string, std::string> binary = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Pow", "pow"}};  // Div: DivExpression
  if (node.input_size() != 2) {
    ctx.Fail(node, fmt::format("needs 2 input(s), has {}", node.input_size()));
  }
  // Items broadcast among themselves: in batch mode a computed operand must
  // have the output's rank, or NumPy would align its batch with another dim.
  const size_t rank = ctx.ShapeOf(node, node.output(0)).size();
  for (int k = 0; k < 2; ++k) {
    if (ctx.batch_mode() && !ctx.Constant(node.input(k)) &&
        ctx.ShapeOf(node, node.input(k)).size() != rank) {
      ctx.FailBatch(node, "broadcasts a computed operand of lower rank over the batch dimension");
    }
  }
  const std::vector<int> inputs = {ctx.Input(node, 0), ctx.Input(node, 1)};
  pnnx::Operator& op = ctx.Emit("pnnx.Expression", ctx.NodeName(node), inputs, ctx.Output(node));
  op.params["expr"] = StringParam(fmt::format("{}(@0,@1)", binary.at(node.op_type())));
}

// Identity of a constant was folded (FoldConstants: torch.onnx.export dedups
// equal initializers into Identity nodes, which then are weights, e.g. a Conv's
// bias). Identity of a computed value is the same operand under a second name,
// with no operator; only a graph output gets its own copy (pnnx.Output reads
// an operand of its own).
void LowerIdentity(Context& ctx, const onnx::NodeProto& node) {
  if (node.input_size() != 1 || node.output_size() != 1) {
    ctx.Fail(node, fmt::format("needs 1 input and 1 output, has {} and {}", node.input_size(),
                               node.output_size()));
  }
  const bool graph_output = ctx.IsGraphOutput(node.output(0));
  if (!graph_output) {
    ctx.Alias(node.output(0), ctx.Input(node, 0));
    return;
  }
  ctx.EmitUnary(node, "pnnx.Expression").params["expr"] = StringParam("@0");
}

}  // namespace

const bool kUnaryLoweringsRegistered = RegisterUnaryLowerings();
KUIPER_ONNX_LOWERING(LowerArithmetic, "any shapes that broadcast", "Add", "Sub", "Mul", "Pow");
KUIPER_ONNX_LOWERING(LowerAsExpression<DivExpression>,
                     "any shapes that broadcast; integers divide truncating", "Div");
KUIPER_ONNX_LOWERING(LowerAsExpression<ComparisonExpression>,
                     "any shapes that broadcast; the bool result as 0/1", "Equal", "Less",
                     "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor");
KUIPER_ONNX_LOWERING(LowerAsExpression<WhereExpression>, "any shapes that broadcast", "Where");
KUIPER_ONNX_LOWERING(LowerAsExpression<VariadicExpression>, "any number of inputs that broadcast",
                     "Sum", "Mean", "Max", "Min");
KUIPER_ONNX_LOWERING(LowerAsExpression<ModExpression>, "fmod=0 for integer inputs only", "Mod");
KUIPER_ONNX_LOWERING(LowerAsExpression<BitShiftExpression>, "unsigned integer inputs", "BitShift");
KUIPER_ONNX_LOWERING(LowerAsExpression<IsInfExpression>, "any shape", "IsInf");
KUIPER_ONNX_LOWERING(LowerAsExpression<ParametricActivationExpression>, "finite float attributes",
                     "PRelu", "LeakyRelu", "ThresholdedRelu", "Elu", "Celu", "Selu", "Shrink");
KUIPER_ONNX_LOWERING(LowerAsExpression<CastExpression>,
                     "float, double, integer and bool types (as float32)", "Cast", "CastLike");
KUIPER_ONNX_LOWERING(LowerIdentity, "1 input, 1 output", "Identity");
// training_mode, and the ratio that training mode reads: a ratio given by
// value is bound even at inference, where it is read by no one.
KUIPER_ONNX_LOWERING_CONSTANTS(LowerDropout, ConstantInputs({1, 2}),
                               "inference, or training with ratio 0", "Dropout");

}  // namespace kuiper::onnx_import
