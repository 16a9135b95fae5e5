// Header, CRC-32C, target and JSON-string helpers of the .om container (see
// om_format.h; the layout is documented at the top of om_file.cc).
#include "om/om_format.h"

#include <cstring>

#include "base/cpu_features.h"
#include "om/om_file.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace oc {

std::string HostTarget() {
#if defined(__x86_64__) || defined(_M_X64)
  switch (SelectedIsa()) {
    case Isa::kAvx512: return "x86_64-avx512";
    case Isa::kAvx2: return "x86_64-avx2";
    default: return "x86_64";
  }
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

namespace om_internal {
namespace {

// Slicing-by-8 tables: kCrcTables[k][b] is the CRC of byte b followed by k zero bytes.
struct CrcTables {
  uint32_t t[8][256];
  constexpr CrcTables() : t{} {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0u);
      t[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; ++b)
      for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  }
};
constexpr CrcTables kCrc;

uint32_t Crc32cSoftware(const uint8_t* p, size_t n, uint32_t c) {
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    c = (c >> 8) ^ kCrc.t[0][(c ^ *p++) & 0xFF];
    --n;
  }
  while (n >= 8) {
    uint32_t lo = c ^ LoadLE32(p);
    uint32_t hi = LoadLE32(p + 4);
    c = kCrc.t[7][lo & 0xFF] ^ kCrc.t[6][(lo >> 8) & 0xFF] ^ kCrc.t[5][(lo >> 16) & 0xFF] ^
        kCrc.t[4][lo >> 24] ^ kCrc.t[3][hi & 0xFF] ^ kCrc.t[2][(hi >> 8) & 0xFF] ^
        kCrc.t[1][(hi >> 16) & 0xFF] ^ kCrc.t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ kCrc.t[0][(c ^ *p++) & 0xFF];
  return c;
}

#if defined(__x86_64__)
// SSE4.2 has the CRC-32C instruction; weights can be hundreds of MB, and every
// load checksums the whole file.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t* p, size_t n, uint32_t c) {
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    c = _mm_crc32_u8(c, *p++);
    --n;
  }
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c64 = _mm_crc32_u64(c64, v);
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n--) c = _mm_crc32_u8(c, *p++);
  return c;
}

// The crc32 instruction has a latency of 3 cycles and a throughput of 1, so one
// dependency chain runs at a third of the speed: three streams over adjacent
// blocks of kStride bytes, joined by shifting a register over kStride zero
// bytes. The raw register update is linear over GF(2), so that shift is an
// xor of four per-byte tables, built once from the one-stream routine.
constexpr size_t kStride = 4096;
struct ShiftTables {
  uint32_t t[4][256];
  ShiftTables() {
    static const uint8_t zeros[kStride] = {};
    for (int k = 0; k < 4; ++k)
      for (uint32_t b = 0; b < 256; ++b) t[k][b] = Crc32cSse42(zeros, kStride, b << (8 * k));
  }
  uint32_t Shift(uint32_t c) const {
    return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24];
  }
};

__attribute__((target("sse4.2"))) uint32_t Crc32cSse42x3(const uint8_t* p, size_t n, uint32_t c) {
  if (n < 3 * kStride * 4) return Crc32cSse42(p, n, c);
  static const ShiftTables shift;
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    c = _mm_crc32_u8(c, *p++);
    --n;
  }
  while (n >= 3 * kStride) {
    uint64_t a = c, b = 0, d = 0;
    for (size_t i = 0; i < kStride; i += 8) {
      uint64_t va, vb, vd;
      std::memcpy(&va, p + i, 8);
      std::memcpy(&vb, p + kStride + i, 8);
      std::memcpy(&vd, p + 2 * kStride + i, 8);
      a = _mm_crc32_u64(a, va);
      b = _mm_crc32_u64(b, vb);
      d = _mm_crc32_u64(d, vd);
    }
    c = shift.Shift(shift.Shift(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
        static_cast<uint32_t>(d);
    p += 3 * kStride;
    n -= 3 * kStride;
  }
  return Crc32cSse42(p, n, c);
}
#endif

std::string IsaPart(std::string_view target, std::string_view* arch) {
  size_t dash = target.find('-');
  *arch = target.substr(0, dash);
  return dash == std::string_view::npos ? std::string() : std::string(target.substr(dash + 1));
}

// ISA level within an arch, -1 if unknown.
int IsaLevel(std::string_view arch, const std::string& isa) {
  if (arch == "x86_64") {
    if (isa.empty()) return 0;
    if (isa == "avx2") return 1;
    if (isa == "avx512") return 2;
    return -1;
  }
  if (arch == "aarch64") return isa.empty() ? 0 : -1;
  return -1;
}

}  // namespace

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
#if defined(__x86_64__)
  static const bool hw = __builtin_cpu_supports("sse4.2");
  if (hw) return ~Crc32cSse42x3(p, size, c);
