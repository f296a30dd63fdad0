#include "model_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kuiper/error.hpp"
#include "postprocess.hpp"

namespace kuiper::app {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kParamSuffix = ".pnnx.param";

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ModelFiles FromParam(const fs::path& param) {
  const std::string file = param.filename().string();
  ModelFiles files;
  files.name = file.substr(0, file.size() - kParamSuffix.size());
  files.dir = param.parent_path().empty() ? "." : param.parent_path().string();
  files.param = param.string();
  files.bin = (param.parent_path() / (files.name + ".pnnx.bin")).string();
  return files;
}

bool StartsWith(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// The folder of a generated model, and whether its graph and weights are there.
ModelFiles Generated(const std::string& name) {
  return FromParam(fs::path(ModelsRoot()) / name / (name + std::string(kParamSuffix)));
}

bool Complete(const ModelFiles& files) {
  return fs::is_regular_file(files.param) && fs::is_regular_file(files.bin);
}

}  // namespace

const char* CommandMaking(const std::string& name) {
  return StartsWith(name, "shapes_") ? kTrainShapesCommand : kMakeModelsCommand;
}

std::string ModelsRoot() {
  const char* env = std::getenv("KUIPER_MODELS");
  if (env != nullptr && *env != '\0') return env;
  return std::string(KUIPER_SOURCE_DIR) + "/build/models";
}

ModelFiles ResolveModel(const std::string& model, bool need_bin) {
  if (model.empty()) throw Error("no model given");
  const fs::path path(model);
  ModelFiles files;
  const bool generated = model.find('/') == std::string::npos && !fs::exists(path);
  if (generated) {
    files = Generated(model);
  } else if (fs::is_directory(path)) {
    // "models/resnet18/" normalises to ".../resnet18/" whose filename is empty.
    fs::path folder = fs::absolute(path).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path();
    const std::string name = folder.filename().string();
    files = FromParam(path / (name + std::string(kParamSuffix)));
  } else if (EndsWith(model, kParamSuffix)) {
    files = FromParam(path);
  } else if (EndsWith(model, ".onnx")) {
    if (!fs::is_regular_file(path))
      throw Error(fmt::format("model file '{}' does not exist", model));
    files.name = path.stem().string();
    files.dir = path.parent_path().empty() ? "." : path.parent_path().string();
    files.onnx = model;
    return files;
  } else {
    throw Error(fmt::format(
        "model '{}' is not a .pnnx.param or .onnx file, a model directory or a model name "
        "(resnet18, yolov5s)",
        model));
  }
  const char* missing = !fs::is_regular_file(files.param)             ? "param"
                        : need_bin && !fs::is_regular_file(files.bin) ? "bin"
                                                                      : nullptr;
  if (missing == nullptr) return files;
  const std::string& file = missing == std::string("param") ? files.param : files.bin;
  if (generated) {
    throw Error(fmt::format(
        "model '{}' is not generated yet ({} is missing): run `{}` in {} (or set KUIPER_MODELS "
        "to the folder holding {}/)",
        model, file, CommandMaking(model), KUIPER_SOURCE_DIR, model));
  }
  throw Error(fmt::format("model file '{}' does not exist", file));
}

ModelFiles ResolveModelOr(const std::string& model, const std::vector<std::string>& defaults) {
  if (!model.empty()) return ResolveModel(model);
  std::vector<std::string> missing;
  for (const std::string& name : defaults) {
    const ModelFiles files = Generated(name);
    if (Complete(files)) return files;
    missing.push_back(fmt::format("{} (`{}`)", name, CommandMaking(name)));
  }
  throw Error(fmt::format(
      "no default model in {}: make one of {} in {} (or set KUIPER_MODELS, or pass --model)",
      ModelsRoot(), fmt::join(missing, ", "), KUIPER_SOURCE_DIR));
}

std::string WeightsNote(const ModelFiles& files) {
  std::ifstream about(files.dir + "/about.txt");
  std::string line;
  if (about && std::getline(about, line) && !line.empty()) {
    return fmt::format("model: {}, {}", files.name, line);
  }
  return fmt::format(
      "note: {} has the seeded random weights of tools/make_models.py, not pretrained ones "
      "(unless you exported it with --checkpoint): the labels are arbitrary",
      files.name);
}

std::vector<std::string> LabelsBeside(const ModelFiles& files, const std::string& fallback) {
  for (const std::string& file : {std::string("classes.txt"), fallback}) {
    const std::string path = files.dir + "/" + file;
    if (fs::exists(path)) return LoadLabels(path);
  }
  return {};
}

}  // namespace kuiper::app
