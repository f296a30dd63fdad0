// Reader of the PNNX weights (.pnnx.bin): a zip archive with one entry
// "<operator name>.<attribute name>" per attribute, holding its raw
// little-endian data. PNNX itself writes stored (uncompressed) entries with
// zip64 records; older PNNX and Python's zipfile write plain zip; a user may
// recompress with deflate. libzip reads all of them, so we do not parse zip
// structures ourselves.
#include <fmt/format.h>
#include <zip.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "kuiper/error.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/pnnx.hpp"
#include "pnnx_internal.hpp"

namespace kuiper::pnnx {
namespace {

// Read-only archives are discarded, not closed: zip_close would try to write
// back changes, and there are none.
struct ZipDiscard {
  void operator()(zip_t* zip) const { zip_discard(zip); }
};
struct ZipFileClose {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipDiscard>;
using ZipEntry = std::unique_ptr<zip_file_t, ZipFileClose>;

std::string ZipErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

[[noreturn]] void FailOpen(const std::string& name, const std::string& reason) {
  throw ParseError(fmt::format("{}: cannot open PNNX bin file as a zip archive: {}", name, reason));
}

ZipArchive OpenZip(const std::string& path) {
  int code = 0;
  // ZIP_CHECKCONS compares every local header with the central directory,
  // so a damaged or truncated archive fails here rather than half-way.
  ZipArchive zip(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!zip) FailOpen(path, ZipErrorText(code));
  return zip;
}

// The archive in `bytes`, which must outlive it.
ZipArchive OpenZip(std::string_view bytes, const std::string& name) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  // On success the archive owns the source; on failure it is still ours to free.
  zip_t* zip = source ? zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error) : nullptr;
  if (!zip) {
    zip_source_free(source);
    const std::string reason = zip_error_strerror(&error);
    zip_error_fini(&error);
    FailOpen(name, reason);
  }
  zip_error_fini(&error);
  return ZipArchive(zip);
}

// Reads exactly `size` bytes of entry `index`. The buffer grows as bytes
// arrive instead of being allocated up front, so an entry whose header claims
// a huge size cannot make us allocate more than it really holds.
std::vector<char> ReadEntry(zip_t* zip, zip_uint64_t index, uint64_t size,
                            const std::string& where) {
  ZipEntry file(zip_fopen_index(zip, index, 0));
  if (!file) throw ParseError(fmt::format("{}: cannot open: {}", where, zip_strerror(zip)));
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  std::vector<char> data;
  while (data.size() < size) {
    const size_t start = data.size();
    const uint64_t want = std::min(kChunk, size - start);
    data.resize(start + want);
    const zip_int64_t got = zip_fread(file.get(), data.data() + start, want);
    if (got < 0) {
      throw ParseError(fmt::format("{}: cannot read: {}", where, zip_file_strerror(file.get())));
    }
    if (static_cast<uint64_t>(got) != want) {
      throw ParseError(fmt::format("{}: data ends after {} of {} bytes", where, start + got, size));
    }
  }
  // libzip verifies the CRC only once a read reaches the end of the entry.
  char extra = 0;
  const zip_int64_t got = zip_fread(file.get(), &extra, 1);
  if (got < 0) {
    throw ParseError(fmt::format("{}: cannot read: {}", where, zip_file_strerror(file.get())));
  }
  if (got != 0) throw ParseError(fmt::format("{}: holds more than {} bytes", where, size));
  return data;
}

// Adds the attribute's size to `weight_bytes` (what the attributes before it
// take) and checks the sum against the memory limit before reading anything.
std::vector<char> LoadAttribute(zip_t* zip, const std::string& entry, const std::string& where,
                                const Attribute& attr, uint64_t& weight_bytes) {
  const std::optional<uint64_t> count = internal::ElementCount(attr.shape);
  if (!count || attr.type == DataType::kNull) {
    throw ParseError(
        fmt::format("{}: cannot hold {}: a data type and at most 2^31 elements are "
                    "expected",
                    where, internal::ShapeText(attr.shape, attr.type)));
  }
  const uint64_t size = *count * DataTypeSize(attr.type);
  weight_bytes += size;
  CheckMemory(weight_bytes, fmt::format("{}: the weights up to this entry", where));
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat(zip, entry.c_str(), 0, &stat) != 0) {
    throw ParseError(fmt::format("{}: missing from the archive", where));
  }
  if ((stat.valid & ZIP_STAT_SIZE) == 0 || stat.size != size) {
    throw ParseError(fmt::format("{}: holds {} bytes, but {} needs {}", where, stat.size,
                                 internal::ShapeText(attr.shape, attr.type), size));
  }
  return ReadEntry(zip, stat.index, size, where);
}

// Read everything first and fill the graph last, so a failed load leaves
// the graph as it was.
void ReadAttributes(Graph& graph, zip_t* zip, const std::string& bin_path) {
  std::vector<std::vector<char>> loaded;
  uint64_t weight_bytes = 0;
  for (const Operator& op : graph.operators) {
    for (const auto& [key, attr] : op.attrs) {
      const std::string entry = op.name + "." + key;
      const std::string where =
          fmt::format("{}: entry '{}' (attribute @{} of operator '{}' on param line {})", bin_path,
                      entry, key, op.name, op.line);
      loaded.push_back(LoadAttribute(zip, entry, where, attr, weight_bytes));
    }
  }
  size_t next = 0;
  for (Operator& op : graph.operators) {
    for (auto& [key, attr] : op.attrs) attr.data = std::move(loaded[next++]);
  }
}

}  // namespace

void LoadBin(Graph& graph, const std::string& bin_path) {
  ReadAttributes(graph, OpenZip(bin_path).get(), bin_path);
}

void ParseBin(Graph& graph, std::string_view bytes, const std::string& name) {
  ReadAttributes(graph, OpenZip(bytes, name).get(), name);
}

Graph Load(const std::string& param_path, const std::string& bin_path) {
  Graph graph = LoadParam(param_path);
  LoadBin(graph, bin_path);
  return graph;
}

}  // namespace kuiper::pnnx
