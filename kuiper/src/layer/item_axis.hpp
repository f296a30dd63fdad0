// Copying a range along one dimension of N-D items, for the layers that cut
// or join tensors (torch.cat, Tensor.slice, torch.split and its kin).
//
// An item of rank k is stored as tensor.hpp describes: dimension k-1 is the
// columns, k-2 the rows, and the leading ones are folded into the channels
// in row-major order (a 1-D item is one row of columns). So a range along
// the columns or the rows is a subcube, and a range along a leading
// dimension d is, for every index of the dimensions before d, a run of whole
// channels.
#pragma once

#include <cstdint>
#include <vector>

#include "kuiper/tensor.hpp"

namespace kuiper {

struct ItemAxis {
  enum class Where { kChannels, kRows, kCols };
  Where where = Where::kCols;
  // For kChannels, of the dimensions folded into the channels: the product of
  // those before the axis (outer) and of those after it (inner). Channel
  // (o * size + j) * inner + i holds index j of the axis.
  uint64_t outer = 1, inner = 1;
};

// Where item dimension `dim` (0-based, without the batch) of an item of
// `shape` lies in its storage.
inline ItemAxis LocateAxis(const std::vector<uint32_t>& shape, size_t dim) {
  const size_t rank = shape.size();
  ItemAxis axis;
  if (dim + 1 == rank) return axis;  // kCols
  if (dim + 2 == rank) {
    axis.where = ItemAxis::Where::kRows;
    return axis;
  }
  axis.where = ItemAxis::Where::kChannels;
  for (size_t d = 0; d < dim; ++d) axis.outer *= shape[d];
  for (size_t d = dim + 1; d + 2 < rank; ++d) axis.inner *= shape[d];
  return axis;
}

// Along `axis` (located in `in`'s shape; `out` differs from `in` along that
// dimension only): out[.., out_start + j, ..] = in[.., in_start + j * step, ..]
// for j < count. in_size and out_size are the two tensors' sizes along it.
inline void CopyAlongAxis(const ItemAxis& axis, const arma::fcube& in, uint64_t in_size,
                          uint64_t in_start, uint64_t step, arma::fcube& out, uint64_t out_size,
                          uint64_t out_start, uint64_t count) {
  switch (axis.where) {
    case ItemAxis::Where::kChannels:
      for (uint64_t o = 0; o < axis.outer; ++o) {
        if (step == 1) {  // one run of count * inner channels
          const uint64_t from = (o * in_size + in_start) * axis.inner;
          const uint64_t to = (o * out_size + out_start) * axis.inner;
          out.slices(to, to + count * axis.inner - 1) =
              in.slices(from, from + count * axis.inner - 1);
          continue;
        }
        for (uint64_t j = 0; j < count; ++j) {
          const uint64_t from = (o * in_size + in_start + j * step) * axis.inner;
          const uint64_t to = (o * out_size + out_start + j) * axis.inner;
          out.slices(to, to + axis.inner - 1) = in.slices(from, from + axis.inner - 1);
        }
      }
      break;
    case ItemAxis::Where::kRows:
      if (step == 1) {
        out.subcube(out_start, 0, 0, out_start + count - 1, out.n_cols - 1, out.n_slices - 1) =
            in.subcube(in_start, 0, 0, in_start + count - 1, in.n_cols - 1, in.n_slices - 1);
        break;
      }
      for (uint64_t j = 0; j < count; ++j) {
        out.subcube(out_start + j, 0, 0, out_start + j, out.n_cols - 1, out.n_slices - 1) =
            in.subcube(in_start + j * step, 0, 0, in_start + j * step, in.n_cols - 1,
                       in.n_slices - 1);
      }
      break;
    case ItemAxis::Where::kCols:
      if (step == 1) {
        out.subcube(0, out_start, 0, out.n_rows - 1, out_start + count - 1, out.n_slices - 1) =
            in.subcube(0, in_start, 0, in.n_rows - 1, in_start + count - 1, in.n_slices - 1);
        break;
      }
      for (uint64_t j = 0; j < count; ++j) {
        out.subcube(0, out_start + j, 0, out.n_rows - 1, out_start + j, out.n_slices - 1) =
            in.subcube(0, in_start + j * step, 0, in.n_rows - 1, in_start + j * step,
                       in.n_slices - 1);
      }
      break;
  }
}

}  // namespace kuiper
