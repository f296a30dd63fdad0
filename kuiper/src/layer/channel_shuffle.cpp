// nn.ChannelShuffle (and F.channel_shuffle), as the real pnnx writes
// ShuffleNet's channel shuffle: x.view(N, g, C / g, H, W).transpose(1, 2)
// .reshape(N, C, H, W). Output channel o = k * g + i comes from input channel
// i * (C / g) + k: the g groups are interleaved, one channel of each in turn.
#include <fmt/format.h>

#include <cstring>

#include "conv_pool_common.hpp"
#include "kuiper/error.hpp"

namespace kuiper {
namespace {

class ChannelShuffleLayer : public Layer {
 public:
  explicit ChannelShuffleLayer(uint32_t groups) : Layer("ChannelShuffle"), groups_(groups) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckOneOperand(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    for (size_t n = 0; n < inputs.size(); ++n) {
      const ftensor& input = *inputs[n];
      // Needs the (C, H, W) layout: channels are what it permutes.
      if (input.raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
      const uint32_t channels = input.channels();
      if (channels % groups_ != 0) return InferStatus::kInferFailedChannelParameterError;
      EnsureOutput(outputs[n], {channels, input.rows(), input.cols()});
      ftensor& output = *outputs[n];
      const uint32_t per_group = channels / groups_;
      const size_t plane = size_t(input.rows()) * input.cols();
      for (uint32_t o = 0; o < channels; ++o) {
        const uint32_t from = (o % groups_) * per_group + o / groups_;
        std::memcpy(output.slice(o).memptr(), input.slice(from).memptr(), plane * sizeof(float));
      }
    }
    return InferStatus::kInferSuccess;
  }

 private:
  uint32_t groups_;
};

std::unique_ptr<Layer> CreateChannelShuffle(const RuntimeOperator& op) {
  const int groups = op.param<int>("groups");
  if (groups <= 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): groups={} must be positive", op.name, op.type, groups));
  }
  return std::make_unique<ChannelShuffleLayer>(static_cast<uint32_t>(groups));
}

LayerRegistererWrapper kChannelShuffleRegistration({"nn.ChannelShuffle", "F.channel_shuffle"},
                                                   CreateChannelShuffle);

}  // namespace
}  // namespace kuiper
