// Reading GGUF files (the llama.cpp / GGML model format), memory-mapped.
//
// Layout (GGUF v2 and v3; all integers little-endian):
//   "GGUF"  uint32 version  uint64 tensor_count  uint64 kv_count
//   kv_count x { string key, uint32 value_type, value }
//   tensor_count x { string name, uint32 n_dims, uint64 dims[n_dims] (dims[0]
//                    is the contiguous one), uint32 ggml_type, uint64 offset }
//   padding to `alignment` (general.alignment, default 32), then the data
//   section; a tensor's bytes start at data_offset + offset.
// A string is uint64 length + bytes; an array is uint32 element type + uint64
// count + elements (arrays may nest). Every count, length, offset and size is
// checked against the file before it is used: a truncated or corrupt file is an
// InvalidFile error naming the field and its offset, never a crash.
//
// Tensor data types read here: F32, F16, BF16, Q8_0 (blocks of 32: fp16 scale d
// + 32 int8 q, value q * d) and Q4_0 (blocks of 32: fp16 scale d + 16 bytes,
// element j < 16 the low nibble of byte j, element j >= 16 the high nibble of
// byte j - 16, value (q - 8) * d). Other GGML types are accepted in the file
// (their sizes are known) but refused by name when read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "llm/model/safetensors.h"

namespace oc::llm {

// GGML tensor type ids (the ones this reader knows the size of).
enum class GgmlType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ8_1 = 9,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kQ8_K = 15,
  kI8 = 24, kI16 = 25, kI32 = 26, kI64 = 27, kF64 = 28, kBF16 = 30,
};

// "F32", "Q4_K", ... or "type 99" for an id this reader does not know.
std::string GgmlTypeName(uint32_t type);
// Whether Dequantize reads this type (F32, F16, BF16, Q8_0, Q4_0).
bool GgmlTypeSupported(uint32_t type);

// GGUF metadata value types.
enum class GgufValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

struct GgufValue {
  GgufValueType type = GgufValueType::kU8;
  GgufValueType elem_type = GgufValueType::kU8;  // for arrays: the element type
  nlohmann::json value;  // numbers, bools, strings (raw bytes), arrays as JSON arrays
};

struct GgufTensor {
  std::string name;
  std::vector<int64_t> dims;  // GGUF order: dims[0] is contiguous (the reverse of a row-major shape)
  uint32_t type = 0;
  uint64_t offset = 0;        // absolute offset in the file
  std::span<const uint8_t> data;
  int64_t numel() const;
  // The row-major shape, as PyTorch / safetensors write it (dims reversed).
  std::vector<int64_t> shape() const { return {dims.rbegin(), dims.rend()}; }
};

class GgufFile {
 public:
  static Expected<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Parses bytes that outlive the result (no mapping); `name` is for messages.
  static Expected<std::unique_ptr<GgufFile>> Parse(std::span<const uint8_t> bytes, const std::string& name);

  const std::string& path() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  const std::map<std::string, GgufValue>& metadata() const { return kv_; }
  const GgufValue* Find(const std::string& key) const;
  const std::map<std::string, GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* Tensor(const std::string& name) const;

 private:
  std::unique_ptr<MappedFile> file_;
  std::string name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue> kv_;
  std::map<std::string, GgufTensor> tensors_;
};

// The tensor's elements as float32 (dst holds numel()); NotSupported naming
// the tensor and its type for types other than F32, F16, BF16, Q8_0, Q4_0.
Status DequantizeGguf(const GgufTensor& t, float* dst);

}  // namespace oc::llm
