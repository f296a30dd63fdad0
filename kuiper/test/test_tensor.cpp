// Core tests of Tensor<float>: shapes, element access, fill and read-back in
// both orders, reshape and the tensor helpers. Expected values are written out
// by hand from the definition of row-major (C, H, W) order.
#include <gtest/gtest.h>

#include <numeric>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {
namespace {

std::vector<float> IotaValues(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.f);
  return v;
}

TEST(TensorShape, OneDimensional) {
  ftensor t(5);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({5}));
  EXPECT_EQ(t.shapes(), std::vector<uint32_t>({1, 1, 5}));
  EXPECT_EQ(t.size(), 5u);
  EXPECT_FALSE(t.empty());
}

TEST(TensorShape, TwoDimensional) {
  ftensor t(3, 4);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({3, 4}));
  EXPECT_EQ(t.rows(), 3u);
  EXPECT_EQ(t.cols(), 4u);
  EXPECT_EQ(t.channels(), 1u);
}

TEST(TensorShape, ThreeDimensional) {
  ftensor t(2, 3, 4);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({2, 3, 4}));
  EXPECT_EQ(t.shapes(), std::vector<uint32_t>({2, 3, 4}));
  EXPECT_EQ(t.size(), 24u);
}

TEST(TensorShape, FromShapeVectorKeepsTheGivenRank) {
  EXPECT_EQ(ftensor(std::vector<uint32_t>{7}).raw_shapes(), std::vector<uint32_t>({7}));
  EXPECT_EQ(ftensor(std::vector<uint32_t>{2, 7}).raw_shapes(), std::vector<uint32_t>({2, 7}));
  EXPECT_EQ(ftensor(std::vector<uint32_t>{1, 2, 7}).raw_shapes(), std::vector<uint32_t>({1, 2, 7}));
}

TEST(TensorShape, RankZeroOrAboveSevenThrows) {
  EXPECT_THROW(ftensor(std::vector<uint32_t>{}), ShapeError);
  EXPECT_THROW(ftensor(std::vector<uint32_t>{1, 1, 1, 1, 1, 1, 1, 2}), ShapeError);
}

// An N-D tensor keeps its shape and folds the leading dimensions into the
// channels, row-major: (2, 3, 4, 5) is 6 channels of 4 x 5 (tensor.hpp).
TEST(TensorShape, FourDFoldsLeadingDimensionsIntoChannels) {
  const ftensor t(std::vector<uint32_t>{2, 3, 4, 5});
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({2, 3, 4, 5}));
  EXPECT_EQ(t.shapes(), std::vector<uint32_t>({6, 4, 5}));
  EXPECT_EQ(ftensor(std::vector<uint32_t>{1, 1, 1, 1, 1, 2, 3}).shapes(),
            std::vector<uint32_t>({1, 2, 3}));
}

// values(row_major) of an N-D tensor is NumPy's C order: element [a, b, h, w]
// of a (2, 3, 4, 5) tensor is at ((a*3 + b)*4 + h)*5 + w.
TEST(TensorShape, FiveDRowMajorFillReadsBackInCOrder) {
  ftensor t(std::vector<uint32_t>{2, 3, 2, 4, 5});
  t.Fill(IotaValues(240), /*row_major=*/true);
  EXPECT_EQ(t.values(true), IotaValues(240));
  // [1, 2, 0, 3, 4] -> channel 1*6 + 2*2 + 0 = 10, row 3, col 4.
  EXPECT_EQ(t.at(10, 3, 4), static_cast<float>(((1 * 3 + 2) * 2 * 4 + 3) * 5 + 4));
}

TEST(TensorShape, DefaultIsEmpty) {
  ftensor t;
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.size(), 0u);
}

TEST(TensorShape, NewTensorIsZero) {
  ftensor t(2, 3, 4);
  for (float v : t.values()) EXPECT_EQ(v, 0.f);
}

