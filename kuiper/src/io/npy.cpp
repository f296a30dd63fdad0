#include "kuiper/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <regex>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// Far beyond any model input here, small enough that a corrupt header
// cannot make us allocate the machine's memory.
constexpr uint64_t kMaxElements = uint64_t{1} << 31;
// NumPy's default max_header_size. std::regex recurses once per character it
// matches, so a longer header could overflow the stack (about 40000 bytes
// did under AddressSanitizer; found by fuzz/npy_fuzzer.cpp).
constexpr size_t kMaxHeaderSize = 10000;

template <typename T>
void Convert(const char* bytes, size_t count, std::vector<float>& out) {
  out.resize(count);
  for (size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(value);
  }
}

template <typename T>
void ConvertInts(const char* bytes, size_t count, std::vector<int64_t>& out) {
  out.resize(count);
  for (size_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
    out[i] = static_cast<int64_t>(value);
  }
}

}  // namespace

NpyArray LoadNpy(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ParseError(fmt::format("{}: cannot open the file", path));
  // The whole file is read into memory, so its size is checked first.
  std::error_code error;
  const uint64_t size = std::filesystem::file_size(path, error);
  if (!error) CheckMemory(size, fmt::format("{}: reading the whole file", path));
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return ParseNpy(bytes, path);
}

NpyArray ParseNpy(std::string_view bytes, const std::string& name) {
  auto fail = [&](const std::string& what) {
    return ParseError(fmt::format("{}: not a usable .npy file: {}", name, what));
  };
  if (bytes.size() < 10 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    throw fail("it does not start with the .npy magic \\x93NUMPY");
  }
  const auto major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw fail("the header length is cut off");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(bytes[8 + i]);
    header_start = 12;
  } else {
    throw fail(fmt::format("format version {} is not 1, 2 or 3", major));
  }
  if (header_len > kMaxHeaderSize) {
    throw fail(fmt::format("the header is {} bytes long, more than NumPy's own limit of {}",
                           header_len, kMaxHeaderSize));
  }
  if (header_start + header_len > bytes.size()) throw fail("the header is cut off");
  const std::string header(bytes.substr(header_start, header_len));

  std::smatch match;
  // Compiled once: building a std::regex costs far more than matching a header.
  static const std::regex kDescr(R"('descr'\s*:\s*'([<>|=])([a-z])(\d+)')");
  static const std::regex kFortran(R"('fortran_order'\s*:\s*True)");
  static const std::regex kShape(R"('shape'\s*:\s*\(([^)]*)\))");
  static const std::regex kNumber(R"(\d+)");
  if (!std::regex_search(header, match, kDescr)) {
    throw fail("the header has no 'descr'");
  }
  const char order = match[1].str()[0];
  const std::string kind = match[2].str() + match[3].str();
  if (order == '>') throw fail("big-endian data is not supported");
  if (std::regex_search(header, kFortran)) {
    throw fail("Fortran-order arrays are not supported (save with np.ascontiguousarray)");
  }
  if (!std::regex_search(header, match, kShape)) {
    throw fail("the header has no 'shape'");
  }
  NpyArray array;
  uint64_t count = 1;
  const std::string dims = match[1].str();
  for (std::sregex_iterator it(dims.begin(), dims.end(), kNumber), end; it != end; ++it) {
    const std::string digits = it->str();
    if (digits.size() > 12) throw fail("a dimension is absurdly large");
    const int64_t dim = std::stoll(digits);
    array.shape.push_back(dim);
    if (dim != 0 && count > kMaxElements / static_cast<uint64_t>(dim)) {
      throw fail(fmt::format("shape ({}) has more than 2^31 elements", dims));
    }
    count *= static_cast<uint64_t>(dim);
  }
  CheckMemory(count * sizeof(float), fmt::format("{}: shape ({}) as float32", name, dims));

  const char* data = bytes.data() + header_start + header_len;
  const size_t available = bytes.size() - header_start - header_len;
  // Integer and bool arrays (a Reshape's shape, a Slice's ends, uint8 pixels)
  // keep their exact values in `ints` too: the float copy in `data` is exact
  // only up to 2^24 (ArrayToInput checks that; the ONNX importer reads `ints`).
  static const std::map<std::string, size_t> kSizes = {{"f4", 4}, {"f8", 8}, {"i1", 1}, {"i2", 2},
                                                       {"i4", 4}, {"i8", 8}, {"u1", 1}, {"u2", 2},
                                                       {"u4", 4}, {"u8", 8}, {"b1", 1}};
  const auto size = kSizes.find(kind);
  if (size == kSizes.end()) {
    throw fail(fmt::format("dtype '{}' is not one of f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1", kind));
  }
  const size_t element_size = size->second;
  if (available < count * element_size) {
    throw fail(fmt::format("shape ({}) needs {} bytes of data, the file has {}", dims,
                           count * element_size, available));
  }
  if (kind == "f4") {
    Convert<float>(data, count, array.data);
  } else if (kind == "f8") {
    Convert<double>(data, count, array.data);
  } else {
    array.integer = true;
    if (kind == "i1") ConvertInts<int8_t>(data, count, array.ints);
    if (kind == "i2") ConvertInts<int16_t>(data, count, array.ints);
    if (kind == "i4") ConvertInts<int32_t>(data, count, array.ints);
    if (kind == "i8") ConvertInts<int64_t>(data, count, array.ints);
    if (kind == "u1" || kind == "b1") ConvertInts<uint8_t>(data, count, array.ints);
    if (kind == "u2") ConvertInts<uint16_t>(data, count, array.ints);
    if (kind == "u4") ConvertInts<uint32_t>(data, count, array.ints);
    if (kind == "u8") {
      for (size_t i = 0; i < count; ++i) {
        uint64_t value;
        std::memcpy(&value, data + i * 8, 8);
        if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          throw fail(fmt::format("uint64 value {} (element {}) does not fit in int64", value, i));
        }
      }
      ConvertInts<uint64_t>(data, count, array.ints);
    }
    array.data.assign(array.ints.begin(), array.ints.end());
  }
  return array;
}

