#include "llm/model/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "ops/cpu/common/cast_util.h"

namespace oc::llm {

namespace {

struct TypeInfo {
  uint32_t id;
  const char* name;
  int64_t block;   // elements a block
  int64_t bytes;   // bytes a block
};

// Block sizes of the GGML types (ggml's type traits, as the GGUF spec lists them).
constexpr TypeInfo kTypes[] = {
    {0, "F32", 1, 4},        {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},   {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},     {7, "Q5_1", 32, 24},    {8, "Q8_0", 32, 34},   {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},   {11, "Q3_K", 256, 110}, {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},  {15, "Q8_K", 256, 292}, {24, "I8", 1, 1},      {25, "I16", 1, 2},
    {26, "I32", 1, 4},       {27, "I64", 1, 8},      {28, "F64", 1, 8},     {30, "BF16", 1, 2},
};

const TypeInfo* FindType(uint32_t id) {
  for (const auto& t : kTypes)
    if (t.id == id) return &t;
  return nullptr;
}

constexpr uint32_t kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS

const char* ValueTypeName(uint32_t t) {
  static const char* kNames[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32", "float32",
                                 "bool",  "string", "array",  "uint64", "int64",  "float64"};
  return t < 13 ? kNames[t] : "unknown";
}

// A bounds-checked little-endian cursor over the file; errors name the field and its offset.
struct Cursor {
  std::span<const uint8_t> b;
  const std::string& file;
  uint64_t pos = 0;

