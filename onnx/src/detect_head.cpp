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

namespace {

// Walks one YOLOv5 Detect head from the 5-D Reshape that starts it, node by
// node in the order of the model's Detect.forward, appending each node to
// `nodes`; the first difference throws a ConversionError naming the node.
class DetectHeadMatcher {
 public:
  using Readers = std::map<std::string, std::vector<const onnx::NodeProto*>>;
  DetectHeadMatcher(const Context& ctx, const Readers& readers, const onnx::NodeProto& reshape,
                    std::vector<const onnx::NodeProto*>& nodes)
      : ctx_(ctx), readers_(readers), reshape_(reshape), nodes_(nodes) {}

  DetectHead Match(const onnx::GraphProto& graph) {
    MatchConv(graph);
    const onnx::NodeProto& sigmoid = Next(Next(reshape_, "Transpose", {0, 1, 3, 4, 2}), "Sigmoid");
    MatchSlices(sigmoid);
    const onnx::NodeProto& xy = MatchXy();
    const onnx::NodeProto& wh = MatchWh();
    MatchOutput(xy, wh);
    return head_;
  }

 private:
  [[noreturn]] void Fail(const onnx::NodeProto& node, const std::string& why) const {
    ctx_.Fail(node, fmt::format("{} (not the YOLOv5 Detect head that '{}' would start)", why,
                                ctx_.NodeName(reshape_)));
  }

  const std::vector<const onnx::NodeProto*>& ReadersOf(const std::string& value) const {
    static const std::vector<const onnx::NodeProto*> kNone;
    const auto it = readers_.find(value);
    return it == readers_.end() ? kNone : it->second;
  }

  // The one node that reads node's output, which must be of type `type`.
  const onnx::NodeProto& Next(const onnx::NodeProto& node, const std::string& type) {
    const std::vector<const onnx::NodeProto*>& readers = ReadersOf(node.output(0));
    if (readers.size() != 1 || !readers[0]) {
      Fail(node, fmt::format("its output must go to one {} node only", type));
    }
    if (readers[0]->op_type() != type) Fail(*readers[0], fmt::format("expected {} here", type));
    nodes_.push_back(readers[0]);
    return *readers[0];
  }

  // Next, a Transpose with permutation `perm`.
  const onnx::NodeProto& Next(const onnx::NodeProto& node, const std::string& type,
                              const std::vector<int64_t>& perm) {
    const onnx::NodeProto& transpose = Next(node, type);
    if (AttributeInts(transpose, "perm", {}) != perm) {
      Fail(transpose, fmt::format("expected perm={}", ShapeText(perm)));
    }
    return transpose;
  }

  // The constant operand of binary `node`, whose other operand is `value`
  // (first, unless `commutative` lets it be either).
  const onnx::TensorProto& ConstantOperand(const onnx::NodeProto& node, const std::string& value,
                                           bool commutative) const {
    const int other = node.input(0) == value ? 1 : 0;
    const onnx::TensorProto* tensor =
        node.input_size() == 2 ? ctx_.Constant(node.input(other)) : nullptr;
    if (!tensor || (other == 0 && !commutative)) {
      Fail(node, fmt::format("expected '{}' {} a constant", value, node.op_type()));
    }
    return *tensor;
  }

  // `node` must apply the single number `expected` to `value`.
  void Scalar(const onnx::NodeProto& node, const std::string& value, float expected) const {
    const std::vector<float> v =
        OnnxTensorFloats(ConstantOperand(node, value, node.op_type() == "Mul"));
    if (v.size() != 1 || v[0] != expected) {
      Fail(node, fmt::format("expected the constant {}, found ({})", expected, fmt::join(v, ",")));
    }
  }