void SaveNpy(const std::string& path, const NpyArray& array) {
  // Python's tuple spelling: "(3,)" for one dimension, "(2, 3)" for more.
  std::string shape = fmt::format("{}", fmt::join(array.shape, ", "));
  if (array.shape.size() == 1) shape += ",";
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", shape);
  // Pad with spaces so the data starts on a 64-byte boundary, as NumPy does.
  const size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream file(path, std::ios::binary);
  if (!file) throw Error(fmt::format("{}: cannot open for writing", path));
  file.write(kMagic, kMagicSize);
  const char version[] = {1, 0, static_cast<char>(header.size() & 0xff),
                          static_cast<char>(header.size() >> 8)};
  file.write(version, 4);
  file << header;
  file.write(reinterpret_cast<const char*>(array.data.data()),
             static_cast<std::streamsize>(array.data.size() * sizeof(float)));
  if (!file) throw Error(fmt::format("{}: write failed", path));
}

std::vector<sftensor> NpyToBatch(const NpyArray& array) {
  if (array.shape.size() < 2 || array.shape.size() > kMaxTensorRank + 1) {
    throw ShapeError(fmt::format(
        "an input array must have a batch axis and 1 to {} more, as (N, F) or (N, C, H, W); "
        "got {}",
        kMaxTensorRank, ShapeText(array.shape)));
  }
  std::vector<uint32_t> item_shape;
  for (size_t i = 1; i < array.shape.size(); ++i) {
    if (array.shape[i] <= 0 || array.shape[i] > std::numeric_limits<uint32_t>::max()) {
      throw ShapeError(fmt::format("array dimension {} is {}", i, array.shape[i]));
    }
    item_shape.push_back(static_cast<uint32_t>(array.shape[i]));
  }
  std::vector<sftensor> batch;
  size_t offset = 0;
  for (int64_t n = 0; n < array.shape[0]; ++n) {
    auto tensor = TensorCreate(item_shape);
    const size_t size = tensor->size();
    tensor->Fill(
        std::vector<float>(array.data.begin() + offset, array.data.begin() + offset + size),
        /*row_major=*/true);
    offset += size;
    batch.push_back(std::move(tensor));
  }
  return batch;
}

