#include "llm/model/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <set>

namespace oc::llm {

namespace fs = std::filesystem;

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

Expected<nlohmann::json> ReadJson(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return IoError("cannot open ", p.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return InvalidFile(p.string(), ": not valid JSON: ", e.what());
  }
}

}  // namespace

Expected<std::unique_ptr<Checkpoint>> Checkpoint::Open(const std::string& dir) {
  auto ck = std::unique_ptr<Checkpoint>(new Checkpoint());
  ck->dir_ = dir;
  const fs::path root(dir);
  std::error_code ec;
  if (fs::is_regular_file(root, ec) && root.extension() == ".gguf") {
    OC_RETURN_IF_ERROR(ck->OpenGguf(dir));
    return ck;
  }
  if (!fs::is_directory(root))
    return NotFound("model folder ", dir, " does not exist or is not a folder (or a .gguf file)");
  if (!fs::exists(root / "config.json")) {
    std::vector<std::string> ggufs;
    for (const auto& e : fs::directory_iterator(root, ec))
      if (e.is_regular_file() && e.path().extension() == ".gguf") ggufs.push_back(e.path().string());
    if (ggufs.size() == 1) {
      OC_RETURN_IF_ERROR(ck->OpenGguf(ggufs[0]));
      return ck;
    }
    if (ggufs.size() > 1)
      return InvalidArgument(dir, ": holds ", ggufs.size(), " .gguf files and no config.json; give the file's path");
    return NotFound(dir, ": no config.json (expected a Hugging Face model folder) and no .gguf file");
  }
  OC_ASSIGN_OR_RETURN(ck->config_, ReadJson(root / "config.json"));
  if (!ck->config_.is_object()) return InvalidFile((root / "config.json").string(), ": expected a JSON object");

  std::vector<std::string> files;
  std::map<std::string, std::string> weight_map;  // tensor -> file, for sharded checkpoints
  if (fs::exists(root / "model.safetensors")) {
    files.push_back("model.safetensors");
  } else if (fs::exists(root / "model.safetensors.index.json")) {
    const std::string ip = (root / "model.safetensors.index.json").string();
    OC_ASSIGN_OR_RETURN(auto index, ReadJson(ip));
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
      return InvalidFile(ip, ": expected an object with a \"weight_map\" object");
    std::set<std::string> seen;
    for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
      if (!it.value().is_string()) return InvalidFile(ip, ": weight_map[\"", it.key(), "\"] is not a file name");
      std::string f = it.value().get<std::string>();
      if (f.empty() || f.find('/') != std::string::npos || f == "." || f == "..")
        return InvalidFile(ip, ": weight_map[\"", it.key(), "\"] = \"", f,
                           "\" is not a file name inside the model folder");
      weight_map[it.key()] = f;
      if (seen.insert(f).second) files.push_back(f);
    }
  } else if (fs::exists(root / "pytorch_model.bin")) {
    return NotSupported(dir,
                        ": pytorch_model.bin (pickle) checkpoints are not supported; save with "
                        "safe_serialization=True (model.safetensors)");
  } else {
    return NotFound(dir, ": no model.safetensors or model.safetensors.index.json");
  }
  for (const auto& f : files) {
    OC_ASSIGN_OR_RETURN(auto sf, SafetensorsFile::Open((root / f).string()));
    for (const auto& [name, t] : sf->tensors()) {
      if (!weight_map.empty()) {
        auto w = weight_map.find(name);
        if (w == weight_map.end() || w->second != f) continue;  // the index names another shard
      }
      if (ck->tensors_.count(name))
        return InvalidFile(sf->path(), ": tensor '", name, "' is also in ", *ck->tensors_[name]->file);
      ck->tensors_[name] = &t;
    }
    ck->files_.push_back(std::move(sf));
  }
  for (const auto& [name, f] : weight_map)
    if (!ck->tensors_.count(name))
      return InvalidFile((root / f).string(), ": tensor '", name,
                         "' listed in model.safetensors.index.json is not in that file");
  return ck;
}

Expected<std::vector<float>> Checkpoint::Read(const std::string& name, const std::vector<int64_t>& shape) const {
  if (gguf_) return ReadGguf(name, shape);
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return NotFound(dir_, ": tensor '", name, "' (shape ", ShapeString(shape), ") is missing");
  const TensorRef& t = *it->second;
  if (t.shape != shape)
    return InvalidFile(*t.file, ": tensor '", name, "' has shape ", ShapeString(t.shape), ", expected ",
                       ShapeString(shape), " from config.json");
  std::vector<float> out(static_cast<size_t>(t.numel()));
  ConvertToFloat(t, out.data());
  return out;
}

}  // namespace oc::llm