TEST(TensorFill, RowMajorPutsConsecutiveValuesAlongARow) {
  ftensor t(2, 2, 3);
  t.Fill(IotaValues(12), /*row_major=*/true);
  // Channel 0 is [[0 1 2] [3 4 5]], channel 1 is [[6 7 8] [9 10 11]].
  EXPECT_EQ(t.at(0, 0, 1), 1.f);
  EXPECT_EQ(t.at(0, 1, 0), 3.f);
  EXPECT_EQ(t.at(1, 0, 2), 8.f);
  EXPECT_EQ(t.at(1, 1, 2), 11.f);
}

TEST(TensorFill, ColumnMajorPutsConsecutiveValuesDownAColumn) {
  ftensor t(2, 2, 3);
  t.Fill(IotaValues(12), /*row_major=*/false);
  // Channel 0 is [[0 2 4] [1 3 5]], channel 1 is [[6 8 10] [7 9 11]].
  EXPECT_EQ(t.at(0, 0, 1), 2.f);
  EXPECT_EQ(t.at(0, 1, 0), 1.f);
  EXPECT_EQ(t.at(1, 0, 2), 10.f);
  EXPECT_EQ(t.at(1, 1, 2), 11.f);
}

TEST(TensorFill, ValuesReadBackInTheOrderTheyWereFilled) {
  ftensor t(3, 4, 5);
  t.Fill(IotaValues(60), true);
  EXPECT_EQ(t.values(true), IotaValues(60));
  ftensor u(3, 4, 5);
  u.Fill(IotaValues(60), false);
  EXPECT_EQ(u.values(false), IotaValues(60));
}

TEST(TensorFill, RowMajorValuesOfAColumnMajorFill) {
  ftensor t(2, 3);
  t.Fill(IotaValues(6), false);  // [[0 2 4] [1 3 5]]
  EXPECT_EQ(t.values(true), std::vector<float>({0, 2, 4, 1, 3, 5}));
}

TEST(TensorFill, WrongNumberOfValuesThrows) {
  ftensor t(2, 3);
  EXPECT_THROW(t.Fill(IotaValues(5)), ShapeError);
  EXPECT_THROW(t.Fill(IotaValues(7), false), ShapeError);
}

TEST(TensorFill, SingleValue) {
  ftensor t(2, 2, 2);
  t.Fill(1.5f);
  for (float v : t.values()) EXPECT_EQ(v, 1.5f);
}

TEST(TensorAccess, IndexFollowsStorageOrder) {
  ftensor t(2, 2, 3);
  t.Fill(IotaValues(12), true);
  // Storage is channel by channel, each column-major: 0 3 1 4 2 5 | 6 9 ...
  EXPECT_EQ(t.index(1), 3.f);
  EXPECT_EQ(t.index(2), 1.f);
  EXPECT_EQ(t.index(7), 9.f);
  t.index(7) = -1.f;
  EXPECT_EQ(t.at(1, 1, 0), -1.f);
}

TEST(TensorAccess, OutOfRangeThrows) {
  ftensor t(2, 3, 4);
  EXPECT_THROW(t.index(24), ShapeError);
  EXPECT_THROW(t.at(2, 0, 0), ShapeError);
  EXPECT_THROW(t.at(0, 3, 0), ShapeError);
  EXPECT_THROW(t.at(0, 0, 4), ShapeError);
  EXPECT_THROW(t.slice(2), ShapeError);
}

TEST(TensorAccess, SliceIsOneChannel) {
  ftensor t(2, 2, 2);
  t.Fill(IotaValues(8), true);
  const arma::fmat expected = {{4, 5}, {6, 7}};
  EXPECT_TRUE(arma::approx_equal(t.slice(1), expected, "absdiff", 0.f));
  t.slice(0)(1, 1) = 42.f;
  EXPECT_EQ(t.at(0, 1, 1), 42.f);
}

TEST(TensorReshape, RowMajorKeepsReadingOrder) {
  ftensor t(2, 3);
  t.Fill(IotaValues(6), true);  // [[0 1 2] [3 4 5]]
  t.Reshape({3, 2}, true);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({3, 2}));
  // [[0 1] [2 3] [4 5]], as torch.reshape gives.
  EXPECT_EQ(t.at(0, 0, 1), 1.f);
  EXPECT_EQ(t.at(0, 1, 0), 2.f);
  EXPECT_EQ(t.at(0, 2, 1), 5.f);
}

