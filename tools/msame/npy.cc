#include "npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace msame {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// A parser for the small subset of Python literals used by .npy headers:
// a dict of string keys to strings, booleans and tuples of integers.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& s) : s_(s) {}

  std::string Parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    Ws();
    if (!Eat('{')) return Err("expected '{'");
    for (;;) {
      Ws();
      if (Eat('}')) break;
      std::string key;
      if (!Str(&key)) return Err("expected a quoted key");
      Ws();
      if (!Eat(':')) return Err("expected ':' after '" + key + "'");
      Ws();
      if (key == "descr") {
        if (!Str(descr)) return Err("'descr' must be a string (structured dtypes are not supported)");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (s_.compare(pos_, 4, "True") == 0) { *fortran = true; pos_ += 4; }
        else if (s_.compare(pos_, 5, "False") == 0) { *fortran = false; pos_ += 5; }
        else return Err("'fortran_order' must be True or False");
        have_fortran = true;
      } else if (key == "shape") {
        if (!Tuple(shape)) return Err("'shape' must be a tuple of non-negative integers");
        have_shape = true;
      } else {
        return Err("unexpected key '" + key + "'");
      }
      Ws();
      if (Eat(',')) continue;
      Ws();
      if (Eat('}')) break;
      return Err("expected ',' or '}'");
    }
    if (!have_descr) return "header has no 'descr'";
    if (!have_fortran) return "header has no 'fortran_order'";
    if (!have_shape) return "header has no 'shape'";
    return "";
  }

 private:
  std::string Err(const std::string& what) { return what + " at header offset " + std::to_string(pos_); }
  void Ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  bool Str(std::string* out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos) return false;
    *out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  bool Tuple(std::vector<int64_t>* out) {
    out->clear();
    if (!Eat('(')) return false;
    for (;;) {
      Ws();
      if (Eat(')')) return true;
      size_t start = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ == start || pos_ - start > 18) return false;
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 longs
      out->push_back(std::stoll(s_.substr(start, pos_ - start)));
      Ws();
      if (Eat(',')) continue;
      Ws();
      if (Eat(')')) return true;
      return false;
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

bool IsLittleEndianHost() {
  uint16_t v = 1;
  uint8_t b;
  std::memcpy(&b, &v, 1);
  return b == 1;
}

}  // namespace

std::string TypeName(char kind, size_t item_size) {
  switch (kind) {
    case 'f': return "float" + std::to_string(item_size * 8);
    case 'i': return "int" + std::to_string(item_size * 8);
    case 'u': return "uint" + std::to_string(item_size * 8);
    case 'b': return "bool";
    default: return std::string("dtype '") + kind + std::to_string(item_size) + "'";
  }
}

size_t NamedTypeSize(const std::string& name) {
  // ml_dtypes' types: every one but bfloat16 is a byte per element, the 4- and
  // 2-bit ones unpacked (the value in the low bits).
  static const char* const kOneByte[] = {"float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2",
                                         "float8_e5m2fnuz", "float8_e8m0fnu", "float8_e3m4", "float8_e4m3",
                                         "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int4", "uint4", "int2",
                                         "uint2"};
  if (name == "bfloat16") return 2;
  for (const char* n : kOneByte)
    if (name == n) return 1;
  return 0;
}

std::string NpyArray::TypeName() const {
  if (kind == 'n') return name;
  if (kind == 'V') return "raw " + std::to_string(item_size) + "-byte elements ('" + descr + "')";
  if (kind == 'f' && item_size == 1) return "an 8-bit float ('" + descr + "', as ml_dtypes' float8_e5m2)";
  return msame::TypeName(kind, item_size);
}

