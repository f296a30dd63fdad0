// Errors the engine reports for bad input from outside (model files, shapes,
// expressions, arguments). Every message names where the problem is and what
// was expected, so the CLI can print it on one line and exit.
//
// This is the engine's one error channel: a layer's InferStatus (course 5)
// becomes a LayerError in RuntimeGraph::Forward, and the invariants of the
// layer registry throw LayerError too, so a caller catches kuiper::Error and
// nothing aborts the process.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kuiper {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}

  // Appends " (context)" to the message. Code that knows more about where an
  // error happened than the code that threw it (the graph knows which
  // operator was running) catches by reference, adds it and rethrows with
  // `throw;`, so the exception keeps its type: a ShapeError stays a ShapeError.
  void AddContext(const std::string& context);
};

// Thrown by a lab function whose TODO block the student has not filled in yet.
class NotImplemented : public Error {
 public:
  NotImplemented(const std::string& lab, const std::string& what, const std::string& file,
                 int line);
};

// A tensor or matrix whose shape does not fit the operation.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A file or text (PNNX param/bin, expression, .npy) that does not follow its format.
class ParseError : public Error {
 public:
  using Error::Error;
};

// A computation graph that cannot be ordered or connected (cycles, dangling operands).
class GraphError : public Error {
 public:
  using Error::Error;
};

// A layer that cannot be created or run (unknown type, bad parameters, failed status).
class LayerError : public Error {
 public:
  using Error::Error;
};

// An argument outside what a command accepts (--topk 0, --conf 2, ...): the
// CLI reports it as a usage error (exit 2) like the ones its parser finds.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A model or input whose declared shapes need more memory than the limit
// (kuiper/memory_limit.hpp), refused before anything is allocated for them.
class ResourceError : public Error {
 public:
  using Error::Error;
};

// How a message writes a shape, or any other tuple of ints it quotes (a
// kernel size, a list of axes): "(1,3,224,224)" for the shape 1 x 3 x 224 x
// 224, as PNNX's param file writes it. Every error message and
// log line of the engine, the importer and the CLI prints shapes with it, so
// they all read alike and a test can match the text.
std::string ShapeText(const std::vector<int>& shape);
std::string ShapeText(const std::vector<uint32_t>& shape);
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace kuiper

// Stands in for the body of a lab function until the student writes it.
#define KUIPER_TODO(lab, what) throw ::kuiper::NotImplemented((lab), (what), __FILE__, __LINE__)
