#include "tensor_file.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <type_traits>

namespace msame {

namespace {

constexpr ElemType kTypes[] = {
    {ACL_FLOAT, "float32", 32, "<f4"},
    {ACL_FLOAT16, "float16", 16, "<f2"},
    {ACL_DOUBLE, "float64", 64, "<f8"},
    {ACL_INT8, "int8", 8, "|i1"},
    {ACL_INT16, "int16", 16, "<i2"},
    {ACL_INT32, "int32", 32, "<i4"},
    {ACL_INT64, "int64", 64, "<i8"},
    {ACL_UINT8, "uint8", 8, "|u1"},
    {ACL_UINT16, "uint16", 16, "<u2"},
    {ACL_UINT32, "uint32", 32, "<u4"},
    {ACL_UINT64, "uint64", 64, "<u8"},
    {ACL_BOOL, "bool", 8, "|b1"},
    // ml_dtypes' names: with `import ml_dtypes`, np.load gives these dtypes.
    {ACL_BF16, "bfloat16", 16, "bfloat16"},
    {ACL_FLOAT8_E4M3FN, "float8_e4m3fn", 8, "float8_e4m3fn"},
    {ACL_FLOAT8_E5M2, "float8_e5m2", 8, "float8_e5m2"},
    {ACL_FLOAT8_E8M0, "float8_e8m0fnu", 8, "float8_e8m0fnu"},
    {ACL_INT4, "int4", 4, "int4"},
    {ACL_FLOAT4_E2M1, "float4_e2m1fn", 4, "float4_e2m1fn"},
    {ACL_HIFLOAT8, "hifloat8", 8, nullptr},
};

bool IsStandard(const ElemType& e) { return e.npy && (e.npy[0] == '<' || e.npy[0] == '|'); }

// Whether .npy array `a` holds elements of `e`: numpy's kind and size for
// numpy's types; for the others their ml_dtypes name or the raw form numpy
// writes for them ('<V2', '|V1'; '<f1' for float8_e5m2), and for bfloat16 also
// uint16 (its raw bits, what msame took before numpy files could name it).
bool Holds(const NpyArray& a, const ElemType& e) {
  if (IsStandard(e)) return a.kind == e.npy[1] && a.item_size * 8 == static_cast<size_t>(e.bits);
  if (!e.npy) return false;
  if (a.kind == 'n') return a.name == e.npy;
  const size_t item = e.bits >= 8 ? static_cast<size_t>(e.bits) / 8 : 1;
  if (a.kind == 'V') return a.item_size == item;
  if (e.acl == ACL_FLOAT8_E5M2) return a.kind == 'f' && a.item_size == 1;
  if (e.acl == ACL_BF16) return a.kind == 'u' && a.item_size == 2;
  return false;
}

size_t Count(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d < 0 ? 0 : d);
  return n;
}

// One element per byte (the low 4 bits) -> two per byte, element 0 low.
std::vector<uint8_t> Pack4(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out((in.size() + 1) / 2, 0);
  for (size_t i = 0; i < in.size(); ++i) out[i / 2] |= static_cast<uint8_t>((in[i] & 0x0F) << (i % 2 ? 4 : 0));
  return out;
}

std::vector<uint8_t> Unpack4(const std::vector<uint8_t>& in, size_t count) {
  std::vector<uint8_t> out(count);
  for (size_t i = 0; i < count && i / 2 < in.size(); ++i) out[i] = (in[i / 2] >> (i % 2 ? 4 : 0)) & 0x0F;
  return out;
}

// A small float of `ebits` exponent and `mbits` mantissa bits (sign bit on top).
// `ieee`: the top exponent is infinity/NaN; else (the "fn" types) only the
// all-ones pattern is NaN, or (`no_special`) nothing is.
double MiniFloat(uint32_t v, int ebits, int mbits, bool ieee, bool no_special) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint32_t m = v & ((1u << mbits) - 1), e = (v >> mbits) & ((1u << ebits) - 1);
  const bool neg = (v >> (ebits + mbits)) & 1;
  const uint32_t emax = (1u << ebits) - 1;
  double r;
  if (ieee && e == emax) r = m ? std::nan("") : INFINITY;
  else if (!ieee && !no_special && e == emax && m == (1u << mbits) - 1) r = std::nan("");
  else if (e == 0) r = std::ldexp(static_cast<double>(m), 1 - bias - mbits);
  else r = std::ldexp(static_cast<double>(m | (1u << mbits)), static_cast<int>(e) - bias - mbits);
  return neg ? -r : r;
}