  // p = Conv 1x1 (x), read by this Reshape alone, reshaped to (N, na, no, ny, nx).
  void MatchConv(const onnx::GraphProto& graph) {
    const auto producer = std::find_if(
        graph.node().begin(), graph.node().end(),
        [&](const auto& n) { return n.output_size() > 0 && n.output(0) == reshape_.input(0); });
    if (producer == graph.node().end() || producer->op_type() != "Conv") {
      Fail(reshape_, "its input must be a 1x1 Conv");
    }
    const onnx::NodeProto& conv = *producer;
    nodes_.push_back(&conv);
    nodes_.push_back(&reshape_);
    if (ReadersOf(conv.output(0)).size() != 1) Fail(conv, "its output must go to the Reshape only");
    p_ = ctx_.ShapeOf(conv, conv.output(0));
    const Shape& r = ctx_.ShapeOf(reshape_, reshape_.output(0));
    const onnx::TensorProto& w = ctx_.RequireConstant(conv, 1);
    const Shape w_shape(w.dims().begin(), w.dims().end());
    const bool plain =
        AttributeInt(conv, "group", 1) == 1 &&
        AttributeInts(conv, "strides", {1, 1}) == std::vector<int64_t>{1, 1} &&
        AttributeInts(conv, "dilations", {1, 1}) == std::vector<int64_t>{1, 1} &&
        AttributeInts(conv, "pads", {0, 0, 0, 0}) == std::vector<int64_t>{0, 0, 0, 0};
    if (w_shape.size() != 4 || w_shape[2] != 1 || w_shape[3] != 1 || !plain ||
        !ctx_.HasInput(conv, 2)) {
      Fail(conv, "expected a 1x1 convolution with bias, stride 1, no padding, one group");
    }
    head_.conv = &conv;
    head_.na = r[1];
    head_.no = r[2];
    ny_ = r[3];
    nx_ = r[4];
    const Shape& p = p_;
    if (p.size() != 4 || r != Shape{p[0], head_.na, head_.no, ny_, nx_} ||
        head_.na * head_.no != p[1] || ny_ != p[2] || nx_ != p[3] || head_.no <= 5) {
      Fail(reshape_, fmt::format("expected {} to become (N, na, no, ny, nx) with no > 5, found {}",
                                 ShapeText(p), ShapeText(r)));
    }
  }

  // Three slices of the last axis of s = Sigmoid(..): 0:2, 2:4 and 4:no.
  void MatchSlices(const onnx::NodeProto& sigmoid) {
    const std::vector<const onnx::NodeProto*>& slices = ReadersOf(sigmoid.output(0));
    for (const onnx::NodeProto* slice : slices) {
      if (!slice || slice->op_type() != "Slice" || slice->input_size() < 4) {
        Fail(sigmoid, "expected its output to go to three Slice nodes (starts, ends, axes inputs)");
      }
      const auto arg = [&](int k) {
        const onnx::TensorProto* t =
            ctx_.HasInput(*slice, k) ? ctx_.Constant(slice->input(k)) : nullptr;
        const std::vector<int64_t> v = t ? OnnxTensorInts(*t) : std::vector<int64_t>{1};
        if (v.size() != 1) Fail(*slice, "expected a slice of one axis, with constant arguments");
        return v[0];
      };
      const int64_t start = arg(1), end = std::min(arg(2), head_.no), axis = arg(3);
      int part = -1;
      if (start == 0 && end == 2) part = 0;
      if (start == 2 && end == 4) part = 1;
      if (start == 4 && end == head_.no) part = 2;
      if ((axis != 4 && axis != -1) || arg(4) != 1 || part < 0 || parts_[part]) {
        Fail(*slice,
             fmt::format("expected one of the slices 0:2, 2:4, 4:{} of the last axis", head_.no));
      }
      parts_[part] = slice;
      nodes_.push_back(slice);
    }
    if (slices.size() != 3) Fail(sigmoid, "expected its output to go to three Slice nodes");
  }

