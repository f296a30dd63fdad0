// models.yolo.Detect, the YOLOv5 head (formula in models/yolov5s.py, class
// Detect). For each level i with input (C_i, H_i, W_i):
//   p = sigmoid(conv_i(x))                     1x1 conv: na * (nc + 5) channels
//   for anchor a, cell (y, x), value k of s = p[a * no + k, y, x]:
//     k = 0, 1: (s * 2 - 0.5 + x or y) * stride_i    box centre in input pixels
//     k = 2, 3: (s * 2)^2 * anchor_i[a][0 or 1]       box width, height
//     k >= 4:   s                                     objectness, class scores
// Rows are ordered level, anchor, y, x: each item becomes (sum na*H_i*W_i, no).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kuiper/layer.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/layers/sigmoid.hpp"

namespace kuiper {
namespace {

struct DetectLevel {
  arma::fmat weight_t;  // (C_i, na * no): the 1x1 conv's weight, transposed
  arma::frowvec bias;   // (na * no)
  float stride = 0;
  std::vector<float> anchors;  // na pairs (w, h) in pixels
};

class DetectLayer : public Layer {
 public:
  DetectLayer(uint32_t classes, uint32_t anchors, std::vector<DetectLevel> levels)
      : Layer("Detect"), no_(classes + 5), na_(anchors), levels_(std::move(levels)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
    if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
    const size_t levels = levels_.size();
    if (inputs.size() % levels != 0) return InferStatus::kInferFailedBatchMatchError;
    const size_t batch = inputs.size() / levels;
    if (batch != outputs.size()) return InferStatus::kInferFailedInputOutSizeMatchError;
    uint32_t rows = 0;
    for (size_t l = 0; l < levels; ++l) {
      for (size_t i = 0; i < batch; ++i) {
        const sftensor& x = inputs[l * batch + i];
        if (!x || x->empty()) return InferStatus::kInferFailedInputEmpty;
        if (x->raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
        if (x->channels() != levels_[l].weight_t.n_rows) {
          return InferStatus::kInferFailedChannelParameterError;
        }
        // Every item of a level must have the first item's size.
        if (x->shapes() != inputs[l * batch]->shapes()) return InferStatus::kInferFailedShapeError;
      }
      rows += na_ * inputs[l * batch]->rows() * inputs[l * batch]->cols();
    }
    for (size_t i = 0; i < batch; ++i) EnsureOutput(outputs[i], {rows, no_});

    const auto decode_item = [&](size_t i) {
      arma::fmat& out = outputs[i]->slice(0);
      uint32_t row = 0;
      for (size_t l = 0; l < levels; ++l)
        row = Decode(*inputs[l * batch + i], levels_[l], row, out);
    };
    // One item parallelises inside Decode; several run one per thread.
    if (batch == 1) {
      decode_item(0);
      return InferStatus::kInferSuccess;
    }
#pragma omp parallel for
    for (int i = 0; i < static_cast<int>(batch); ++i) decode_item(i);
    return InferStatus::kInferSuccess;
  }

 private:
  // Writes the rows of one level, from `row` on, and returns the next free row.
  uint32_t Decode(const ftensor& x, const DetectLevel& level, uint32_t row, arma::fmat& out) const {
    const uint32_t h = x.rows(), w = x.cols();
    // A 1x1 conv is one GEMM. Each channel (an H x W column-major slice) is a
    // column of `cells`, so cell (y, x) is row y + x * h of the result.
    // `cells` views the input's memory without copying; it is const and only read.
    const arma::fmat cells(const_cast<float*>(x.raw_ptr()), h * w, x.channels(),
                           /*copy_aux_mem=*/false, /*strict=*/true);
    arma::fmat p(h * w, na_ * no_, arma::fill::none);  // MultiplyInto writes every element
    MultiplyInto(cells, level.weight_t, p.memptr());
    // One (anchor, value) pair at a time: column a * no + k of p holds it for
    // every cell, and column k of the output for every row of the anchor, so
    // both are walked in memory order. The pairs are independent: a single
    // item shares them out among the threads.
    const int pairs = static_cast<int>(na_ * no_);
#pragma omp parallel for schedule(static)
    for (int pair = 0; pair < pairs; ++pair) {
      const uint32_t a = pair / no_, k = pair % no_;
      const float anchor = level.anchors[2 * a + (k == 3 ? 1 : 0)];
      const float bias = level.bias(pair);
      const float* logits = p.colptr(pair);
      float* column = out.colptr(k) + row + a * h * w;  // rows ordered y, x
      for (uint32_t cx = 0; cx < w; ++cx) {
        for (uint32_t cy = 0; cy < h; ++cy) {
          const float s = Sigmoid(logits[cy + cx * h] + bias);  // lab course5_layers
          float value = s;
          if (k == 0) value = (s * 2.f - 0.5f + static_cast<float>(cx)) * level.stride;
          if (k == 1) value = (s * 2.f - 0.5f + static_cast<float>(cy)) * level.stride;
          if (k == 2 || k == 3) value = (s * 2.f) * (s * 2.f) * anchor;
          column[cy * w + cx] = value;
        }
      }
    }
    row += na_ * h * w;
    return row;
  }

  uint32_t no_;
  uint32_t na_;
  std::vector<DetectLevel> levels_;
};

std::unique_ptr<Layer> CreateDetect(const RuntimeOperator& op) {
  const auto fail = [&](const std::string& why) {
    return LayerError(fmt::format("operator '{}' ({}): {}", op.name, op.type, why));
  };
  const int nc = op.param<int>("nc");
  const int na = op.param<int>("na");
  if (nc <= 0 || na <= 0) throw fail(fmt::format("nc={} and na={} must be positive", nc, na));
  const uint32_t no = nc + 5;
  const RuntimeAttribute& strides = op.attr("strides");
  if (strides.shape.size() != 1 || strides.shape[0] <= 0) {
    throw fail(
        fmt::format("strides has shape ({}), expected (levels)", fmt::join(strides.shape, ",")));
  }
  const int levels = strides.shape[0];
  const RuntimeAttribute& anchors = op.attr("anchors");
  if (anchors.shape != std::vector<int>{levels, na, 2}) {
    throw fail(fmt::format("anchors has shape ({}), expected ({},{},2)",
                           fmt::join(anchors.shape, ","), levels, na));
  }
  // The reader checks data against shape for files; operators built in code
  // may still disagree, and a short buffer must not be read past its end.
  const auto values = [&](const RuntimeAttribute& attr, const std::string& key, size_t count) {
    std::vector<float> v = attr.ToFloat();
    if (v.size() != count) {
      throw fail(fmt::format("{} holds {} values, its shape needs {}", key, v.size(), count));
    }
    return v;
  };
  const std::vector<float> stride_values = values(strides, "strides", levels);
  const std::vector<float> anchor_values = values(anchors, "anchors", levels * na * 2);
  std::vector<DetectLevel> detect_levels;
  for (int l = 0; l < levels; ++l) {
    const RuntimeAttribute& weight = op.attr(fmt::format("m.{}.weight", l));
    const RuntimeAttribute& bias = op.attr(fmt::format("m.{}.bias", l));
    const int outputs = na * static_cast<int>(no);
    if (weight.shape.size() != 4 || weight.shape[0] != outputs || weight.shape[1] <= 0 ||
        weight.shape[2] != 1 || weight.shape[3] != 1) {
      throw fail(fmt::format("m.{}.weight has shape ({}), expected ({},C,1,1)", l,
                             fmt::join(weight.shape, ","), outputs));
    }
    if (bias.shape != std::vector<int>{outputs}) {
      throw fail(fmt::format("m.{}.bias has shape ({}), expected ({})", l,
                             fmt::join(bias.shape, ","), outputs));
    }
    DetectLevel level;
    // The weight is row-major (outputs, C): read column-major, the same
    // numbers are its transpose (C, outputs), the right operand of the GEMM.
    const std::vector<float> w =
        values(weight, fmt::format("m.{}.weight", l), size_t(outputs) * weight.shape[1]);
    level.weight_t = arma::fmat(w.data(), weight.shape[1], outputs);
    const std::vector<float> b = values(bias, fmt::format("m.{}.bias", l), outputs);
    level.bias = arma::frowvec(b);
    level.stride = stride_values[l];
    level.anchors.assign(anchor_values.begin() + l * na * 2,
                         anchor_values.begin() + (l + 1) * na * 2);
    detect_levels.push_back(std::move(level));
  }
  return std::make_unique<DetectLayer>(nc, na, std::move(detect_levels));
}

LayerRegistererWrapper kDetectRegistration({"models.yolo.Detect"}, CreateDetect);

}  // namespace
}  // namespace kuiper