// Element `i` of a non-numpy float type as a double.
double LowPrecisionValue(aclDataType t, const uint8_t* p, size_t i) {
  switch (t) {
    case ACL_BF16: {
      uint16_t b;
      std::memcpy(&b, p + 2 * i, 2);
      uint32_t w = static_cast<uint32_t>(b) << 16;
      float f;
      std::memcpy(&f, &w, 4);
      return f;
    }
    case ACL_FLOAT8_E4M3FN: return MiniFloat(p[i], 4, 3, false, false);
    case ACL_FLOAT8_E5M2: return MiniFloat(p[i], 5, 2, true, false);
    case ACL_FLOAT8_E8M0: return p[i] == 0xFF ? std::nan("") : std::ldexp(1.0, static_cast<int>(p[i]) - 127);
    case ACL_FLOAT4_E2M1: return MiniFloat((p[i / 2] >> (i % 2 ? 4 : 0)) & 0x0F, 2, 1, false, true);
    default: return 0;
  }
}

template <typename T>
void PrintValues(FILE* f, const uint8_t* p, size_t n, size_t row) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    if constexpr (std::is_floating_point_v<T>) std::fprintf(f, "%.9g", static_cast<double>(v));
    else if constexpr (std::is_signed_v<T>) std::fprintf(f, "%" PRId64, static_cast<int64_t>(v));
    else std::fprintf(f, "%" PRIu64, static_cast<uint64_t>(v));
    std::fputc((i + 1) % row == 0 ? '\n' : ' ', f);
  }
}

bool WriteText(const std::string& path, const Tensor& t, const std::vector<uint8_t>& host) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  size_t row = t.dims.empty() || t.dims.back() <= 0 ? 1 : static_cast<size_t>(t.dims.back());
  const uint8_t* p = host.data();
  const size_t count = std::min(Count(t.dims), host.size() * 2);
  switch (t.dtype) {
    case ACL_FLOAT: PrintValues<float>(f, p, host.size() / 4, row); break;
    case ACL_DOUBLE: PrintValues<double>(f, p, host.size() / 8, row); break;
    case ACL_FLOAT16: {
      for (size_t i = 0; i < host.size() / 2; ++i) {
        aclFloat16 h;
        std::memcpy(&h, p + 2 * i, 2);
        std::fprintf(f, "%.6g%c", static_cast<double>(aclFloat16ToFloat(h)), (i + 1) % row == 0 ? '\n' : ' ');
      }
      break;
    }
    case ACL_BF16:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E8M0:
    case ACL_FLOAT4_E2M1: {
      const size_t n = t.dtype == ACL_BF16 ? host.size() / 2 : t.dtype == ACL_FLOAT4_E2M1 ? count : host.size();
      for (size_t i = 0; i < n; ++i)
        std::fprintf(f, "%.9g%c", LowPrecisionValue(t.dtype, p, i), (i + 1) % row == 0 ? '\n' : ' ');
      break;
    }
    case ACL_INT4:
      for (size_t i = 0; i < count; ++i) {
        const int v = (p[i / 2] >> (i % 2 ? 4 : 0)) & 0x0F;
        std::fprintf(f, "%d%c", v >= 8 ? v - 16 : v, (i + 1) % row == 0 ? '\n' : ' ');
      }
      break;
    case ACL_INT8: PrintValues<int8_t>(f, p, host.size(), row); break;
    case ACL_INT16: PrintValues<int16_t>(f, p, host.size() / 2, row); break;
    case ACL_INT32: PrintValues<int32_t>(f, p, host.size() / 4, row); break;
    case ACL_INT64: PrintValues<int64_t>(f, p, host.size() / 8, row); break;
    case ACL_UINT16: PrintValues<uint16_t>(f, p, host.size() / 2, row); break;
    case ACL_UINT32: PrintValues<uint32_t>(f, p, host.size() / 4, row); break;
    case ACL_UINT64: PrintValues<uint64_t>(f, p, host.size() / 8, row); break;
    default: PrintValues<uint8_t>(f, p, host.size(), row); break;  // bool, uint8, raw bytes
  }
  return std::fclose(f) == 0;
}

bool WriteBinary(const std::string& path, const std::vector<uint8_t>& host) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(host.data()), static_cast<std::streamsize>(host.size()));
  return static_cast<bool>(f);
}

}  // namespace

