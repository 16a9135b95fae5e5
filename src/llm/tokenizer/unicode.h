// UTF-8 and Unicode helpers of the tokenizer: code points, character
// properties with the meaning Rust's `char` gives them (Hugging Face
// tokenizers is written in Rust), normalization forms and GPT-2's byte-level
// alphabet. Character data comes from ICU.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oc::llm {

// Decodes the code point at s[i] (s must be valid UTF-8) and advances i.
char32_t NextCodePoint(std::string_view s, size_t& i);
// Byte length of the UTF-8 sequence that starts with this lead byte.
inline size_t Utf8Length(unsigned char lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }
void AppendUtf8(std::string& out, char32_t c);

// Valid UTF-8 is returned as is; otherwise each maximal invalid subpart is
// replaced by U+FFFD (Rust's String::from_utf8_lossy, Python's errors="replace").
bool IsValidUtf8(std::string_view s);
std::string Utf8Lossy(std::string_view s);

// Rust's char predicates.
bool IsWhitespace(char32_t c);     // White_Space property
bool IsAlphanumeric(char32_t c);   // Alphabetic or general category N*
bool IsNumeric(char32_t c);        // general category Nd, Nl, No
bool IsPunctuation(char32_t c);    // general category P* (and ASCII punctuation)
bool IsCombiningMark(char32_t c);  // general category M (Mn, Mc, Me)

enum class NormalForm { kNfc, kNfd, kNfkc, kNfkd };
std::string Normalize(std::string_view s, NormalForm form);
// Full lowercase mapping of each code point on its own (Rust's char::to_lowercase).
std::string Lowercase(std::string_view s);

// GPT-2's byte <-> printable code point table (bytes_to_unicode).
char32_t ByteToChar(uint8_t b);
// The byte of a byte-level code point, or -1 when c is not one.
int CharToByte(char32_t c);

}  // namespace oc::llm
