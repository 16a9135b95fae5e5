#include "llm/tokenizer/unicode.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

#include <array>
#include <vector>

namespace oc::llm {

char32_t NextCodePoint(std::string_view s, size_t& i) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t n = Utf8Length(b);
  char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < n && i + k < s.size(); ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return c;
}

void AppendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Length of the valid sequence at s[i], or 0; *valid_prefix gets the length of
// the longest prefix that could still begin a valid sequence (the "maximal
// subpart" that one U+FFFD replaces, per Unicode's recommended practice).
static size_t ValidSequenceAt(std::string_view s, size_t i, size_t* valid_prefix) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char b = at(0);
  *valid_prefix = 1;
  if (b < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) return 0;
    unsigned char c = at(k);
    if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return 0;
    *valid_prefix = k + 1;
  }
  return n;
}

bool IsValidUtf8(std::string_view s) {
  size_t prefix;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = ValidSequenceAt(s, i, &prefix);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string Utf8Lossy(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  size_t prefix;
  for (size_t i = 0; i < s.size();) {
    size_t n = ValidSequenceAt(s, i, &prefix);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      i += prefix;
    }
  }
  return out;
}

bool IsWhitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE);
}

bool IsNumeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  int t = u_charType(static_cast<UChar32>(c));
  return t == U_DECIMAL_DIGIT_NUMBER || t == U_LETTER_NUMBER || t == U_OTHER_NUMBER;
}

bool IsAlphanumeric(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_ALPHABETIC) || IsNumeric(c);
}

bool IsPunctuation(char32_t c) {
  if (c < 0x80 && ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)))
    return true;
  return u_ispunct(static_cast<UChar32>(c));
}

bool IsCombiningMark(char32_t c) {
  int t = u_charType(static_cast<UChar32>(c));
  return t == U_NON_SPACING_MARK || t == U_COMBINING_SPACING_MARK || t == U_ENCLOSING_MARK;
}

static std::u16string ToUtf16(std::string_view s) {
  std::u16string out(s.size(), u'\0');
  int32_t len = 0;
  UErrorCode err = U_ZERO_ERROR;
  u_strFromUTF8(reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &len, s.data(),
                static_cast<int32_t>(s.size()), &err);
  out.resize(U_SUCCESS(err) ? len : 0);
  return out;
}

static std::string ToUtf8(const std::u16string& s) {
  std::string out(s.size() * 3, '\0');
  int32_t len = 0;
  UErrorCode err = U_ZERO_ERROR;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &len, reinterpret_cast<const UChar*>(s.data()),
              static_cast<int32_t>(s.size()), &err);
  out.resize(U_SUCCESS(err) ? len : 0);
  return out;
}

static bool IsAscii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

std::string Normalize(std::string_view s, NormalForm form) {
  if (IsAscii(s)) return std::string(s);  // every form leaves ASCII as it is
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* n = form == NormalForm::kNfc    ? unorm2_getNFCInstance(&err)
                          : form == NormalForm::kNfd  ? unorm2_getNFDInstance(&err)
                          : form == NormalForm::kNfkc ? unorm2_getNFKCInstance(&err)
                                                      : unorm2_getNFKDInstance(&err);
  if (U_FAILURE(err)) return std::string(s);
  std::u16string in = ToUtf16(s);
  if (unorm2_isNormalized(n, reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()), &err) &&
      U_SUCCESS(err))
    return std::string(s);
  err = U_ZERO_ERROR;
  std::u16string out(in.size() * 4 + 16, u'\0');
  int32_t len = unorm2_normalize(n, reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()),
                                 reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &err);
  if (err == U_BUFFER_OVERFLOW_ERROR) {
    err = U_ZERO_ERROR;
    out.assign(len, u'\0');
    len = unorm2_normalize(n, reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()),
                           reinterpret_cast<UChar*>(out.data()), len, &err);
  }
  if (U_FAILURE(err)) return std::string(s);
  out.resize(len);
  return ToUtf8(out);
}

std::string Lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out += static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b);
      ++i;
      continue;
    }
    char32_t c = NextCodePoint(s, i);
    // One code point at a time: no context (final sigma), as Rust's char does.
    UChar src[2];
    int32_t src_len = 0;
    U16_APPEND_UNSAFE(src, src_len, static_cast<UChar32>(c));
    UChar dst[8];
    UErrorCode err = U_ZERO_ERROR;
    int32_t n = u_strToLower(dst, 8, src, src_len, "", &err);
    if (U_FAILURE(err)) {
      AppendUtf8(out, c);
      continue;
    }
    for (int32_t k = 0; k < n;) {
      UChar32 d;
      U16_NEXT_UNSAFE(dst, k, d);
      AppendUtf8(out, static_cast<char32_t>(d));
    }
  }
  return out;
}

namespace {
struct ByteTable {
  std::array<char32_t, 256> to_char{};
  std::array<int16_t, 324> to_byte{};  // code points < 324 cover the whole table
  ByteTable() {
    to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      to_char[b] = printable ? static_cast<char32_t>(b) : next++;
      to_byte[to_char[b]] = static_cast<int16_t>(b);
    }
  }
};
const ByteTable& Bytes() {
  static const ByteTable table;
  return table;
}
}  // namespace

char32_t ByteToChar(uint8_t b) { return Bytes().to_char[b]; }
int CharToByte(char32_t c) { return c < 324 ? Bytes().to_byte[c] : -1; }

}  // namespace oc::llm