NpyArray BatchToNpy(const std::vector<sftensor>& batch) {
  NpyArray array;
  if (batch.empty()) throw ShapeError("cannot stack an empty batch");
  array.shape.push_back(static_cast<int64_t>(batch.size()));
  for (uint32_t dim : batch[0]->raw_shapes()) array.shape.push_back(dim);
  for (const sftensor& tensor : batch) {
    if (tensor->raw_shapes() != batch[0]->raw_shapes()) {
      throw ShapeError(fmt::format("batch items have shapes {} and {}",
                                   ShapeText(batch[0]->raw_shapes()),
                                   ShapeText(tensor->raw_shapes())));
    }
    const std::vector<float> values = tensor->values(/*row_major=*/true);
    array.data.insert(array.data.end(), values.begin(), values.end());
  }
  return array;
}

void CheckExactInFloat(const NpyArray& array, const std::string& input_name) {
  if (!array.integer) return;
  for (size_t i = 0; i < array.ints.size(); ++i) {
    if (array.ints[i] > kMaxExactInt || array.ints[i] < -kMaxExactInt) {
      throw ShapeError(fmt::format(
          "input '{}': integer value {} (element {}) is beyond 2^24 = {}, where float32 stops "
          "holding every integer exactly; the engine computes in float32",
          input_name, array.ints[i], i, kMaxExactInt));
    }
  }
}

std::vector<sftensor> ArrayToInput(const NpyArray& array, const RuntimeOperand& operand,
                                   const std::string& input_name) {
  CheckExactInFloat(array, input_name);
  if (operand.unbatched_shape) {
    const std::vector<int>& declared = *operand.unbatched_shape;
    bool fits = declared.size() == array.shape.size();
    for (size_t d = 0; fits && d < declared.size(); ++d) {
      fits = declared[d] < 0 || declared[d] == array.shape[d];
    }
    if (!fits) {
      throw ShapeError(fmt::format("input '{}' is declared {} (no batch axis); got an array of {}",
                                   input_name, ShapeText(declared), ShapeText(array.shape)));
    }
    // The engine holds the whole value as one item of operand.shapes[1..].
    const std::vector<uint32_t> item = BatchItemShape(operand.shapes);
    sftensor tensor = TensorCreate(item);
    if (tensor->size() != array.data.size()) {
      throw ShapeError(
          fmt::format("input '{}': an array of {} has {} values, the engine's {} "
                      "holds {}",
                      input_name, ShapeText(array.shape), array.data.size(),
                      ShapeText(operand.shapes), tensor->size()));
    }
    tensor->Fill(array.data, /*row_major=*/true);
    return {tensor};
  }
  const std::vector<int>& declared = operand.shapes;
  if (!declared.empty()) {
    bool fits = declared.size() == array.shape.size();
    for (size_t d = 1; fits && d < declared.size(); ++d) {
      fits = declared[d] < 0 || declared[d] == array.shape[d];
    }
    if (!fits) {
      std::vector<int> batch_free = declared;
      batch_free[0] = -1;
      throw ShapeError(fmt::format(
          "input '{}' is declared {} (dimension 0 the batch, any size: "
          "{}); got an array of {}",
          input_name, ShapeText(declared), ShapeText(batch_free), ShapeText(array.shape)));
    }
  }
  return NpyToBatch(array);
}

NpyArray OutputToArray(const std::vector<sftensor>& batch, const RuntimeOperand& operand) {
  if (!operand.unbatched_shape || batch.size() != 1 || !batch[0]) return BatchToNpy(batch);
  NpyArray array;
  array.data = batch[0]->values(/*row_major=*/true);
  const std::vector<int>& declared = *operand.unbatched_shape;
  int64_t count = 1;
  for (int d : declared) count = d < 0 ? -1 : count * d;
  if (count == static_cast<int64_t>(array.data.size())) {
    array.shape.assign(declared.begin(), declared.end());
  } else {  // a dimension the model leaves unknown: the item's own shape
    for (uint32_t d : batch[0]->raw_shapes()) array.shape.push_back(d);
  }
  return array;
}

}  // namespace kuiper