TEST(TensorReshape, ColumnMajorKeepsStorageOrder) {
  ftensor t(2, 3);
  t.Fill(IotaValues(6), true);  // [[0 1 2] [3 4 5]], storage 0 3 1 4 2 5
  t.Reshape({3, 2}, false);
  // Storage order unchanged, read as 3x2 column-major: [[0 4] [3 2] [1 5]].
  EXPECT_EQ(t.values(false), std::vector<float>({0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t.at(0, 0, 1), 4.f);
  EXPECT_EQ(t.at(0, 1, 0), 3.f);
}

TEST(TensorReshape, ThreeDToOneDRowMajor) {
  ftensor t(2, 2, 2);
  t.Fill(IotaValues(8), true);
  t.Reshape({8}, true);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({8}));
  EXPECT_EQ(t.values(true), IotaValues(8));
}

TEST(TensorReshape, OneDToThreeDRowMajor) {
  ftensor t(12);
  t.Fill(IotaValues(12), true);
  t.Reshape({3, 2, 2}, true);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({3, 2, 2}));
  EXPECT_EQ(t.at(2, 1, 0), 10.f);
}

TEST(TensorReshape, WrongElementCountThrows) {
  ftensor t(2, 3);
  EXPECT_THROW(t.Reshape({4, 2}), ShapeError);
  EXPECT_THROW(t.Reshape({1, 1, 1, 7}), ShapeError);
}

TEST(TensorTransform, AppliesToEveryElement) {
  ftensor t(2, 2);
  t.Fill({1, -2, 3, -4});
  t.Transform([](float x) { return x * x; });
  EXPECT_EQ(t.values(), std::vector<float>({1, 4, 9, 16}));
}

TEST(TensorTransform, OnesAndRand) {
  ftensor t(3, 4, 5);
  t.Ones();
  for (float v : t.values()) EXPECT_EQ(v, 1.f);
  t.Rand();
  for (float v : t.values()) {
    EXPECT_GE(v, 0.f);
    EXPECT_LT(v, 1.f);
  }
}

TEST(TensorHelpers, CreateAndCloneAreIndependent) {
  auto a = TensorCreate({2, 3});
  EXPECT_EQ(a->raw_shapes(), std::vector<uint32_t>({2, 3}));
  a->Fill(IotaValues(6));
  auto b = TensorClone(a);
  b->index(0) = 100.f;
  EXPECT_EQ(a->index(0), 0.f);
  EXPECT_EQ(b->values(), std::vector<float>({100, 1, 2, 3, 4, 5}));
}

TEST(TensorHelpers, ElementAddSameShape) {
  auto a = TensorCreate({2, 2});
  auto b = TensorCreate({2, 2});
  a->Fill({1, 2, 3, 4});
  b->Fill({10, 20, 30, 40});
  EXPECT_EQ(TensorElementAdd(a, b)->values(), std::vector<float>({11, 22, 33, 44}));
}

TEST(TensorHelpers, ElementMultiplyBroadcastsASingleElementOnEitherSide) {
  auto a = TensorCreate({2, 2});
  auto s = TensorCreate({1});
  a->Fill({1, 2, 3, 4});
  s->Fill({3});
  EXPECT_EQ(TensorElementMultiply(a, s)->values(), std::vector<float>({3, 6, 9, 12}));
  EXPECT_EQ(TensorElementMultiply(s, a)->values(), std::vector<float>({3, 6, 9, 12}));
  EXPECT_EQ(TensorElementMultiply(s, a)->raw_shapes(), std::vector<uint32_t>({2, 2}));
}

TEST(TensorHelpers, ElementAddMismatchedShapesThrows) {
  EXPECT_THROW(TensorElementAdd(TensorCreate({2, 3}), TensorCreate({3, 2})), ShapeError);
}