  // xy = (s[0:2] * 2 - 0.5 + grid) * stride, grid[.., y, x, :] = (x, y).
  const onnx::NodeProto& MatchXy() {
    const onnx::NodeProto& xy_mul = Next(*parts_[0], "Mul");
    const onnx::NodeProto& sub = Next(xy_mul, "Sub");
    const onnx::NodeProto& add = Next(sub, "Add");
    const onnx::NodeProto& xy = Next(add, "Mul");
    Scalar(xy_mul, parts_[0]->output(0), 2.f);
    Scalar(sub, xy_mul.output(0), 0.5f);
    const onnx::TensorProto& grid = ConstantOperand(add, sub.output(0), true);
    const std::vector<float> cells = OnnxTensorFloats(grid);
    if (PadTo({grid.dims().begin(), grid.dims().end()}, 5) != Shape{1, 1, ny_, nx_, 2}) {
      Fail(add, fmt::format("expected a grid of shape (1,1,{},{},2)", ny_, nx_));
    }
    for (int64_t i = 0; i < ny_ * nx_; ++i) {
      if (cells[2 * i] != static_cast<float>(i % nx_) ||
          cells[2 * i + 1] != static_cast<float>(i / nx_)) {
        Fail(add, fmt::format("expected grid[y={}, x={}] = ({},{}), found ({},{})", i / nx_,
                              i % nx_, i % nx_, i / nx_, cells[2 * i], cells[2 * i + 1]));
      }
    }
    const std::vector<float> stride = OnnxTensorFloats(ConstantOperand(xy, add.output(0), true));
    if (stride.size() != 1 || !(stride[0] > 0)) Fail(xy, "expected one positive stride");
    head_.stride = stride[0];
    return xy;
  }

  // wh = (s[2:4] * 2) ^ 2 * anchors.
  const onnx::NodeProto& MatchWh() {
    const onnx::NodeProto& wh_mul = Next(*parts_[1], "Mul");
    const onnx::NodeProto& pow = Next(wh_mul, "Pow");
    const onnx::NodeProto& wh = Next(pow, "Mul");
    Scalar(wh_mul, parts_[1]->output(0), 2.f);
    Scalar(pow, wh_mul.output(0), 2.f);
    const onnx::TensorProto& anchors = ConstantOperand(wh, pow.output(0), true);
    if (PadTo({anchors.dims().begin(), anchors.dims().end()}, 5) != Shape{1, head_.na, 1, 1, 2}) {
      Fail(wh, fmt::format("expected anchors of shape (1,{},1,1,2)", head_.na));
    }
    head_.anchors = OnnxTensorFloats(anchors);
    return wh;
  }

  // y = Reshape(Concat(xy, wh, s[4:no], axis=-1), (N, na*ny*nx, no)).
  void MatchOutput(const onnx::NodeProto& xy, const onnx::NodeProto& wh) {
    const onnx::NodeProto& concat = Next(xy, "Concat");
    const int64_t axis = AttributeInt(concat, "axis", 0);
    if (concat.input_size() != 3 || concat.input(0) != xy.output(0) ||
        concat.input(1) != wh.output(0) || concat.input(2) != parts_[2]->output(0) ||
        (axis != 4 && axis != -1) || ReadersOf(wh.output(0)).size() != 1 ||
        ReadersOf(parts_[2]->output(0)).size() != 1) {
      Fail(concat, "expected Concat(xy, wh, s[4:]) on the last axis, read by nothing else");
    }
    const onnx::NodeProto& out = Next(concat, "Reshape");
    const int64_t rows = head_.na * ny_ * nx_;
    if (ctx_.ShapeOf(out, out.output(0)) != Shape{p_[0], rows, head_.no}) {
      Fail(out, fmt::format("expected the shape ({},{},{})", p_[0], rows, head_.no));
    }
  }

  const Context& ctx_;
  const Readers& readers_;
  const onnx::NodeProto& reshape_;
  std::vector<const onnx::NodeProto*>& nodes_;
  DetectHead head_;
  Shape p_;  // the convolution's output (N, na*no, ny, nx)
  int64_t ny_ = 0, nx_ = 0;
  const onnx::NodeProto* parts_[3] = {nullptr, nullptr, nullptr};  // s[0:2], s[2:4], s[4:no]
};

}  // namespace

DetectHead Context::MatchDetectHead(const onnx::NodeProto& reshape,
                                    std::vector<const onnx::NodeProto*>& nodes) {
  return DetectHeadMatcher(*this, readers_, reshape, nodes).Match(model_.graph());
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
