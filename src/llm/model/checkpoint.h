// A Hugging Face checkpoint folder: config.json plus either model.safetensors
// or shards listed by model.safetensors.index.json ({"weight_map": {tensor:
// file}}). Every file is memory-mapped and validated when opened; tensors are
// read by name with the shape the architecture expects.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "llm/model/safetensors.h"

namespace oc::llm {

class Checkpoint {
 public:
  static Expected<std::unique_ptr<Checkpoint>> Open(const std::string& dir);

  const nlohmann::json& config() const { return config_; }
  const std::string& dir() const { return dir_; }
  bool Has(const std::string& name) const { return tensors_.count(name) != 0; }
  // The tensor converted to float32; errors name the tensor, the expected and the found shape.
  Expected<std::vector<float>> Read(const std::string& name, const std::vector<int64_t>& shape) const;
  // The dtype of the first tensor (what the checkpoint was saved in), for reports.
  const std::map<std::string, const TensorRef*>& tensors() const { return tensors_; }

 private:
  std::string dir_;
  nlohmann::json config_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorRef*> tensors_;
};

std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace oc::llm
