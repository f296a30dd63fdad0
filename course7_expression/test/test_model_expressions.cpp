// course7_expression: every pnnx.Expression of the ResNet18 and YOLOv5s
// fixtures (and of YOLOv5's Detect head as PNNX exports it) parses and runs through the lab's code,
// as the engine runs it (ExpressionLayer: ParseCall, ReversePolish, EvaluateReversePolish). The
// reference is a scalar evaluator written here that reads the call text
// itself, one element at a time.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kuiper/expression.hpp"
#include "kuiper/layers/expression.hpp"

namespace kuiper {
namespace {

struct ModelExpression {
  std::string line;  // as in the file, for the failure message
  std::string expr;
  int inputs = 0;
};

// Every pnnx.Expression line of a .pnnx.param: "type name #in #out ... expr=...".
std::vector<ModelExpression> ExpressionsOf(const std::string& model) {
  std::ifstream file(std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/" + model + ".pnnx.param");
  std::vector<ModelExpression> found;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string type, name, item;
    ModelExpression e{line, "", 0};
    fields >> type >> name >> e.inputs;
    if (type != "pnnx.Expression") continue;
    while (fields >> item) {
      if (item.rfind("expr=", 0) == 0) e.expr = item.substr(5);
    }
    found.push_back(e);
  }
  return found;
}

// The reference: evaluates the call text at `at` for one element, x[n] being
// the element of operand @n.
float ScalarOf(const std::string& s, size_t& at, const std::vector<float>& x) {
  if (s[at] == '@') {
    size_t digits = 0;
    const int n = std::stoi(s.substr(at + 1), &digits);
    at += 1 + digits;
    return x.at(n);
  }
  if (std::isdigit(static_cast<unsigned char>(s[at])) || s[at] == '-' || s[at] == '.') {
    size_t length = 0;
    const float value = std::stof(s.substr(at), &length);
    at += length;
    return value;
  }
  const size_t open = s.find('(', at);
  const std::string name = s.substr(at, open - at);
  at = open + 1;
  std::vector<float> a;
  do {
    a.push_back(ScalarOf(s, at, x));
  } while (s[at++] == ',');  // steps over ',' and, last, ')'
  if (name == "add") return a.at(0) + a.at(1);
  if (name == "sub") return a.at(0) - a.at(1);
  if (name == "mul") return a.at(0) * a.at(1);
  if (name == "div") return a.at(0) / a.at(1);
  if (name == "pow") return std::pow(a.at(0), a.at(1));
  if (name == "sin") return std::sin(a.at(0));
  ADD_FAILURE() << "the reference does not know '" << name << "'";
  return NAN;
}

void ExpectModelExpressionsRun(const std::string& model, size_t at_least) {
  const std::vector<ModelExpression> expressions = ExpressionsOf(model);
  ASSERT_GE(expressions.size(), at_least) << model << ": fixture not found or changed";
  const size_t batch = 2;
  for (const ModelExpression& e : expressions) {
    ExpressionLayer layer(e.expr, e.inputs);
    // inputs: operand after operand, each a batch of items of shape (2,3,4).
    std::vector<sftensor> inputs;
    for (int k = 0; k < e.inputs; ++k) {
      for (size_t i = 0; i < batch; ++i) {
        sftensor t = TensorCreate({2, 3, 4});
        for (uint32_t j = 0; j < t->size(); ++j) {
          t->index(j) = 0.25f * static_cast<float>((j * 7 + k * 5 + i * 3) % 17) - 2.f;
        }
        inputs.push_back(t);
      }
    }
    std::vector<sftensor> outputs(batch);
    ASSERT_EQ(layer.Forward(inputs, outputs), InferStatus::kInferSuccess) << e.line;
    for (size_t i = 0; i < batch; ++i) {
      ASSERT_EQ(outputs[i]->raw_shapes(), std::vector<uint32_t>({2, 3, 4})) << e.line;
      for (uint32_t j = 0; j < outputs[i]->size(); ++j) {
        std::vector<float> x;
        for (int k = 0; k < e.inputs; ++k) x.push_back(inputs[k * batch + i]->index(j));
        size_t read_to = 0;
        const float want = ScalarOf(e.expr, read_to, x);
        EXPECT_NEAR(outputs[i]->index(j), want, 1e-5f * std::max(1.f, std::fabs(want)))
            << e.expr << ", item " << i << ", element " << j;
      }
    }
  }
}

TEST(ModelExpressions, EveryResNet18ExpressionMatchesTheScalarReference) {
  ExpectModelExpressionsRun("resnet18", 8);
}

TEST(ModelExpressions, EveryYolov5sExpressionMatchesTheScalarReference) {
  ExpectModelExpressionsRun("yolov5s", 7);
}

// YOLOv5's Detect head as PNNX exports it: mul(pow(mul(@0,2),2),@1) and
// mul(add(sub(mul(@0,2),0.5),@1),8.0) (the engine's own yolov5s runs the
// head as one layer instead).
TEST(ModelExpressions, EveryYolov5DetectHeadExpressionMatchesTheScalarReference) {
  ExpectModelExpressionsRun("tiny_detect_realpnnx", 6);
}

}  // namespace
}  // namespace kuiper