#endif
  return ~Crc32cSoftware(p, size, c);
}

uint32_t LoadLE32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
uint64_t LoadLE64(const uint8_t* p) {
  return static_cast<uint64_t>(LoadLE32(p)) | static_cast<uint64_t>(LoadLE32(p + 4)) << 32;
}
void StoreLE32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void StoreLE64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

std::array<uint8_t, kOmHeaderSize> EncodeHeader(const OmHeader& h) {
  std::array<uint8_t, kOmHeaderSize> b{};
  std::memcpy(b.data() + kOffMagic, kOmMagic, sizeof(kOmMagic));
  StoreLE32(b.data() + kOffVersion, h.format_version);
  StoreLE32(b.data() + kOffHeaderSize, h.header_size);
  StoreLE32(b.data() + kOffFlags, h.flags);
  StoreLE32(b.data() + kOffBodyCrc, h.body_crc);
  StoreLE64(b.data() + kOffFbOffset, h.fb_offset);
  StoreLE64(b.data() + kOffFbSize, h.fb_size);
  StoreLE64(b.data() + kOffBlobOffset, h.blob_offset);
  StoreLE64(b.data() + kOffBlobSize, h.blob_size);
  StoreLE64(b.data() + kOffFileSize, h.file_size);
  std::memcpy(b.data() + kOffTarget, h.target.data(),
              std::min(h.target.size(), kOmTargetFieldSize - 1));
  StoreLE32(b.data() + kOffHeaderCrc, Crc32c(b.data(), kOffHeaderCrc));
  return b;
}

