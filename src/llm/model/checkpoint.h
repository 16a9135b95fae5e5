// A Hugging Face checkpoint folder: config.json plus either model.safetensors
// or shards listed by model.safetensors.index.json ({"weight_map": {tensor:
// file}}). Every file is memory-mapped and validated when opened; tensors are
// read by name with the shape the architecture expects.
//
// Open also takes a GGUF file (a path ending in .gguf, or a folder without
// config.json holding exactly one .gguf): the config is synthesized from the
// GGUF metadata and the GGUF tensor names are mapped to the Hugging Face ones
// (gguf_checkpoint.cc; docs/llm.md "GGUF").
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "llm/model/gguf.h"
#include "llm/model/safetensors.h"

namespace oc::llm {

class Checkpoint {
 public:
  static Expected<std::unique_ptr<Checkpoint>> Open(const std::string& dir);

  const nlohmann::json& config() const { return config_; }
  const std::string& dir() const { return dir_; }
  bool Has(const std::string& name) const { return tensors_.count(name) != 0 || gguf_names_.count(name) != 0; }
  // The tensor converted to float32; errors name the tensor, the expected and the found shape.
  Expected<std::vector<float>> Read(const std::string& name, const std::vector<int64_t>& shape) const;
  // The dtype of the first tensor (what the checkpoint was saved in), for reports.
  // (Safetensors checkpoints only; empty for a GGUF file, see gguf().)
  const std::map<std::string, const TensorRef*>& tensors() const { return tensors_; }

  // The GGUF file this checkpoint was opened from, or null.
  const GgufFile* gguf() const { return gguf_.get(); }
  // A GGUF tensor's stored blocks under its Hugging Face name, for weight
  // paths that use Q8_0 / Q4_0 blocks directly: `rows` rows of `cols`
  // elements, each row `row_bytes` bytes of `type` (GgmlType); Hugging Face
  // row r is stored row row_order[r] (empty: the identity; llama's q/k rows
  // are stored permuted by the converter). rows x cols is the stored layout:
  // for gpt2's Conv1D weights ([in, out] in Hugging Face) that is [out, in].
  struct GgufRows {
    uint32_t type = 0;
    int64_t rows = 0, cols = 0;
    size_t row_bytes = 0;
    std::span<const uint8_t> data;
    std::vector<int64_t> row_order;
  };
  Expected<GgufRows> ReadGgufRows(const std::string& name, const std::vector<int64_t>& shape) const;

 private:
  std::string dir_;
  nlohmann::json config_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorRef*> tensors_;
  // GGUF: the Hugging Face name -> the stored tensor and, for llama's q/k, the
  // number of heads whose rows the converter interleaved (0: none).
  struct GgufName {
    const GgufTensor* t = nullptr;
    int64_t permute_heads = 0;
    bool transpose = false;  // gpt2 Conv1D weights: stored [out, in], read as [in, out]
  };
  std::unique_ptr<GgufFile> gguf_;
  std::map<std::string, GgufName> gguf_names_;
  Status OpenGguf(const std::string& path);
  Expected<std::vector<float>> ReadGguf(const std::string& name, const std::vector<int64_t>& shape) const;
  const GgufName* FindGguf(const std::string& name, const std::vector<int64_t>& shape, Status* err) const;
};

std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace oc::llm
