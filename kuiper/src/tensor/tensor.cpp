#include "kuiper/tensor.hpp"

#include <fmt/format.h>

#include <limits>

#include "kuiper/error.hpp"

namespace kuiper {

namespace {

uint64_t ShapeProduct(const std::vector<uint32_t>& shapes) {
  uint64_t product = 1;
  for (uint32_t dim : shapes) product *= dim;
  return product;
}

void CheckShapeRank(const std::vector<uint32_t>& shapes) {
  if (shapes.empty() || shapes.size() > kMaxTensorRank) {
    throw ShapeError(fmt::format("a tensor has 1 to {} dimensions, got shape {}", kMaxTensorRank,
                                 ShapeText(shapes)));
  }
}

}  // namespace

Tensor<float>::Tensor(uint32_t size) : raw_shapes_{size}, data_(1, size, 1) { data_.zeros(); }

Tensor<float>::Tensor(uint32_t rows, uint32_t cols)
    : raw_shapes_{rows, cols}, data_(rows, cols, 1) {
  data_.zeros();
}

Tensor<float>::Tensor(uint32_t channels, uint32_t rows, uint32_t cols)
    : raw_shapes_{channels, rows, cols}, data_(rows, cols, channels) {
  data_.zeros();
}

Tensor<float>::Tensor(const std::vector<uint32_t>& shapes) {
  CheckShapeRank(shapes);
  if (shapes.size() == 1) {
    *this = Tensor(shapes[0]);
  } else if (shapes.size() == 2) {
    *this = Tensor(shapes[0], shapes[1]);
  } else {
    // 3-D, or N-D folded: the leading dimensions, read row-major, are the
    // channels, so values(row_major) reads the N-D tensor in row-major order.
    const std::vector<uint32_t> leading(shapes.begin(), shapes.end() - 2);
    const uint64_t channels = ShapeProduct(leading);
    if (channels > std::numeric_limits<uint32_t>::max()) {
      throw ShapeError(fmt::format("shape {} has too many elements", ShapeText(shapes)));
    }
    *this = Tensor(static_cast<uint32_t>(channels), shapes[shapes.size() - 2], shapes.back());
    raw_shapes_ = shapes;
  }
}

Tensor<float>::Tensor(const std::vector<uint32_t>& shapes, float* memory) {
  CheckShapeRank(shapes);
  // The cube the other constructors make for `shapes`: 1-D is one row,
  // 2-D one channel, N-D folds the leading dimensions into the channels.
  uint64_t rows = 1, cols = shapes.back(), channels = 1;
  if (shapes.size() >= 2) rows = shapes[shapes.size() - 2];
  if (shapes.size() >= 3) channels = ShapeProduct({shapes.begin(), shapes.end() - 2});
  if (channels > std::numeric_limits<uint32_t>::max()) {
    throw ShapeError(fmt::format("shape {} has too many elements", ShapeText(shapes)));
  }
  raw_shapes_ = shapes;
  data_ = arma::fcube(memory, rows, cols, channels, /*copy_aux_mem=*/false, /*strict=*/true);
}

uint32_t Tensor<float>::rows() const { return data_.n_rows; }
uint32_t Tensor<float>::cols() const { return data_.n_cols; }
uint32_t Tensor<float>::channels() const { return data_.n_slices; }
uint32_t Tensor<float>::size() const { return data_.n_elem; }
bool Tensor<float>::empty() const { return data_.empty(); }

std::vector<uint32_t> Tensor<float>::shapes() const { return {channels(), rows(), cols()}; }

const std::vector<uint32_t>& Tensor<float>::raw_shapes() const { return raw_shapes_; }

float Tensor<float>::index(uint32_t offset) const {
  if (offset >= size()) {
    throw ShapeError(
        fmt::format("index {} is out of range for a tensor of {} elements", offset, size()));
  }
  return data_.at(offset);
}

float& Tensor<float>::index(uint32_t offset) {
  const auto& self = *this;
  self.index(offset);  // bounds check
  return data_.at(offset);
}

float Tensor<float>::at(uint32_t channel, uint32_t row, uint32_t col) const {
  if (channel >= channels() || row >= rows() || col >= cols()) {
    throw ShapeError(fmt::format("element ({}, {}, {}) is out of range for shape ({}, {}, {})",
                                 channel, row, col, channels(), rows(), cols()));
  }
  return data_.at(row, col, channel);
}

float& Tensor<float>::at(uint32_t channel, uint32_t row, uint32_t col) {
  const auto& self = *this;
  self.at(channel, row, col);  // bounds check
  return data_.at(row, col, channel);
}

void Tensor<float>::CheckChannel(uint32_t channel) const {
  if (channel >= channels()) {
    throw ShapeError(
        fmt::format("channel {} is out of range for a tensor of {} channels", channel, channels()));
  }
}

const arma::fmat& Tensor<float>::slice(uint32_t channel) const {
  CheckChannel(channel);
  return data_.slice(channel);
}

arma::fmat& Tensor<float>::slice(uint32_t channel) {
  CheckChannel(channel);
  return data_.slice(channel);
}

arma::fcube& Tensor<float>::data() { return data_; }
const arma::fcube& Tensor<float>::data() const { return data_; }

void Tensor<float>::set_data(const arma::fcube& data) {
  if (data.n_rows != rows() || data.n_cols != cols() || data.n_slices != channels()) {
    throw ShapeError(fmt::format("set_data: cube is ({}, {}, {}) but the tensor is ({}, {}, {})",
                                 data.n_slices, data.n_rows, data.n_cols, channels(), rows(),
                                 cols()));
  }
  data_ = data;
}

float* Tensor<float>::raw_ptr() { return data_.memptr(); }
const float* Tensor<float>::raw_ptr() const { return data_.memptr(); }

void Tensor<float>::Fill(float value) { data_.fill(value); }

void Tensor<float>::Fill(const std::vector<float>& values, bool row_major) {
  if (values.size() != size()) {
    throw ShapeError(
        fmt::format("Fill: got {} values for a tensor of {} elements", values.size(), size()));
  }
  if (!row_major) {
    std::copy(values.begin(), values.end(), data_.memptr());
    return;
  }
  const uint32_t plane = rows() * cols();
  for (uint32_t c = 0; c < channels(); ++c) {
    // A row-major (rows x cols) block read column-major is its transpose.
    const arma::fmat transposed(values.data() + c * plane, cols(), rows());
    data_.slice(c) = transposed.t();
  }
}

std::vector<float> Tensor<float>::values(bool row_major) const {
  if (!row_major) return {data_.begin(), data_.end()};
  std::vector<float> out;
  out.reserve(size());
  for (uint32_t c = 0; c < channels(); ++c) {
    const arma::fmat transposed = data_.slice(c).t();
    out.insert(out.end(), transposed.begin(), transposed.end());
  }
  return out;
}

void Tensor<float>::Reshape(const std::vector<uint32_t>& shapes, bool row_major) {
  CheckShapeRank(shapes);
  if (ShapeProduct(shapes) != size()) {
    throw ShapeError(fmt::format("Reshape: shape {} holds {} elements, the tensor has {}",
                                 ShapeText(shapes), ShapeProduct(shapes), size()));
  }
  const std::vector<float> flat = values(row_major);
  *this = Tensor(shapes);
  Fill(flat, row_major);
}

void Tensor<float>::Transform(const std::function<float(float)>& fn) { data_.transform(fn); }

void Tensor<float>::Ones() { data_.ones(); }

void Tensor<float>::Rand() { data_.randu(); }

sftensor TensorCreate(const std::vector<uint32_t>& shapes) {
  return std::make_shared<ftensor>(shapes);
}

sftensor TensorCreate(uint32_t channels, uint32_t rows, uint32_t cols) {
  return std::make_shared<ftensor>(channels, rows, cols);
}

sftensor TensorClone(const sftensor& tensor) { return std::make_shared<ftensor>(*tensor); }

bool TensorIsSame(const sftensor& a, const sftensor& b, float tolerance) {
  if (!a || !b || a->raw_shapes() != b->raw_shapes()) return false;
  return arma::approx_equal(a->data(), b->data(), "absdiff", tolerance);
}

namespace {

template <typename Op>
sftensor ElementWise(const sftensor& a, const sftensor& b, Op op, const char* name) {
  if (!a || !b) throw ShapeError(fmt::format("{}: an operand is null", name));
  if (a->size() == 1 && b->size() != 1) return ElementWise(b, a, op, name);
  auto out = TensorClone(a);
  if (b->size() == 1) {
    const float scalar = b->index(0);
    out->Transform([&](float x) { return op(x, scalar); });
    return out;
  }
  if (a->shapes() != b->shapes()) {
    throw ShapeError(fmt::format("{}: shapes {} and {} differ and neither is one element", name,
                                 ShapeText(a->raw_shapes()), ShapeText(b->raw_shapes())));
  }
  const float* pb = b->raw_ptr();
  float* po = out->raw_ptr();
  for (uint32_t i = 0; i < out->size(); ++i) po[i] = op(po[i], pb[i]);
  return out;
}

}  // namespace

sftensor TensorElementAdd(const sftensor& a, const sftensor& b) {
  return ElementWise(a, b, std::plus<float>(), "TensorElementAdd");
}

sftensor TensorElementMultiply(const sftensor& a, const sftensor& b) {
  return ElementWise(a, b, std::multiplies<float>(), "TensorElementMultiply");
}

}  // namespace kuiper
