// models.yolo.Detect, the YOLOv5 head (formula in models/yolov5s.py, class
// Detect). For each level i with input (C_i, H_i, W_i):
//   p = sigmoid(conv_i(x))                     1x1 conv: na * (nc + 5) channels
//   for anchor a, cell (y, x), value k of s = p[a * no + k, y, x]:
//     k = 0, 1: (s * 2 - 0.5 + x or y) * stride_i    box centre in input pixels
//     k = 2, 3: (s * 2)^2 * anchor_i[a][0 or 1]       box width, height
//     k >= 4:   s                                     objectness, class scores
// Rows are ordered level, anchor, y, x: each item becomes (sum na*H_i*W_i, no).
//
// Two forms of the operator are read. Ours (tools/pnnx_export.py): params nc,
// na; attributes anchors (levels, na, 2), strides (levels), m.{i}.weight,
// m.{i}.bias. The real pnnx converting OUR Detect with moduleop writes the same
// attributes without the params (nc and na then come from the shapes). The
// real pnnx's form of Ultralytics' Detect, converting with
// moduleop=models.yolo.Detect: no params, the same m.{i}.weight/bias, and the
// constants Ultralytics' Detect
// computes in forward captured as numbered attributes, pnnx_00..pnnx_06 (older
// pnnx: pnnx_0..pnnx_6), whose order differs between versions. They are
// recognised by content instead: the strides (levels values), and per level
// a grid and an anchor grid of shape (1, na, H_i, W_i, 2), the grid holding
// each cell's (x, y) minus 0.5 (or without it, before Ultralytics v6.1),
// the anchor grid each anchor's (w, h) in pixels in every cell.
#include <fmt/format.h>

#include <functional>
#include <map>

#include "kuiper/layer.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/layers/sigmoid.hpp"
#include "kuiper/parallel.hpp"

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
    ParallelForEach(static_cast<int64_t>(batch), decode_item);
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
    // every cell, and column k of the output for every row of the anchor.
    // The pairs are independent: a single item shares them out among the
    // threads.
    const int pairs = static_cast<int>(na_ * no_);
    ParallelFor(pairs, [&](int64_t pair) {
      const uint32_t a = pair / no_, k = pair % no_;
      const float bias = level.bias(pair);
      const float* logits = p.colptr(pair);
      float* column = out.colptr(k) + row + a * h * w;  // rows ordered y, x
      // The logits plus the bias, in the output's order, then their sigmoids
      // in place: one call of lab course5_layers's Sigmoid per column, a loop
      // the compiler vectorises, where a call per value could not be.
      for (uint32_t cy = 0; cy < h; ++cy) {
        for (uint32_t cx = 0; cx < w; ++cx) column[cy * w + cx] = logits[cy + cx * h] + bias;
      }
      Sigmoid(column, column, size_t{h} * w);
      if (k >= 4) return;  // objectness and class scores are the sigmoids themselves
      const float anchor = level.anchors[2 * a + (k == 3 ? 1 : 0)];
      for (uint32_t cy = 0; cy < h; ++cy) {
        for (uint32_t cx = 0; cx < w; ++cx) {
          float& v = column[cy * w + cx];
          if (k == 0) v = (v * 2.f - 0.5f + static_cast<float>(cx)) * level.stride;
          if (k == 1) v = (v * 2.f - 0.5f + static_cast<float>(cy)) * level.stride;
          if (k == 2 || k == 3) v = (v * 2.f) * (v * 2.f) * anchor;
        }
      }
    });
    row += na_ * h * w;
    return row;
  }

  uint32_t no_;
  uint32_t na_;
  std::vector<DetectLevel> levels_;
};

// The moduleop form's numbered constants (see the top of this file), sorted
// into strides, anchors (levels, na, 2) and the level sizes, all checked.
struct ModuleOpConstants {
  std::vector<float> strides;
  std::vector<float> anchors;  // levels * na pairs (w, h)
  int na = 0;
};

