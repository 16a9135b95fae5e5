// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Layout: the magic "\x93NUMPY", one byte major and one byte minor version, the
// header length (little-endian uint16 for 1.x, uint32 for 2.x/3.x), then an
// ASCII (3.x: UTF-8) Python dict literal with the keys 'descr', 'fortran_order'
// and 'shape', padded with spaces and a final '\n' so the data starts at a
// multiple of 64 bytes, then the raw array bytes in C order.
//
// Only little-endian (or byte-sized) simple dtypes in C order are accepted;
// anything else is refused with a message saying why. Besides numpy's own
// numeric kinds, the dtypes numpy writes for ml_dtypes arrays are read: their
// names ('bfloat16', 'float8_e4m3fn', 'int4', ...), the raw-bytes form
// '<V2' / '|V1' (what np.save writes for most of them) and '<f1' (what it
// writes for float8_e5m2); which type a raw form holds is the model's to say.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace msame {

struct NpyArray {
  // 'f' float, 'i' signed, 'u' unsigned, 'b' bool, 'V' raw bytes, 'n' a named
  // (ml_dtypes) type, whose name is `name`
  char kind = 0;
  size_t item_size = 0;  // bytes per element in the file
  std::string name;      // kind 'n': "bfloat16", "float8_e4m3fn", "int4", ...
  std::string descr;     // as the header writes it
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  // "float32", "int64", "bool", "bfloat16", "raw 2-byte elements ('<V2')", ...
  std::string TypeName() const;
  size_t NumElements() const;
};

// Returns "" on success, else a message naming the file and the problem.
std::string ReadNpy(const std::string& path, NpyArray* out);
std::string ParseNpy(const std::string& path, const std::vector<uint8_t>& bytes, NpyArray* out);
// Writes a version 1.0 file (2.0 if the header would not fit) whose header
// holds `descr` ("<f4", "|b1", "bfloat16", ...) as the dtype.
std::string WriteNpy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
                     const void* data, size_t bytes);

// Name of a numpy kind and size ("float32"); `kind` 'f', 'i', 'u' or 'b'.
std::string TypeName(char kind, size_t item_size);
// Element bytes of an ml_dtypes type name ('bfloat16': 2, 'int4': 1, ...); 0
// for a name that is not one.
size_t NamedTypeSize(const std::string& name);

}  // namespace msame
