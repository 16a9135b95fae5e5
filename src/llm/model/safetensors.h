// Reading Hugging Face safetensors files, memory-mapped.
//
// File format (https://huggingface.co/docs/safetensors, the whole of it):
//   bytes [0, 8)        N, the header length, unsigned 64-bit little-endian
//   bytes [8, 8 + N)    a JSON object (UTF-8, may be padded with spaces):
//                         "<tensor name>": {"dtype": "F32" | "F16" | "BF16" | ...,
//                                           "shape": [d0, d1, ...],
//                                           "data_offsets": [begin, end]}
//                         "__metadata__": {string: string}   (optional)
//   bytes [8 + N, ...)  the data section; a tensor's bytes are
//                       [8 + N + begin, 8 + N + end), row-major, little-endian.
// Everything in the header is checked against the file before a byte of data
// is read: offsets inside the data section, end - begin equal to the element
// count times the dtype's size, non-negative dims without overflow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace oc::llm {

enum class TensorDtype { kF32, kF16, kBF16 };

const char* TensorDtypeName(TensorDtype d);
size_t TensorDtypeSize(TensorDtype d);

// A read-only memory mapping of a whole file; unmapped on destruction.
class MappedFile {
 public:
  static Expected<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

// One tensor of a safetensors file: its bytes point into the mapping.
struct TensorRef {
  std::string name;
  TensorDtype dtype = TensorDtype::kF32;
  std::vector<int64_t> shape;
  std::span<const uint8_t> data;
  const std::string* file = nullptr;  // the file it lives in (for messages)
  int64_t numel() const;
};

// The tensors of one safetensors file (the file stays mapped while this lives).
class SafetensorsFile {
 public:
  // Maps and validates `path`; errors name the file, the tensor and the field.
  static Expected<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);

  const std::map<std::string, TensorRef>& tensors() const { return tensors_; }
  const std::string& path() const { return file_->path(); }

 private:
  std::unique_ptr<MappedFile> file_;
  std::map<std::string, TensorRef> tensors_;
};

// Converts a tensor's elements to float32 (F16 / BF16 widened exactly).
void ConvertToFloat(const TensorRef& t, float* dst);

}  // namespace oc::llm