ModuleOpConstants ReadModuleOpConstants(const RuntimeOperator& op, int levels) {
  const auto fail = [&](const std::string& why) {
    return LayerError(fmt::format("operator '{}' ({}): {}", op.name, op.type, why));
  };
  ModuleOpConstants out;
  // Grids and anchor grids by their (H, W); a level's pair shares it.
  std::map<std::pair<int, int>, std::vector<float>, std::greater<>> anchor_grids;
  int grids = 0;
  for (const auto& [key, attr] : op.attribute) {
    if (key.rfind("pnnx_", 0) != 0) continue;
    const std::vector<float> v = attr.ToFloat();
    if (attr.shape == std::vector<int>{levels} && out.strides.empty()) {
      out.strides = v;
      continue;
    }
    const std::vector<int>& s = attr.shape;
    if (s.size() != 5 || s[0] != 1 || s[1] <= 0 || s[2] <= 0 || s[3] <= 0 || s[4] != 2 ||
        v.size() != size_t(s[1]) * s[2] * s[3] * 2) {
      throw fail(
          fmt::format("{} has shape {}: expected the strides ({}) or a grid of shape "
                      "(1,na,H,W,2)",
                      key, ShapeText(s), levels));
    }
    if (out.na != 0 && out.na != s[1])
      throw fail(fmt::format("{}: na {} after {}", key, s[1], out.na));
    out.na = s[1];
    const int h = s[2], w = s[3];
    // A grid: cell (y, x) of every anchor holds (x, y) - offset, one offset.
    const float offset = -v[0];
    bool is_grid = offset == 0.f || offset == 0.5f;
    bool is_anchor_grid = true;
    for (size_t i = 0; i < v.size() / 2; ++i) {
      const size_t cell = i % (size_t(h) * w);
      const float x = static_cast<float>(cell % w), y = static_cast<float>(cell / w);
      is_grid = is_grid && v[2 * i] == x - offset && v[2 * i + 1] == y - offset;
      const size_t first = (i / (size_t(h) * w)) * h * w;  // this anchor's cell (0, 0)
      is_anchor_grid = is_anchor_grid && v[2 * i] == v[2 * first] &&
                       v[2 * i + 1] == v[2 * first + 1] && v[2 * i] > 0 && v[2 * i + 1] > 0;
    }
    if (is_grid) {
      ++grids;
    } else if (is_anchor_grid && !anchor_grids.count({h, w})) {
      std::vector<float>& anchors = anchor_grids[{h, w}];
      for (int a = 0; a < s[1]; ++a) {
        anchors.push_back(v[2 * size_t(a) * h * w]);
        anchors.push_back(v[2 * size_t(a) * h * w + 1]);
      }
    } else {
      throw fail(
          fmt::format("{} of shape {} is neither a grid of cell indices nor an anchor "
                      "grid (one (w, h) per anchor in every cell), or repeats one",
                      key, ShapeText(s)));
    }
  }
  if (out.strides.empty() || grids != levels || static_cast<int>(anchor_grids.size()) != levels) {
    throw fail(fmt::format(
        "expected the strides ({}) and {} grids and {} anchor grids among its "
        "pnnx_ attributes; found {} strides, {} grids, {} anchor grids",
        levels, levels, levels, out.strides.empty() ? 0 : 1, grids, anchor_grids.size()));
  }
  // Levels go from the largest map (the smallest stride) to the smallest.
  for (const auto& [size, anchors] : anchor_grids) {
    out.anchors.insert(out.anchors.end(), anchors.begin(), anchors.end());
  }
  return out;
}