Expected<OmHeader> DecodeHeader(const uint8_t* data, size_t size) {
  if (size < sizeof(kOmMagic))
    return InvalidFile("file is ", size, " bytes, too small to be a .om (the header alone is ",
                       kOmHeaderSize, " bytes)");
  if (std::memcmp(data, kOmMagic, sizeof(kOmMagic)) != 0)
    return InvalidFile("bad magic at file offset 0: not an OpenCANN .om file (expected \"OCANNOM\\0\")");
  if (size < kOffHeaderSize + 4)
    return InvalidFile("file truncated inside the header at offset ", size, " (header is ",
                       kOmHeaderSize, " bytes)");
  OmHeader h;
  h.format_version = LoadLE32(data + kOffVersion);
  if (h.format_version != kOmFormatVersion && h.format_version != kOmFormatVersionDynamic &&
      h.format_version != kOmFormatVersionSubgraphs)
    return InvalidFile("unsupported .om format version ", h.format_version,
                       " (field at file offset ", kOffVersion, "); this build reads format version ",
                       kOmFormatVersion, " (static), ", kOmFormatVersionDynamic, " (dynamic) and ",
                       kOmFormatVersionSubgraphs, " (subgraphs, sequences)",
                       ": recompile the model with this atc");
  h.header_size = LoadLE32(data + kOffHeaderSize);
  if (h.header_size != kOmHeaderSize)
    return InvalidFile("header size field at file offset ", kOffHeaderSize, " is ", h.header_size,
                       ", format version ", h.format_version, " requires ", kOmHeaderSize);
  if (size < kOmHeaderSize)
    return InvalidFile("file truncated inside the header: ", size, " bytes, header is ",
                       kOmHeaderSize, " bytes");
  h.header_crc = LoadLE32(data + kOffHeaderCrc);
  uint32_t crc = Crc32c(data, kOffHeaderCrc);
  if (crc != h.header_crc)
    return InvalidFile("header checksum mismatch (stored 0x", std::hex, h.header_crc,
                       ", computed 0x", crc, std::dec, " over file offsets [0, ", kOffHeaderCrc,
                       ")): the header is corrupt");
  h.flags = LoadLE32(data + kOffFlags);
  if ((h.flags & ~kOmKnownFlags) != 0)
    return InvalidFile("unknown header flags 0x", std::hex, h.flags, std::dec,
                       " at file offset ", kOffFlags, " (this build knows only 0x", std::hex,
                       kOmKnownFlags, std::dec, ": packed-only weights)");
  if (h.flags != 0 && h.format_version != kOmFormatVersion)
    return InvalidFile("header flags 0x", std::hex, h.flags, std::dec, " at file offset ", kOffFlags,
                       " need format version ", kOmFormatVersion, ", the header has ", h.format_version);
  h.body_crc = LoadLE32(data + kOffBodyCrc);
  h.fb_offset = LoadLE64(data + kOffFbOffset);
  h.fb_size = LoadLE64(data + kOffFbSize);
  h.blob_offset = LoadLE64(data + kOffBlobOffset);
  h.blob_size = LoadLE64(data + kOffBlobSize);
  h.file_size = LoadLE64(data + kOffFileSize);
  const uint8_t* t = data + kOffTarget;
  size_t len = 0;
  while (len < kOmTargetFieldSize && t[len] != 0) ++len;
  if (len == kOmTargetFieldSize)
    return InvalidFile("target field at file offset ", kOffTarget, " is not NUL-terminated");
  for (size_t i = 0; i < len; ++i)
    if (t[i] < 0x21 || t[i] > 0x7E)
      return InvalidFile("target field at file offset ", kOffTarget + i,
                         " holds a non-printable byte");
  for (size_t i = len; i < kOmTargetFieldSize; ++i)
    if (t[i] != 0)
      return InvalidFile("target field padding at file offset ", kOffTarget + i, " is not zero");
  h.target.assign(reinterpret_cast<const char*>(t), len);
  for (size_t i = kOffReserved; i < kOffHeaderCrc; ++i)
    if (data[i] != 0)
      return InvalidFile("reserved header byte at file offset ", i, " is not zero");
  return h;
}

Status CheckLayout(const OmHeader& h, uint64_t actual_size) {
  if (h.file_size != actual_size)
    return InvalidFile("file size mismatch: header (offset ", kOffFileSize, ") says ", h.file_size,
                       " bytes, the file has ", actual_size,
                       actual_size < h.file_size ? " (truncated)" : " (trailing bytes)");
  if (h.fb_offset < h.header_size || h.fb_offset % kOmFlatBufferAlign != 0 ||
      h.fb_offset > actual_size)
    return InvalidFile("graph section offset ", h.fb_offset, " (header field at offset ",
                       kOffFbOffset, ") must be a multiple of ", kOmFlatBufferAlign,
                       " between ", h.header_size, " and the file size ", actual_size);
  if (h.fb_size < 8 || h.fb_size > actual_size - h.fb_offset)
    return InvalidFile("graph section size ", h.fb_size, " (header field at offset ", kOffFbSize,
                       ") at offset ", h.fb_offset, " does not fit a ", actual_size, "-byte file");
  if (h.blob_offset % kOmBlobAlign != 0 || h.blob_offset < h.fb_offset + h.fb_size ||
      h.blob_offset > actual_size)
    return InvalidFile("weight blob offset ", h.blob_offset, " (header field at offset ",
                       kOffBlobOffset, ") must be a multiple of ", kOmBlobAlign,
                       " after the graph section (ends at ", h.fb_offset + h.fb_size,
                       ") and within the file (", actual_size, " bytes)");
  if (h.blob_size != actual_size - h.blob_offset)
    return InvalidFile("weight blob size ", h.blob_size, " (header field at offset ", kOffBlobSize,
                       ") at offset ", h.blob_offset, " does not end at the file end ", actual_size);
  return Status::Ok();
}