size_t NpyArray::NumElements() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::string ParseNpy(const std::string& path, const std::vector<uint8_t>& bytes, NpyArray* out) {
  auto fail = [&](const std::string& what) { return "'" + path + "' is not a usable .npy file: " + what; };
  if (bytes.size() < kMagicLen + 4 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return fail("missing the \\x93NUMPY magic");
  uint8_t major = bytes[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = bytes[8] | (static_cast<size_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("truncated header length");
    header_len = bytes[8] | (static_cast<size_t>(bytes[9]) << 8) | (static_cast<size_t>(bytes[10]) << 16) |
                 (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    return fail("format version " + std::to_string(major) + "." + std::to_string(bytes[7]) +
                " is not supported (1.0, 2.0 and 3.0 are)");
  }
  if (header_len > bytes.size() - header_start) return fail("header runs past the end of the file");
  std::string header(reinterpret_cast<const char*>(bytes.data()) + header_start, header_len);
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  std::string err = HeaderParser(header).Parse(&descr, &fortran, &shape);
  if (!err.empty()) return fail(err);
  if (fortran) return fail("fortran_order is True; save the array in C order (np.ascontiguousarray)");
  char kind = 0;
  size_t item = 0;
  std::string name;
  if (size_t named = NamedTypeSize(descr); named > 0) {
    kind = 'n';
    item = named;
    name = descr;
  } else {
    if (descr.size() < 3) return fail("unsupported dtype '" + descr + "'");
    char order = descr[0];
    if (order != '<' && order != '|' && order != '=' && order != '>')
      return fail("unsupported dtype '" + descr + "'");
    kind = descr[1];
    for (size_t i = 2; i < descr.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(descr[i])) || i > 6)
        return fail("unsupported dtype '" + descr + "'");
      item = item * 10 + static_cast<size_t>(descr[i] - '0');
    }
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b' && kind != 'V')
      return fail("dtype '" + descr + "' is not a numeric, bool or ml_dtypes type");
    if (kind == 'b' && item != 1) return fail("unsupported dtype '" + descr + "'");
    if (kind == 'f' && item != 1 && item != 2 && item != 4 && item != 8)
      return fail("unsupported float size in '" + descr + "'");
    if ((kind == 'i' || kind == 'u') && item != 1 && item != 2 && item != 4 && item != 8)
      return fail("unsupported integer size in '" + descr + "'");
    if (kind == 'V' && item != 1 && item != 2) return fail("unsupported raw element size in '" + descr + "'");
    bool little = order == '<' || order == '|' || (order == '=' && IsLittleEndianHost());
    if (!little && item > 1 && kind != 'V')
      return fail("dtype '" + descr + "' is big-endian; convert it with astype('<...')");
  }
  size_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > std::numeric_limits<size_t>::max() / static_cast<size_t>(d) / item)
      return fail("shape is too large");
    count *= static_cast<size_t>(d);
  }
  size_t data_start = header_start + header_len;
  size_t have = bytes.size() - data_start;
  if (have != count * item)
    return fail("the header describes " + std::to_string(count * item) + " data bytes but the file holds " +
                std::to_string(have));
  out->kind = kind;
  out->item_size = item;
  out->name = std::move(name);
  out->descr = descr;
  out->shape = std::move(shape);
  out->data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return "";
}

std::string ReadNpy(const std::string& path, NpyArray* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "cannot open '" + path + "'";
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return "cannot read '" + path + "'";
  return ParseNpy(path, bytes, out);
}

std::string WriteNpy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
                     const void* data, size_t bytes) {
  std::ostringstream h;
  h << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) h << shape[i] << (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  h << "), }";
  std::string header = h.str();
  // Pad so that magic + version + length field + header is a multiple of 64.
  bool v2 = header.size() + 1 + 10 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  if (!f) return "cannot create '" + path + "'";
  f.write(kMagic, kMagicLen);
  uint8_t version[2] = {static_cast<uint8_t>(v2 ? 2 : 1), 0};
  f.write(reinterpret_cast<const char*>(version), 2);
  size_t len = header.size();
  uint8_t lenb[4] = {static_cast<uint8_t>(len & 0xFF), static_cast<uint8_t>((len >> 8) & 0xFF),
                     static_cast<uint8_t>((len >> 16) & 0xFF), static_cast<uint8_t>((len >> 24) & 0xFF)};
  f.write(reinterpret_cast<const char*>(lenb), v2 ? 4 : 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) return "cannot write '" + path + "'";
  return "";
}

}  // namespace msame