  Status Need(uint64_t n, const std::string& what) const {
    if (n > b.size() || pos > b.size() - n)
      return InvalidFile(file, ": truncated: ", what, " at offset ", pos, " needs ", n, " bytes, the file has ",
                         b.size());
    return Status::Ok();
  }
  template <typename T>
  Expected<T> Get(const std::string& what) {
    OC_RETURN_IF_ERROR(Need(sizeof(T), what));
    T v;
    std::memcpy(&v, b.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  Expected<std::string> String(const std::string& what) {
    const uint64_t at = pos;
    OC_ASSIGN_OR_RETURN(uint64_t n, Get<uint64_t>(what + " (length)"));
    if (n > b.size() || pos > b.size() - n)
      return InvalidFile(file, ": ", what, " at offset ", at, " has length ", n, ", past the end of the file (",
                         b.size(), " bytes)");
    std::string s(reinterpret_cast<const char*>(b.data() + pos), static_cast<size_t>(n));
    pos += n;
    return s;
  }

  // A scalar or array value of `type`; arrays of arrays up to kMaxArrayDepth.
  Expected<nlohmann::json> Value(uint32_t type, const std::string& what, uint32_t depth, uint32_t* elem_type) {
    switch (type) {
      case 0: return Num<uint8_t>(what);
      case 1: return Num<int8_t>(what);
      case 2: return Num<uint16_t>(what);
      case 3: return Num<int16_t>(what);
      case 4: return Num<uint32_t>(what);
      case 5: return Num<int32_t>(what);
      case 6: return Num<float>(what);
      case 10: return Num<uint64_t>(what);
      case 11: return Num<int64_t>(what);
      case 12: return Num<double>(what);
      case 7: {
        const uint64_t at = pos;
        OC_ASSIGN_OR_RETURN(uint8_t v, Get<uint8_t>(what));
        if (v > 1) return InvalidFile(file, ": ", what, " at offset ", at, " is a bool of value ", int{v}, " (expected 0 or 1)");
        return nlohmann::json(v == 1);
      }
      case 8: {
        OC_ASSIGN_OR_RETURN(std::string s, String(what));
        return nlohmann::json(std::move(s));
      }
      case 9: {
        const uint64_t at = pos;
        if (depth >= kMaxArrayDepth)
          return InvalidFile(file, ": ", what, " at offset ", at, ": arrays nested deeper than ", kMaxArrayDepth);
        OC_ASSIGN_OR_RETURN(uint32_t et, Get<uint32_t>(what + " (array element type)"));
        if (et > 12)
          return InvalidFile(file, ": ", what, " at offset ", at, ": array element type ", et,
                             " is not a GGUF value type (0..12)");
        if (elem_type) *elem_type = et;
        OC_ASSIGN_OR_RETURN(uint64_t n, Get<uint64_t>(what + " (array length)"));
        // Every element takes at least one byte: a count past the file is refused before any work.
        if (n > b.size() - pos)
          return InvalidFile(file, ": ", what, " at offset ", at, " has ", n, " elements of type ", ValueTypeName(et),
                             ", more than the rest of the file can hold (", b.size() - pos, " bytes)");
        nlohmann::json arr = nlohmann::json::array();
        for (uint64_t i = 0; i < n; ++i) {
          OC_ASSIGN_OR_RETURN(nlohmann::json v, Value(et, what + "[" + std::to_string(i) + "]", depth + 1, nullptr));
          arr.push_back(std::move(v));
        }
        return arr;
      }
      default:
        return InvalidFile(file, ": ", what, " at offset ", pos - 4, " has value type ", type,
                           ", which is not a GGUF value type (0..12)");
    }
  }
  template <typename T>
  Expected<nlohmann::json> Num(const std::string& what) {
    OC_ASSIGN_OR_RETURN(T v, Get<T>(what));
    return nlohmann::json(v);
  }
};

uint16_t Load16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return h;
}

}  // namespace

std::string GgmlTypeName(uint32_t type) {
  const TypeInfo* t = FindType(type);
  return t ? t->name : "type " + std::to_string(type);
}

bool GgmlTypeSupported(uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32: case GgmlType::kF16: case GgmlType::kBF16: case GgmlType::kQ8_0: case GgmlType::kQ4_0:
      return true;
    default:
      return false;
  }
}

int64_t GgufTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const GgufValue* GgufFile::Find(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

const GgufTensor* GgufFile::Tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

Expected<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  OC_ASSIGN_OR_RETURN(auto mapped, MappedFile::Open(path));
  const auto bytes = mapped->bytes();
  OC_ASSIGN_OR_RETURN(auto g, Parse(bytes, path));
  g->file_ = std::move(mapped);
  return g;
}

Expected<std::unique_ptr<GgufFile>> GgufFile::Parse(std::span<const uint8_t> bytes, const std::string& name) {
  auto g = std::unique_ptr<GgufFile>(new GgufFile());
  g->name_ = name;
  Cursor c{bytes, g->name_};
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "GGUF", 4) != 0)
    return InvalidFile(name, ": not a GGUF file (the first 4 bytes are not \"GGUF\")");
  c.pos = 4;
  OC_ASSIGN_OR_RETURN(g->version_, c.Get<uint32_t>("version"));
  if (g->version_ != 2 && g->version_ != 3)
    return NotSupported(name, ": GGUF version ", g->version_, " is not supported (2 and 3)");
  OC_ASSIGN_OR_RETURN(uint64_t n_tensors, c.Get<uint64_t>("tensor_count"));
  OC_ASSIGN_OR_RETURN(uint64_t n_kv, c.Get<uint64_t>("metadata_kv_count"));
  // A key/value takes at least 13 bytes, a tensor info at least 24.
  if (n_kv > bytes.size() / 13 || n_tensors > bytes.size() / 24)
    return InvalidFile(name, ": ", n_kv, " metadata entries and ", n_tensors,
                       " tensors cannot fit in a file of ", bytes.size(), " bytes");
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t at = c.pos;
    OC_ASSIGN_OR_RETURN(std::string key, c.String("metadata key #" + std::to_string(i)));
    OC_ASSIGN_OR_RETURN(uint32_t type, c.Get<uint32_t>("value type of " + key));
    GgufValue v;
    uint32_t et = 0;
    OC_ASSIGN_OR_RETURN(v.value, c.Value(type, "metadata " + key, 0, &et));
    v.type = static_cast<GgufValueType>(type);
    v.elem_type = static_cast<GgufValueType>(et);
    if (g->kv_.count(key)) return InvalidFile(name, ": metadata key ", key, " at offset ", at, " appears twice");
    g->kv_.emplace(std::move(key), std::move(v));
  }
  if (const GgufValue* a = g->Find("general.alignment")) {
    if (a->type != GgufValueType::kU32)
      return InvalidFile(name, ": general.alignment has type ", ValueTypeName(static_cast<uint32_t>(a->type)),
                         ", expected uint32");
    const uint64_t al = a->value.get<uint64_t>();
    if (al == 0 || (al & (al - 1)) != 0)
      return InvalidFile(name, ": general.alignment ", al, " is not a power of two");
    g->alignment_ = al;
  }
  std::vector<std::pair<uint64_t, uint64_t>> info_at;  // (offset of the info, bytes)
  std::vector<GgufTensor> infos;
  std::set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensor t;
    const uint64_t at = c.pos;
    OC_ASSIGN_OR_RETURN(t.name, c.String("tensor info #" + std::to_string(i) + " (name)"));
    const std::string what = "tensor " + t.name;
    OC_ASSIGN_OR_RETURN(uint32_t nd, c.Get<uint32_t>(what + " (n_dims)"));
    if (nd == 0 || nd > kMaxDims)
      return InvalidFile(name, ": ", what, " at offset ", at, " has ", nd, " dimensions (expected 1..", kMaxDims, ")");
    uint64_t numel = 1;
    for (uint32_t d = 0; d < nd; ++d) {
      OC_ASSIGN_OR_RETURN(uint64_t dim, c.Get<uint64_t>(what + " (dims)"));
      if (dim == 0 || dim > (uint64_t{1} << 62) / numel)
        return InvalidFile(name, ": ", what, " at offset ", at, ": dimension ", d, " is ", dim,
                           " (expected >= 1, element count below 2^62)");
      numel *= dim;
      t.dims.push_back(static_cast<int64_t>(dim));
    }
    OC_ASSIGN_OR_RETURN(t.type, c.Get<uint32_t>(what + " (type)"));
    const TypeInfo* ti = FindType(t.type);
    if (!ti)
      return NotSupported(name, ": ", what, " at offset ", at, " has GGML type ", t.type,
                          ", which is not supported (F32, F16, BF16, Q8_0, Q4_0)");
    if (t.dims[0] % ti->block != 0)
      return InvalidFile(name, ": ", what, " has type ", ti->name, " (blocks of ", ti->block, ") but its first dimension ",
                         t.dims[0], " is not a multiple of ", ti->block);
    OC_ASSIGN_OR_RETURN(t.offset, c.Get<uint64_t>(what + " (offset)"));
    if (t.offset % g->alignment_ != 0)
      return InvalidFile(name, ": ", what, " has data offset ", t.offset, ", not a multiple of the alignment ",
                         g->alignment_);
    if (!names.insert(t.name).second)
      return InvalidFile(name, ": ", what, " at offset ", at, " appears twice");
    info_at.push_back({at, numel / static_cast<uint64_t>(ti->block) * static_cast<uint64_t>(ti->bytes)});
    infos.push_back(std::move(t));
  }
  const uint64_t end = c.pos;
  g->data_offset_ = (end + g->alignment_ - 1) / g->alignment_ * g->alignment_;
  if (g->data_offset_ < end || g->data_offset_ > bytes.size()) {
    if (n_tensors == 0 && end <= bytes.size()) {
      g->data_offset_ = bytes.size();
    } else {
      return InvalidFile(name, ": truncated: the data section would start at offset ", g->data_offset_,
                         ", past the end of the file (", bytes.size(), " bytes)");
    }
  }
  const uint64_t data_size = bytes.size() - g->data_offset_;
  for (size_t i = 0; i < infos.size(); ++i) {
    GgufTensor& t = infos[i];
    const uint64_t nbytes = info_at[i].second;
    if (t.offset > data_size || nbytes > data_size - t.offset)
      return InvalidFile(name, ": tensor ", t.name, " (", GgmlTypeName(t.type), ", ", nbytes,
                         " bytes) at data offset ", t.offset, " ends past the end of the file (data section of ",
                         data_size, " bytes from offset ", g->data_offset_, ")");
    t.data = bytes.subspan(static_cast<size_t>(g->data_offset_ + t.offset), static_cast<size_t>(nbytes));
    t.offset += g->data_offset_;
    std::string key = t.name;
    g->tensors_.emplace(std::move(key), std::move(t));
  }
  return g;
}

