// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Layout: the magic "\x93NUMPY", one byte major and one byte minor version, the
// header length (little-endian uint16 for 1.x, uint32 for 2.x/3.x), then an
// ASCII (3.x: UTF-8) Python dict literal with the keys 'descr', 'fortran_order'
// and 'shape', padded with spaces and a final '\n' so the data starts at a
// multiple of 64 bytes, then the raw array bytes in C order.
//
// Only little-endian (or byte-sized) simple dtypes in C order are accepted;
// anything else is refused with a message saying why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace msame {

struct NpyArray {
  char kind = 0;         // 'f' float, 'i' signed, 'u' unsigned, 'b' bool
  size_t item_size = 0;  // bytes per element
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  // "float32", "int64", "bool", ...
  std::string TypeName() const;
  size_t NumElements() const;
};

// Returns "" on success, else a message naming the file and the problem.
std::string ReadNpy(const std::string& path, NpyArray* out);
std::string ParseNpy(const std::string& path, const std::vector<uint8_t>& bytes, NpyArray* out);
// Writes a version 1.0 file (2.0 if the header would not fit).
std::string WriteNpy(const std::string& path, char kind, size_t item_size, const std::vector<int64_t>& shape,
                     const void* data, size_t bytes);

std::string TypeName(char kind, size_t item_size);

}  // namespace msame
