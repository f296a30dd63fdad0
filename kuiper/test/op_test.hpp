// One harness for operator tests (as ncnn's test_layer and ONNX Runtime's
// OpTester): TestOperator builds a graph of one operator (pnnx.Input ->
// the operator -> pnnx.Output, with the shapes of the given inputs and of the
// reference's outputs declared, the batch `?`), runs it in every mode that
// applies and checks every output item against a reference computed
// independently (a naive loop, or values worked out by hand):
// - the convolution routes (nn.Conv2d only): every route allowed (the
//   engine's choice), im2col only, Winograd only and the direct route only
//   (RuntimeOptions; a shape a route does not fit takes im2col);
// - activation buffers planned and owned (RuntimeOptions::buffer_planning);
// - no activation after it, and a ReLU (or SiLU) after it, fused into it
//   (RuntimeOptions::fuse_activations, where the layer can) and run by its
//   own operator; the reference is then the activation of the reference;
// - batches of 1 and of 3 items.
// It returns what it saw, so a test can say which routes and fusions its
// shapes reach. The graph runs through course3's loader: the harness serves
// the layer tests (kuiper/test/layers), which link every lab.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/pnnx.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper::test {

// The expected outputs (one tensor per output operand) of one batch item,
// given its inputs (one tensor per input operand).
using OpReference = std::function<std::vector<sftensor>(const std::vector<sftensor>& item)>;

// What TestOperator ran.
struct OpTestReport {
  std::set<ConvRoute> routes;  // routes the operator's convolution took, if it is one
  bool fused = false;          // whether the activation after it was ever fused into it
  int runs = 0;                // graphs built and run
};

// `n` tensors of `shape` with values uniform in [lo, hi) from `seed`,
// `seed` + 1, ...: a batch for TestOperator's `inputs`.
inline std::vector<sftensor> SeededItems(const std::vector<uint32_t>& shape, uint32_t seed,
                                         size_t n = 3, float lo = -1, float hi = 1) {
  std::vector<sftensor> items;
  for (size_t i = 0; i < n; ++i) {
    sftensor t = TensorCreate(shape);
    std::mt19937 engine(seed + static_cast<uint32_t>(i));
    std::uniform_real_distribution<float> uniform(lo, hi);
    std::vector<float> values(t->size());
    for (float& v : values) v = uniform(engine);
    t->Fill(values, /*row_major=*/true);
    items.push_back(t);
  }
  return items;
}

// A RuntimeParameter as PNNX's reader gives it.
inline pnnx::Parameter ToPnnxParameter(const RuntimeParameter& value) {
  pnnx::Parameter p;
  std::visit(
      [&p](const auto& v) {
        using Value = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<Value, bool>) {
          p.type = pnnx::ParameterType::kBool, p.b = v;
        } else if constexpr (std::is_same_v<Value, int>) {
          p.type = pnnx::ParameterType::kInt, p.i = v;
        } else if constexpr (std::is_same_v<Value, float>) {
          p.type = pnnx::ParameterType::kFloat, p.f = v;
        } else if constexpr (std::is_same_v<Value, std::string>) {
          p.type = pnnx::ParameterType::kString, p.s = v;
        } else if constexpr (std::is_same_v<Value, std::vector<int>>) {
          p.type = pnnx::ParameterType::kIntArray, p.ai = v;
        } else if constexpr (std::is_same_v<Value, std::vector<float>>) {
          p.type = pnnx::ParameterType::kFloatArray, p.af = v;
        } else if constexpr (std::is_same_v<Value, std::vector<std::string>>) {
          p.type = pnnx::ParameterType::kStringArray, p.as = v;
        }
      },
      value);
  return p;
}