Status DequantizeGguf(const GgufTensor& t, float* dst) {
  const int64_t n = t.numel();
  const uint8_t* p = t.data.data();
  switch (static_cast<GgmlType>(t.type)) {
    case GgmlType::kF32:
      std::memcpy(dst, p, static_cast<size_t>(n) * 4);
      return Status::Ok();
    case GgmlType::kF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = ew::HalfToFloat(Load16(p + 2 * i));
      return Status::Ok();
    case GgmlType::kBF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = ew::BFloat16ToFloat(Load16(p + 2 * i));
      return Status::Ok();
    case GgmlType::kQ8_0:
      for (int64_t b = 0; b < n / 32; ++b, p += 34) {
        const float d = ew::HalfToFloat(Load16(p));
        for (int j = 0; j < 32; ++j) dst[b * 32 + j] = static_cast<float>(static_cast<int8_t>(p[2 + j])) * d;
      }
      return Status::Ok();
    case GgmlType::kQ4_0:
      for (int64_t b = 0; b < n / 32; ++b, p += 18) {
        const float d = ew::HalfToFloat(Load16(p));
        for (int j = 0; j < 16; ++j) {
          dst[b * 32 + j] = static_cast<float>((p[2 + j] & 0x0F) - 8) * d;
          dst[b * 32 + j + 16] = static_cast<float>((p[2 + j] >> 4) - 8) * d;
        }
      }
      return Status::Ok();
    default:
      return NotSupported("tensor ", t.name, " has type ", GgmlTypeName(t.type),
                          ", which is not supported (F32, F16, BF16, Q8_0, Q4_0)");
  }
}

}  // namespace oc::llm
