// msame's model inputs and outputs as files: element types, reading an input
// file (.npy or raw) into the bytes a model input takes, and writing an output
// as .npy, raw binary or text.
//
// The device layout is the model's: 4-bit types (ACL_INT4, ACL_FLOAT4_E2M1)
// packed two elements per byte, element 0 in the low nibble. A .npy file holds
// them as ml_dtypes does, one element per byte, so they are packed on the way
// in and unpacked on the way out. Types AscendCL has no code for (the model
// reports ACL_DT_UNDEFINED) travel as raw bytes only (.bin), checked by size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "npy.h"

namespace msame {

// What msame knows of an element type.
struct ElemType {
  aclDataType acl;
  const char* name;  // numpy's or ml_dtypes' name: "float32", "bfloat16", "int4", ...
  int bits;          // bits per element in device memory
  const char* npy;   // the .npy descr msame writes; nullptr: no .npy form
};
// nullptr for ACL_DT_UNDEFINED and types msame has no entry for.
const ElemType* FindElemType(aclDataType t);
// "float32", ..., or "aclDataType <n>" / "a type without an AscendCL code".
std::string ElemTypeName(aclDataType t);
// Bytes `dims` elements of `t` take in device memory (4-bit types packed);
// -1 when a dim is negative or the type is unknown.
int64_t TensorBytes(aclDataType t, const std::vector<int64_t>& dims);

// One model input or output as msame handles it.
struct Tensor {
  std::string name;
  aclDataType dtype = ACL_DT_UNDEFINED;
  std::vector<int64_t> dims;   // the model's; with the run's shape once known
  size_t bytes = 0;            // buffer size
  size_t data_bytes = 0;       // bytes of this run's data (less than `bytes` at a smaller gear)
  bool allocate_in_run = false;  // output whose buffer aclmdlExecute allocates
  void* dev = nullptr;
  aclDataBuffer* buf = nullptr;
};

// An input file as read: a .npy array, or raw bytes.
struct InputFile {
  std::string path;
  bool is_npy = false;
  NpyArray npy;
  std::vector<uint8_t> raw;
};

// Reads `path` (.npy by its extension, else raw bytes). Returns "" or a message.
std::string ReadInputFile(const std::string& path, InputFile* out);
// Checks `f` against model input `t` (dtype and shape for .npy, byte size
// always) and gives the bytes to copy to the device. Returns "" or a message
// naming the input, the file and what was expected.
std::string InputBytes(const InputFile& f, size_t index, const Tensor& t, std::vector<uint8_t>* bytes);

// Writes output `t` (its data in `host`) to `stem_path` + ".npy" / ".bin" /
// ".txt" by `outfmt`; a type without a .npy form is written as .bin with a
// warning. Prints where it went. Returns false (message printed) on failure.
bool SaveOutput(const std::string& outfmt, const std::string& stem_path, size_t index, const Tensor& t,
                const std::vector<uint8_t>& host);

std::string ShapeString(const std::vector<int64_t>& dims);

}  // namespace msame