TEST(TensorHelpers, IsSameComparesShapeAndValues) {
  auto a = TensorCreate({2, 2});
  a->Fill({1, 2, 3, 4});
  auto b = TensorClone(a);
  EXPECT_TRUE(TensorIsSame(a, b));
  b->index(3) += 1e-3f;
  EXPECT_FALSE(TensorIsSame(a, b));
  EXPECT_FALSE(TensorIsSame(a, TensorCreate({4})));
}

TEST(TensorHelpers, SetDataRejectsAnotherShape) {
  ftensor t(2, 3, 4);
  EXPECT_THROW(t.set_data(arma::fcube(3, 4, 3)), ShapeError);
  EXPECT_NO_THROW(t.set_data(arma::fcube(3, 4, 2, arma::fill::ones)));
  EXPECT_EQ(t.at(1, 2, 3), 1.f);
}

TEST(Errors, TodoNamesLabFunctionAndPlace) {
  try {
    KUIPER_TODO("course9", "Something::Do");
    FAIL() << "KUIPER_TODO must throw";
  } catch (const NotImplemented& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("NotImplemented"), std::string::npos) << what;
    EXPECT_NE(what.find("course9"), std::string::npos) << what;
    EXPECT_NE(what.find("Something::Do"), std::string::npos) << what;
    EXPECT_NE(what.find("test_tensor.cpp:"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kuiper

namespace kuiper {
namespace {

// The graph's planned buffers (graph.hpp, buffer_planning) back tensors
// through Tensor(shapes, memory): the tensor reads and writes that memory,
// in the layout Tensor(shapes) has, and never leaves it.
TEST(TensorOverMemory, ReadsAndWritesTheGivenMemoryInStorageOrder) {
  std::vector<float> memory = IotaValues(2 * 3 * 4 * 5);
  Tensor<float> tensor({2, 3, 4, 5}, memory.data());
  EXPECT_EQ(tensor.raw_shapes(), (std::vector<uint32_t>{2, 3, 4, 5}));
  EXPECT_EQ(tensor.shapes(), (std::vector<uint32_t>{6, 4, 5})) << "N-D folds into channels";
  EXPECT_EQ(tensor.raw_ptr(), memory.data());
  // Storage order: channel 1 starts after 4*5 floats, each channel column-major.
  EXPECT_EQ(tensor.at(1, 2, 3), memory[20 + 3 * 4 + 2]);
  tensor.at(0, 1, 0) = -7.f;
  EXPECT_EQ(memory[1], -7.f);
}

TEST(TensorOverMemory, OneAndTwoDimensionsAreLaidOutAsTheirOwnConstructors) {
  std::vector<float> memory = IotaValues(6);
  EXPECT_EQ(Tensor<float>({6}, memory.data()).shapes(), Tensor<float>(6u).shapes());
  EXPECT_EQ(Tensor<float>({2, 3}, memory.data()).shapes(), Tensor<float>(2u, 3u).shapes());
  EXPECT_EQ(Tensor<float>({2, 3}, memory.data()).values(true),
            Tensor<float>({2, 3}, memory.data()).values(true));
}

TEST(TensorOverMemory, CannotChangeItsSize) {
  std::vector<float> memory(12, 0.f);
  Tensor<float> tensor({3, 4}, memory.data());
  EXPECT_THROW(tensor.data().set_size(4, 4, 1), std::logic_error)
      << "a tensor over planned memory must not silently move to memory of its own";
}

TEST(TensorOverMemory, ReshapeKeepsTheMemoryAndCopiesOwnTheirs) {
  std::vector<float> memory(12, 0.f);
  Tensor<float> tensor({3, 4}, memory.data());
  tensor.Fill(IotaValues(12), /*row_major=*/true);
  tensor.Reshape({4, 3}, /*row_major=*/true);
  EXPECT_EQ(tensor.raw_ptr(), memory.data());
  EXPECT_EQ(tensor.values(true), IotaValues(12)) << "row-major reading order kept";
  const std::vector<float> before = memory;
  Tensor<float> copy = tensor;
  EXPECT_NE(copy.raw_ptr(), memory.data());
  copy.Fill(0.f);
  EXPECT_EQ(memory, before) << "a copy writes into memory of its own";
}

}  // namespace
}  // namespace kuiper