// The graph pnnx.Input(s) -> `type` (named "op_under_test") [-> nn.ReLU or
// nn.SiLU "activation", as `after` says] -> pnnx.Output(s). Every operand is f32 with its shape
// declared, the batch `?`.
inline pnnx::Graph OneOperatorGraph(const std::string& type,
                                    const std::map<std::string, RuntimeParameter>& params,
                                    const std::map<std::string, RuntimeAttribute>& attrs,
                                    const std::vector<std::vector<uint32_t>>& input_shapes,
                                    const std::vector<std::vector<uint32_t>>& output_shapes,
                                    Activation after = Activation::kNone) {
  pnnx::Graph graph;
  const auto add_operand = [&graph](const std::string& name, const std::vector<uint32_t>& item) {
    pnnx::Operand operand;
    operand.name = name;
    operand.type = pnnx::DataType::kF32;
    operand.shape = {-1};
    for (uint32_t d : item) operand.shape.push_back(static_cast<int>(d));
    graph.operands.push_back(operand);
    return static_cast<int>(graph.operands.size()) - 1;
  };
  const auto add_operator = [&graph](const std::string& op_type, const std::string& name,
                                     std::vector<int> inputs, std::vector<int> outputs) {
    pnnx::Operator op;
    op.type = op_type;
    op.name = name;
    op.inputs = std::move(inputs);
    op.outputs = std::move(outputs);
    op.input_names.assign(op.inputs.size(), "");
    graph.operators.push_back(std::move(op));
    return &graph.operators.back();
  };
  std::vector<int> inputs, outputs;
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    inputs.push_back(add_operand("in" + std::to_string(i), input_shapes[i]));
    add_operator("pnnx.Input", "input" + std::to_string(i), {}, {inputs.back()});
  }
  for (size_t i = 0; i < output_shapes.size(); ++i) {
    outputs.push_back(add_operand("out" + std::to_string(i), output_shapes[i]));
  }
  pnnx::Operator* op = add_operator(type, "op_under_test", inputs, outputs);
  for (const auto& [key, value] : params) op->params[key] = ToPnnxParameter(value);
  op->attrs = attrs;
  if (after != Activation::kNone) {
    const int activated = add_operand("activated", output_shapes.at(0));
    add_operator(after == Activation::kRelu ? "nn.ReLU" : "nn.SiLU", "activation", {outputs.at(0)},
                 {activated});
    outputs = {activated};
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    add_operator("pnnx.Output", "output" + std::to_string(i), {outputs[i]}, {});
  }
  return graph;
}

// The route options TestOperator tries for an operator of `type`: every
// route allowed, then each route alone (im2col always being allowed).
inline std::vector<std::pair<std::string, RuntimeOptions>> RouteOptions(const std::string& type) {
  RuntimeOptions all, im2col, winograd, winograd_f4, direct;
  im2col.winograd_conv = im2col.direct_conv = false;
  winograd.direct_conv = winograd_f4.direct_conv = false;
  winograd_f4.winograd_f4 = true;
  direct.winograd_conv = false;
  if (type != "nn.Conv2d") return {{"default routes", all}};
  return {{"default routes", all},
          {"im2col only", im2col},
          {"winograd only", winograd},
          {"winograd F(4x4, 3x3) only", winograd_f4},
          {"direct only", direct}};
}

// `x` through `activation`, in double: ReLU max(x, 0), SiLU x / (1 + e^-x).
inline float Activated(float x, Activation activation) {
  if (activation == Activation::kSilu) return static_cast<float>(x / (1 + std::exp(-double{x})));
  return activation == Activation::kRelu ? std::max(x, 0.f) : x;
}

// Expects got[o][n] (output operand o, item n of `batch`) within `tolerance`
// of `activation` applied to expected[n][o]; `mode` says what ran.
inline void ExpectOutputsNear(const std::string& mode,
                              const std::vector<std::vector<sftensor>>& got,
                              const std::vector<std::vector<sftensor>>& expected, size_t batch,
                              Activation activation, float tolerance) {
  const size_t outputs = expected.at(0).size();
  if (got.size() != outputs) {
    ADD_FAILURE() << mode << ": " << got.size() << " outputs, expected " << outputs;
    return;
  }
  for (size_t o = 0; o < outputs; ++o) {
    for (size_t n = 0; n < batch; ++n) {
      const sftensor& want = expected[n][o];
      const sftensor& item = got[o].at(n);
      if (item->raw_shapes() != want->raw_shapes()) {
        ADD_FAILURE() << mode << ", output " << o << ", item " << n << ": shape "
                      << ShapeText(item->raw_shapes()) << ", expected "
                      << ShapeText(want->raw_shapes());
        continue;
      }
      const std::vector<float> g = item->values(true), w = want->values(true);
      float worst = 0;
      size_t worst_index = 0;
      for (size_t i = 0; i < w.size(); ++i) {
        float diff = std::abs(g[i] - Activated(w[i], activation));
        if (std::isnan(diff)) diff = INFINITY;  // NaN counts as the worst
        if (diff > worst) worst = diff, worst_index = i;
      }
      EXPECT_LE(worst, tolerance) << mode << ", output " << o << ", item " << n
                                  << ": largest difference at row-major index " << worst_index;
    }
  }
}

// What TestOperator may need besides the operator.
struct OpTestExtra {
  size_t outputs = 1;                         // the operator's output operands
  Activation activation = Activation::kRelu;  // the one put after it (one output only)
};