std::vector<uint8_t> PackContainer(std::span<const uint8_t> flatbuffer,
                                   std::span<const uint8_t> blob, const std::string& target,
                                   uint32_t format_version, uint32_t flags) {
  OmHeader h;
  h.format_version = format_version;
  h.flags = flags;
  h.target = target;
  h.fb_offset = kOmHeaderSize;
  h.fb_size = flatbuffer.size();
  h.blob_offset = (h.fb_offset + h.fb_size + kOmBlobAlign - 1) / kOmBlobAlign * kOmBlobAlign;
  h.blob_size = blob.size();
  h.file_size = h.blob_offset + h.blob_size;
  std::vector<uint8_t> file(h.file_size, 0);
  if (!flatbuffer.empty()) std::memcpy(file.data() + h.fb_offset, flatbuffer.data(), flatbuffer.size());
  if (!blob.empty()) std::memcpy(file.data() + h.blob_offset, blob.data(), blob.size());
  h.body_crc = Crc32c(file.data() + kOmHeaderSize, file.size() - kOmHeaderSize);
  auto header = EncodeHeader(h);
  std::memcpy(file.data(), header.data(), header.size());
  return file;
}

bool AcceptsPackedOnlyInput(std::string_view domain, std::string_view op_type, size_t input) {
  // Gemm/MatMul: B (gemm_op.cc, matmul.cc); Conv, ConvTranspose: W (conv.cc, conv_transpose.cc);
  // NchwcConv: W (nchwc_ops.cc).
  if (input != 1) return false;
  if (domain.empty())
    return op_type == "Gemm" || op_type == "MatMul" || op_type == "Conv" || op_type == "ConvTranspose";
  return domain == "com.opencann" &&
         (op_type == "FusedGemm" || op_type == "FusedMatMul" || op_type == "FusedConv" ||
          op_type == "NchwcConv");
}

bool PackedOnlyWeight(DataType dtype, uint64_t bytes) { return dtype == DataType::kFloat32 && bytes > 0; }

bool PackedOnlyReader(std::string_view domain, std::string_view op_type, size_t input, uint64_t prepacked_bytes,
                      DataType input0) {
  return AcceptsPackedOnlyInput(domain, op_type, input) && prepacked_bytes > 0 && input0 == DataType::kFloat32;
}

void Reseal(std::vector<uint8_t>& file) {
  if (file.size() < kOmHeaderSize) return;
  uint32_t hs = LoadLE32(file.data() + kOffHeaderSize);
  if (hs < kOmHeaderSize || hs > file.size()) hs = kOmHeaderSize;
  StoreLE32(file.data() + kOffBodyCrc, Crc32c(file.data() + hs, file.size() - hs));
  StoreLE32(file.data() + kOffHeaderCrc, Crc32c(file.data(), kOffHeaderCrc));
}

bool IsKnownTarget(std::string_view target) {
  std::string_view arch;
  std::string isa = IsaPart(target, &arch);
  return IsaLevel(arch, isa) >= 0;
}

Status CheckTargetCompatible(std::string_view model_target, std::string_view host_target) {
  std::string_view march, harch;
  std::string misa = IsaPart(model_target, &march);
  std::string hisa = IsaPart(host_target, &harch);
  int mlevel = IsaLevel(march, misa);
  if (mlevel < 0)
    return NotSupported("the model was compiled for unknown target '", model_target,
                        "'; this host is '", host_target, "'");
  if (march != harch)
    return NotSupported("the model was compiled for target '", model_target,
                        "' (another CPU architecture); this host is '", host_target,
                        "': recompile it with atc --soc_version=", host_target);
  if (mlevel > IsaLevel(harch, hisa))
    return NotSupported("the model was compiled for target '", model_target, "' but this CPU is '",
                        host_target, "' and lacks ", misa,
                        ": recompile it with atc --soc_version=", host_target);
  return Status::Ok();
}

std::string JsonString(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  auto escape_byte = [&](unsigned char c) {
    out += "\\u00";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7F) escape_byte(c);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // Validate one UTF-8 sequence (no overlongs, no surrogates, <= U+10FFFF).
    size_t len = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) ok = false;
      else cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (ok) {
      if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
          (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        ok = false;
    }
    if (ok) {
      out.append(reinterpret_cast<const char*>(p + i), len);
      i += len;
    } else {
      escape_byte(c);
      ++i;
    }
  }
  out += '"';
  return out;
}

}  // namespace om_internal
}  // namespace oc
