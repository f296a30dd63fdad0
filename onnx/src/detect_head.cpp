// The YOLOv5 Detect head, recognised in a plain torch.onnx.export of the model
// and fused into the engine's models.yolo.Detect layer: an optimisation only.
// Traced op by op, each level of the head (models/yolov5s.py, class Detect) is
//
//   p = Conv 1x1 (x)                                   (N, na*no, ny, nx)
//   s = Sigmoid(Transpose(Reshape(p, (N, na, no, ny, nx)), perm=(0,1,3,4,2)))
//   xy = (Slice(s, 0:2) * 2 - 0.5 + grid) * stride     grid[.., y, x, :] = (x, y)
//   wh = (Slice(s, 2:4) * 2) ^ 2 * anchors             anchors (1, na, 1, 1, 2)
//   y = Reshape(Concat(xy, wh, Slice(s, 4:no), axis=-1), (N, na*ny*nx, no))
//
// which the engine runs node by node like any graph (5-D Reshape, Transpose,
// Slice, expressions broadcasting the grid and anchors, Concat). Fused, a level
// becomes one models.yolo.Detect operator (its conv, stride and anchors) from
// x to y: one GEMM and one pass over the output instead of ~15 operators and
// their 5-D intermediates; the Concat of the levels stays an ordinary
// torch.cat. Every constant the layer relies on (2, 0.5, the grid, the stride,
// 2, the anchors) is checked; a head that differs in anything is not fused and
// is converted node by node (OnnxImportOptions::fuse_detect_head; the tests
// check that both give the same output).
#include <fmt/ranges.h>

#include <algorithm>

#include "context.hpp"

