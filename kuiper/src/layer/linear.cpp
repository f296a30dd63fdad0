// nn.Linear: y = x W^T + b on the last dimension, through lab course1's Axby.
#include <fmt/format.h>

#include "conv_pool_common.hpp"
#include "kuiper/axby.hpp"
#include "kuiper/error.hpp"

namespace kuiper {
namespace {

class LinearLayer : public Layer {
 public:
  // weight is row-major (out_features, in_features); bias has out_features values or none.
  LinearLayer(std::string name, uint32_t in_features, uint32_t out_features,
              const std::vector<float>& weight, const std::vector<float>& bias)
      : Layer(std::move(name)),
        // Read column-major, the row-major (out, in) weight is W^T: transpose it back.
        weight_(arma::fmat(weight.data(), in_features, out_features).t()),
        bias_(bias.empty() ? arma::fmat(out_features, 1, arma::fill::zeros)
                           : arma::fmat(bias.data(), out_features, 1)) {}

  // Items may be 1-D (in_features), 2-D (rows, in_features) or 3-D; the map
  // applies to the last dimension, as in PyTorch.
  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckOneOperand(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    for (size_t n = 0; n < inputs.size(); ++n) {
      const ftensor& input = *inputs[n];
      if (input.cols() != weight_.n_cols) return InferStatus::kInferFailedShapeError;
      std::vector<uint32_t> shape = input.raw_shapes();
      shape.back() = weight_.n_rows;
      EnsureOutput(outputs[n], shape);
      for (uint32_t c = 0; c < input.channels(); ++c) {
        // A channel is (rows x in_features): its transpose has one item per column.
        arma::fmat y;
        Axby(input.slice(c).t(), weight_, bias_, y);
        outputs[n]->slice(c) = y.t();
      }
    }
    return InferStatus::kInferSuccess;
  }

 private:
  arma::fmat weight_;  // (out_features x in_features)
  arma::fmat bias_;    // (out_features x 1)
};

std::unique_ptr<Layer> CreateLinear(const RuntimeOperator& op) {
  const int in_features = op.param<int>("in_features");
  const int out_features = op.param<int>("out_features");
  if (in_features <= 0 || out_features <= 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): in_features={} and out_features={} must be "
                    "positive",
                    op.name, op.type, in_features, out_features));
  }
  const RuntimeAttribute& weight = op.attr("weight");
  if (weight.shape != std::vector<int>{out_features, in_features}) {
    throw LayerError(fmt::format("operator '{}' ({}): weight has shape {}, expected ({},{})",
                                 op.name, op.type, ShapeText(weight.shape), out_features,
                                 in_features));
  }
  std::vector<float> bias;
  if (op.param<bool>("bias")) {
    const RuntimeAttribute& bias_attr = op.attr("bias");
    if (bias_attr.shape != std::vector<int>{out_features}) {
      throw LayerError(fmt::format("operator '{}' ({}): bias has shape {}, expected ({})", op.name,
                                   op.type, ShapeText(bias_attr.shape), out_features));
    }
    bias = bias_attr.ToFloat();
  }
  return std::make_unique<LinearLayer>(op.name, in_features, out_features, weight.ToFloat(), bias);
}

const LayerRegistererWrapper kLinearRegistration({"nn.Linear"}, CreateLinear);

}  // namespace
}  // namespace kuiper