// Runs operator `type` with `params` and `attrs` on `inputs` (inputs[i]: the
// items of input operand i, at least 3, all of one shape) in every mode above
// and expects every output item within `tolerance` (absolute) of
// `reference` of its inputs.
inline OpTestReport TestOperator(const std::string& type,
                                 const std::map<std::string, RuntimeParameter>& params,
                                 const std::map<std::string, RuntimeAttribute>& attrs,
                                 const std::vector<std::vector<sftensor>>& inputs,
                                 const OpReference& reference, float tolerance,
                                 const OpTestExtra& extra = {}) {
  const size_t outputs = extra.outputs;
  OpTestReport report;
  const auto item_inputs = [&inputs](size_t n) {
    std::vector<sftensor> item;
    for (const auto& operand : inputs) item.push_back(operand.at(n));
    return item;
  };
  std::vector<std::vector<sftensor>> expected;  // [item][output operand]
  for (size_t n = 0; n < 3; ++n) {
    expected.push_back(reference(item_inputs(n)));
    if (expected.back().size() != outputs) {
      ADD_FAILURE() << type << ": the reference gives " << expected.back().size()
                    << " outputs, expected " << outputs;
      return report;
    }
  }
  std::vector<std::vector<uint32_t>> input_shapes, output_shapes;
  for (const auto& operand : inputs) input_shapes.push_back(operand.at(0)->raw_shapes());
  for (const sftensor& out : expected[0]) output_shapes.push_back(out->raw_shapes());
  enum class After { kNothing, kFused, kUnfused };
  for (const auto& [route_name, route_options] : RouteOptions(type)) {
    for (const bool planned : {true, false}) {
      for (const After after : {After::kNothing, After::kFused, After::kUnfused}) {
        const bool activated = after != After::kNothing;
        if (activated && outputs != 1) continue;  // an activation reads one operand
        RuntimeOptions options = route_options;
        options.buffer_planning = planned;
        options.fuse_activations = after == After::kFused;
        RuntimeGraph graph(OneOperatorGraph(type, params, attrs, input_shapes, output_shapes,
                                            activated ? extra.activation : Activation::kNone),
                           type);
        graph.Build(options);
        const RuntimeOperator* op = graph.FindOperator("op_under_test");
        if (const auto* conv = dynamic_cast<const ConvolutionLayer*>(op->layer.get())) {
          report.routes.insert(conv->route());
        }
        for (const size_t batch : {size_t{1}, size_t{3}}) {
          const std::string mode = fmt::format(
              "{} ({}, {}, {}, batch {})", type, route_name, planned ? "planned" : "owned",
              after == After::kNothing ? "no activation after it"
              : after == After::kFused ? "an activation after it, fusion on"
                                       : "an activation after it, fusion off",
              batch);
          std::vector<std::vector<sftensor>> batches;
          for (const auto& operand : inputs)
            batches.emplace_back(operand.begin(), operand.begin() + batch);
          std::vector<std::vector<sftensor>> got;
          try {
            got = graph.Forward(batches);
          } catch (const std::exception& e) {
            ADD_FAILURE() << mode << ": " << e.what();
            continue;
          }
          ++report.runs;
          if (activated && graph.FindOperator("activation")->output_operand->datas.at(0) ==
                               op->output_operand->datas.at(0)) {
            report.fused = true;
          }
          ExpectOutputsNear(mode, got, expected, batch,
                            activated ? extra.activation : Activation::kNone, tolerance);
        }
      }
    }
  }
  return report;
}

// TestOperator for an operator of one input and one output that applies
// `formula` to each element: 3 items of `shape` with values uniform in [lo, hi).
inline OpTestReport TestElementwise(const std::string& type,
                                    const std::map<std::string, RuntimeParameter>& params,
                                    const std::vector<uint32_t>& shape,
                                    const std::function<float(float)>& formula, float tolerance,
                                    float lo = -1, float hi = 1) {
  const auto reference = [&](const std::vector<sftensor>& item) {
    std::vector<float> values = item.at(0)->values(/*row_major=*/true);
    for (float& v : values) v = formula(v);
    sftensor out = TensorCreate(item.at(0)->raw_shapes());
    out->Fill(values, /*row_major=*/true);
    return std::vector<sftensor>{out};
  };
  return TestOperator(type, params, {}, {SeededItems(shape, 1, 3, lo, hi)}, reference, tolerance);
}

}  // namespace kuiper::test