std::unique_ptr<Layer> CreateDetect(const RuntimeOperator& op) {
  const auto fail = [&](const std::string& why) {
    return LayerError(fmt::format("operator '{}' ({}): {}", op.name, op.type, why));
  };
  // The reader checks data against shape for files; operators built in code
  // may still disagree, and a short buffer must not be read past its end.
  const auto values = [&](const RuntimeAttribute& attr, const std::string& key, size_t count) {
    std::vector<float> v = attr.ToFloat();
    if (v.size() != count) {
      throw fail(fmt::format("{} holds {} values, its shape needs {}", key, v.size(), count));
    }
    return v;
  };
  int nc = 0, na = 0, levels = 0;
  std::vector<float> stride_values, anchor_values;
  // Numbered constants mean pnnx's moduleop form of Ultralytics' Detect, even
  // when its `anchors` buffer (in grid units there, not pixels) is kept too.
  bool numbered = false;
  for (const auto& [key, attr] : op.attribute) numbered = numbered || key.rfind("pnnx_", 0) == 0;
  if (!numbered && (op.attribute.count("anchors") || op.has_param("nc"))) {  // our Detect
    // Our exporter writes nc and na. The real pnnx, converting our Detect
    // with moduleop=models.yolo.Detect, keeps only the module's weights and
    // buffers (anchors in pixels, strides): na and nc then follow from the
    // shapes of anchors (levels, na, 2) and m.0.weight (na * (nc + 5), C, 1, 1).
    if (op.has_param("nc") || op.has_param("na")) {
      nc = op.param<int>("nc");
      na = op.param<int>("na");
    } else {
      const std::vector<int>& a = op.attr("anchors").shape;
      const std::vector<int>& w = op.attr("m.0.weight").shape;
      if (a.size() != 3 || a[1] <= 0 || w.empty() || w[0] % a[1] != 0 || w[0] / a[1] <= 5) {
        throw fail(
            fmt::format("has no nc/na params, and anchors {} with m.0.weight {} do not give them: "
                        "expected (levels,na,2) and (na*(nc+5),C,1,1)",
                        ShapeText(a), ShapeText(w)));
      }
      na = a[1];
      nc = w[0] / na - 5;
    }
    if (nc <= 0 || na <= 0) throw fail(fmt::format("nc={} and na={} must be positive", nc, na));
    const RuntimeAttribute& strides = op.attr("strides");
    if (strides.shape.size() != 1 || strides.shape[0] <= 0) {
      throw fail(fmt::format("strides has shape {}, expected (levels)", ShapeText(strides.shape)));
    }
    levels = strides.shape[0];
    const RuntimeAttribute& anchors = op.attr("anchors");
    if (anchors.shape != std::vector<int>{levels, na, 2}) {
      throw fail(fmt::format("anchors has shape {}, expected ({},{},2)", ShapeText(anchors.shape),
                             levels, na));
    }
    stride_values = values(strides, "strides", levels);
    anchor_values = values(anchors, "anchors", levels * na * 2);
  } else {  // pnnx's moduleop form: levels from the weights, the rest from the constants
    while (op.attribute.count(fmt::format("m.{}.weight", levels))) ++levels;
    if (levels == 0) throw fail("has neither nc/na/anchors/strides nor m.0.weight");
    const ModuleOpConstants constants = ReadModuleOpConstants(op, levels);
    na = constants.na;
    const std::vector<int>& w = op.attr("m.0.weight").shape;
    if (w.empty() || w[0] % na != 0 || w[0] / na <= 5) {
      throw fail(
          fmt::format("m.0.weight has shape {}: expected na * (nc + 5) = {} * (nc + 5) "
                      "outputs",
                      ShapeText(w), na));
    }
    nc = w[0] / na - 5;
    stride_values = constants.strides;
    anchor_values = constants.anchors;
  }
  const uint32_t no = nc + 5;
  std::vector<DetectLevel> detect_levels;
  for (int l = 0; l < levels; ++l) {
    const RuntimeAttribute& weight = op.attr(fmt::format("m.{}.weight", l));
    const RuntimeAttribute& bias = op.attr(fmt::format("m.{}.bias", l));
    const int outputs = na * static_cast<int>(no);
    if (weight.shape.size() != 4 || weight.shape[0] != outputs || weight.shape[1] <= 0 ||
        weight.shape[2] != 1 || weight.shape[3] != 1) {
      throw fail(fmt::format("m.{}.weight has shape {}, expected ({},C,1,1)", l,
                             ShapeText(weight.shape), outputs));
    }
    if (bias.shape != std::vector<int>{outputs}) {
      throw fail(
          fmt::format("m.{}.bias has shape {}, expected ({})", l, ShapeText(bias.shape), outputs));
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