const ElemType* FindElemType(aclDataType t) {
  for (const ElemType& e : kTypes)
    if (e.acl == t) return &e;
  return nullptr;
}

std::string ElemTypeName(aclDataType t) {
  if (const ElemType* e = FindElemType(t)) return e->name;
  if (t == ACL_DT_UNDEFINED) return "a type without an AscendCL code";
  return "aclDataType " + std::to_string(static_cast<int>(t));
}

int64_t TensorBytes(aclDataType t, const std::vector<int64_t>& dims) {
  const ElemType* e = FindElemType(t);
  if (!e) return -1;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > std::numeric_limits<int64_t>::max() / 64 / d)) return -1;
    n *= d;
  }
  return (n * e->bits + 7) / 8;
}

std::string ShapeString(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + ")";
}

std::string ReadInputFile(const std::string& path, InputFile* out) {
  out->path = path;
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  out->is_npy = ext == ".npy";
  if (out->is_npy) return ReadNpy(path, &out->npy);
  std::ifstream f(path, std::ios::binary);
  if (!f) return "cannot open '" + path + "'";
  out->raw.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (f.bad()) return "cannot read '" + path + "'";
  return "";
}

std::string InputBytes(const InputFile& f, size_t index, const Tensor& t, std::vector<uint8_t>* bytes) {
  const std::string what = "input " + std::to_string(index) + " ('" + t.name + "'): ";
  if (f.is_npy) {
    const NpyArray& a = f.npy;
    const ElemType* e = FindElemType(t.dtype);
    if (!e) {
      const std::string code = t.dtype == ACL_DT_UNDEFINED
                                   ? "ACL_DT_UNDEFINED: in ONNX float8 E4M3FNUZ/E5M2FNUZ, uint4, int2 or uint2"
                                   : std::to_string(static_cast<int>(t.dtype));
      return what + "its element type has no AscendCL code (aclmdlGetInputDataType gives " + code + "), so '" + f.path +
             "' cannot be checked against it: give the input's " + std::to_string(t.data_bytes) +
             " bytes as a raw .bin file";
    }
    if (!Holds(a, *e))
      return what + "dtype mismatch: the model expects " + e->name + ", '" + f.path + "' holds " + a.TypeName();
    if (a.shape != t.dims)
      return what + "shape mismatch: the model expects " + ShapeString(t.dims) + ", '" + f.path + "' holds " +
             ShapeString(a.shape);
    *bytes = e->bits == 4 ? Pack4(a.data) : a.data;
  } else {
    *bytes = f.raw;
  }
  if (bytes->size() != t.data_bytes)
    return what + "size mismatch: the model expects " + std::to_string(t.data_bytes) + " bytes, '" + f.path +
           "' holds " + std::to_string(bytes->size());
  return "";
}

bool SaveOutput(const std::string& outfmt, const std::string& stem_path, size_t index, const Tensor& t,
                const std::vector<uint8_t>& host) {
  std::string path;
  bool ok = true;
  if (outfmt == "NPY") {
    const ElemType* e = FindElemType(t.dtype);
    if (e && e->npy) {
      path = stem_path + ".npy";
      std::vector<uint8_t> unpacked;
      const std::vector<uint8_t>* data = &host;
      if (e->bits == 4) {
        unpacked = Unpack4(host, Count(t.dims));
        data = &unpacked;
      }
      std::string err = WriteNpy(path, e->npy, t.dims, data->data(), data->size());
      if (!err.empty()) {
        std::fprintf(stderr, "[ERROR] output %zu: %s\n", index, err.c_str());
        return false;
      }
    } else {
      path = stem_path + ".bin";
      std::printf("[WARNING] output %zu ('%s') has %s, which .npy cannot hold: its raw bytes go to %s\n", index,
                  t.name.c_str(), ElemTypeName(t.dtype).c_str(), path.c_str());
      ok = WriteBinary(path, host);
    }
  } else if (outfmt == "TXT") {
    path = stem_path + ".txt";
    ok = WriteText(path, t, host);
  } else {
    path = stem_path + ".bin";
    ok = WriteBinary(path, host);
  }
  if (!ok) {
    std::fprintf(stderr, "[ERROR] output %zu: cannot write '%s'\n", index, path.c_str());
    return false;
  }
  std::printf("[INFO] output %zu ('%s', %s) written to %s\n", index, t.name.c_str(), ShapeString(t.dims).c_str(),
              path.c_str());
  return true;
}

}  // namespace msame