namespace kuiper::onnx_import {
namespace {

// `shape` with leading 1s added up to `rank` dimensions (NumPy broadcasting).
Shape PadTo(Shape shape, size_t rank) {
  while (shape.size() < rank) shape.insert(shape.begin(), 1);
  return shape;
}

}  // namespace

void Context::FindDetectHeads() {
  for (const onnx::NodeProto& node : model_.graph().node()) {
    for (const std::string& input : node.input()) readers_[input].push_back(&node);
  }
  for (const auto& info : model_.graph().output()) readers_[info.name()].push_back(nullptr);
  if (!options_.fuse_detect_head) return;
  for (const onnx::NodeProto& node : model_.graph().node()) {
    if (node.op_type() != "Reshape" || node.output_size() != 1 || absorbed_.count(&node)) continue;
    const auto shape = shapes_.find(node.output(0));
    if (shape == shapes_.end() || shape->second.size() != 5) continue;
    std::vector<const onnx::NodeProto*> nodes;
    DetectHead head;
    try {
      head = MatchDetectHead(node, nodes);
    } catch (const ConversionError&) {
      continue;  // not this head's exact form: its nodes are converted one by one
    }
    heads_[nodes.back()] = head;
    for (const onnx::NodeProto* part : nodes) {
      absorbed_.insert(part);
      if (part != nodes.back()) internal_.insert(part->output(0));
    }
  }
}

Context::DetectHead Context::MatchDetectHead(const onnx::NodeProto& reshape,
                                             std::vector<const onnx::NodeProto*>& nodes) {
  const auto fail = [&](const onnx::NodeProto& node, const std::string& why) {
    Fail(node, fmt::format("{} (not the YOLOv5 Detect head that '{}' would start)", why,
                           NodeName(reshape)));
  };
  // The one node that reads node's output, which must be of type `type`.
  const auto next = [&](const onnx::NodeProto& node, const std::string& type) -> const auto& {
    const std::vector<const onnx::NodeProto*>& readers = readers_[node.output(0)];
    if (readers.size() != 1 || !readers[0]) {
      fail(node, fmt::format("its output must go to one {} node only", type));
    }
    if (readers[0]->op_type() != type) fail(*readers[0], fmt::format("expected {} here", type));
    nodes.push_back(readers[0]);
    return *readers[0];
  };
  // The constant operand of binary `node`, whose other operand is `value`
  // (first, unless `commutative` lets it be either).
  const auto constant = [&](const onnx::NodeProto& node, const std::string& value,
                            bool commutative) -> const onnx::TensorProto& {
    const int other = node.input(0) == value ? 1 : 0;
    const onnx::TensorProto* tensor =
        node.input_size() == 2 ? Constant(node.input(other)) : nullptr;
    if (!tensor || (other == 0 && !commutative)) {
      fail(node, fmt::format("expected '{}' {} a constant", value, node.op_type()));
    }
    return *tensor;
  };
  // `node` must apply the single number `expected` to `value`.
  const auto scalar = [&](const onnx::NodeProto& node, const std::string& value, float expected) {
    const std::vector<float> v = OnnxTensorFloats(constant(node, value, node.op_type() == "Mul"));
    if (v.size() != 1 || v[0] != expected) {
      fail(node, fmt::format("expected the constant {}, found ({})", expected, fmt::join(v, ",")));
    }
  };

  // p = Conv 1x1 (x), read by this Reshape alone.
  const auto producer = std::find_if(
      model_.graph().node().begin(), model_.graph().node().end(),
      [&](const auto& n) { return n.output_size() > 0 && n.output(0) == reshape.input(0); });
  if (producer == model_.graph().node().end() || producer->op_type() != "Conv") {
    fail(reshape, "its input must be a 1x1 Conv");
  }
  const onnx::NodeProto& conv = *producer;
  nodes.push_back(&conv);
  nodes.push_back(&reshape);
  if (readers_[conv.output(0)].size() != 1) fail(conv, "its output must go to the Reshape only");
  const Shape& p = ShapeOf(conv, conv.output(0));
  const Shape& r = ShapeOf(reshape, reshape.output(0));
  const onnx::TensorProto& w = RequireConstant(conv, 1);
  const Shape w_shape(w.dims().begin(), w.dims().end());
  const bool plain = AttributeInt(conv, "group", 1) == 1 &&
                     AttributeInts(conv, "strides", {1, 1}) == std::vector<int64_t>{1, 1} &&
                     AttributeInts(conv, "dilations", {1, 1}) == std::vector<int64_t>{1, 1} &&
                     AttributeInts(conv, "pads", {0, 0, 0, 0}) == std::vector<int64_t>{0, 0, 0, 0};
  if (w_shape.size() != 4 || w_shape[2] != 1 || w_shape[3] != 1 || !plain || !HasInput(conv, 2)) {
    fail(conv, "expected a 1x1 convolution with bias, stride 1, no padding, one group");
  }
  DetectHead head;
  head.conv = &conv;
  head.na = r[1];
  head.no = r[2];
  const int64_t ny = r[3], nx = r[4];
  if (p.size() != 4 || r != Shape{p[0], head.na, head.no, ny, nx} || head.na * head.no != p[1] ||
      ny != p[2] || nx != p[3] || head.no <= 5) {
    fail(reshape, fmt::format("expected {} to become (N, na, no, ny, nx) with no > 5, found {}",
                              ShapeText(p), ShapeText(r)));
  }

  // s = Sigmoid(Transpose(.., perm=(0,1,3,4,2))): (N, na, ny, nx, no).
  const onnx::NodeProto& transpose = next(reshape, "Transpose");
  if (AttributeInts(transpose, "perm", {}) != std::vector<int64_t>{0, 1, 3, 4, 2}) {
    fail(transpose, "expected perm=(0,1,3,4,2)");
  }
  const onnx::NodeProto& sigmoid = next(transpose, "Sigmoid");

  // Three slices of the last axis: 0:2, 2:4 and 4:no.
  const std::vector<const onnx::NodeProto*>& slices = readers_[sigmoid.output(0)];
  const onnx::NodeProto* parts[3] = {nullptr, nullptr, nullptr};
  for (const onnx::NodeProto* slice : slices) {
    if (!slice || slice->op_type() != "Slice" || slice->input_size() < 4) {
      fail(sigmoid, "expected its output to go to three Slice nodes (starts, ends, axes inputs)");
    }
    const auto arg = [&](int k) {
      const onnx::TensorProto* t = HasInput(*slice, k) ? Constant(slice->input(k)) : nullptr;
      const std::vector<int64_t> v = t ? OnnxTensorInts(*t) : std::vector<int64_t>{1};
      if (v.size() != 1) fail(*slice, "expected a slice of one axis, with constant arguments");
      return v[0];
    };
    const int64_t start = arg(1), end = std::min(arg(2), head.no), axis = arg(3);
    int part = -1;
    if (start == 0 && end == 2) part = 0;
    if (start == 2 && end == 4) part = 1;
    if (start == 4 && end == head.no) part = 2;
    if ((axis != 4 && axis != -1) || arg(4) != 1 || part < 0 || parts[part]) {
      fail(*slice,
           fmt::format("expected one of the slices 0:2, 2:4, 4:{} of the last axis", head.no));
    }
    parts[part] = slice;
    nodes.push_back(slice);
  }
  if (slices.size() != 3) fail(sigmoid, "expected its output to go to three Slice nodes");

  // xy = (s[0:2] * 2 - 0.5 + grid) * stride.
  const onnx::NodeProto& xy_mul = next(*parts[0], "Mul");
  const onnx::NodeProto& sub = next(xy_mul, "Sub");
  const onnx::NodeProto& add = next(sub, "Add");
  const onnx::NodeProto& xy = next(add, "Mul");
  scalar(xy_mul, parts[0]->output(0), 2.f);
  scalar(sub, xy_mul.output(0), 0.5f);
  const onnx::TensorProto& grid = constant(add, sub.output(0), true);
  const std::vector<float> cells = OnnxTensorFloats(grid);
  if (PadTo({grid.dims().begin(), grid.dims().end()}, 5) != Shape{1, 1, ny, nx, 2}) {
    fail(add, fmt::format("expected a grid of shape (1,1,{},{},2)", ny, nx));
  }
  for (int64_t i = 0; i < ny * nx; ++i) {
    if (cells[2 * i] != static_cast<float>(i % nx) ||
        cells[2 * i + 1] != static_cast<float>(i / nx)) {
      fail(add, fmt::format("expected grid[y={}, x={}] = ({},{}), found ({},{})", i / nx, i % nx,
                            i % nx, i / nx, cells[2 * i], cells[2 * i + 1]));
    }
  }
  const std::vector<float> stride = OnnxTensorFloats(constant(xy, add.output(0), true));
  if (stride.size() != 1 || !(stride[0] > 0)) fail(xy, "expected one positive stride");
  head.stride = stride[0];

  // wh = (s[2:4] * 2) ^ 2 * anchors.
  const onnx::NodeProto& wh_mul = next(*parts[1], "Mul");
  const onnx::NodeProto& pow = next(wh_mul, "Pow");
  const onnx::NodeProto& wh = next(pow, "Mul");
  scalar(wh_mul, parts[1]->output(0), 2.f);
  scalar(pow, wh_mul.output(0), 2.f);
  const onnx::TensorProto& anchors = constant(wh, pow.output(0), true);
  if (PadTo({anchors.dims().begin(), anchors.dims().end()}, 5) != Shape{1, head.na, 1, 1, 2}) {
    fail(wh, fmt::format("expected anchors of shape (1,{},1,1,2)", head.na));
  }
  head.anchors = OnnxTensorFloats(anchors);

  // y = Reshape(Concat(xy, wh, s[4:no], axis=-1), (N, na*ny*nx, no)).
  const onnx::NodeProto& concat = next(xy, "Concat");
  const int64_t axis = AttributeInt(concat, "axis", 0);
  if (concat.input_size() != 3 || concat.input(0) != xy.output(0) ||
      concat.input(1) != wh.output(0) || concat.input(2) != parts[2]->output(0) ||
      (axis != 4 && axis != -1) || readers_[wh.output(0)].size() != 1 ||
      readers_[parts[2]->output(0)].size() != 1) {
    fail(concat, "expected Concat(xy, wh, s[4:]) on the last axis, read by nothing else");
  }
  const onnx::NodeProto& out = next(concat, "Reshape");
  if (ShapeOf(out, out.output(0)) != Shape{p[0], head.na * ny * nx, head.no}) {
    fail(out, fmt::format("expected the shape ({},{},{})", p[0], head.na * ny * nx, head.no));
  }
  return head;
}

void Context::EmitDetectHead(const onnx::NodeProto& last, const DetectHead& head) {
  const onnx::NodeProto& conv = *head.conv;
  const int input = Input(conv, 0);
  pnnx::Operator& op = Emit("models.yolo.Detect", NodeName(conv), {input}, Output(last));
  op.params["nc"] = IntParam(static_cast<int>(head.no - 5));
  op.params["na"] = IntParam(static_cast<int>(head.na));
  for (const auto& [key, k] : {std::pair{"m.0.weight", 1}, std::pair{"m.0.bias", 2}}) {
    const onnx::TensorProto& t = RequireConstant(conv, k);
    op.attrs[key] =
        FloatAttribute(std::vector<int>(t.dims().begin(), t.dims().end()), OnnxTensorFloats(t));
  }
  op.attrs["anchors"] = FloatAttribute({1, static_cast<int>(head.na), 2}, head.anchors);
  op.attrs["strides"] = FloatAttribute({1}, {head.stride});
}

}  // namespace kuiper::onnx_import
