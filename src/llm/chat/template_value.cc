#include "llm/chat/template_value.h"

#include <unicode/uchar.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace oc::llm::chat {
namespace {

// float.__repr__: the shortest round-trip digits, positional for exponents in
// [-4, 16), scientific otherwise, always with a '.' or an exponent.
std::string PyFloat(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t epos = sci.find('e');
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (size_t i = 0; i < epos; ++i) if (sci[i] != '.') digits += sci[i];
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(-exp - 1, '0') + digits;
    } else if ((int)digits.size() <= exp + 1) {
      out = digits + std::string(exp + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += e;
  }
  return neg ? "-" + out : out;
}

// Python's str.isprintable() is false for these categories (space aside).
bool NotPrintable(char32_t c) {
  int t = u_charType(c);
  return t == U_CONTROL_CHAR || t == U_FORMAT_CHAR || t == U_SURROGATE || t == U_PRIVATE_USE_CHAR ||
         t == U_UNASSIGNED || t == U_LINE_SEPARATOR || t == U_PARAGRAPH_SEPARATOR || t == U_SPACE_SEPARATOR;
}

std::string ReprString(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (char32_t c : ToU32(s)) {
    if (c == (char32_t)q || c == '\\') { out += '\\'; out += char(c); }
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) { char b[8]; std::snprintf(b, sizeof b, "\\x%02x", (unsigned)c); out += b; }
    else if (c > 0x7f && NotPrintable(c)) {
      char b[16];
      if (c < 0x100) std::snprintf(b, sizeof b, "\\x%02x", (unsigned)c);
      else if (c < 0x10000) std::snprintf(b, sizeof b, "\\u%04x", (unsigned)c);
      else std::snprintf(b, sizeof b, "\\U%08x", (unsigned)c);
      out += b;
    } else out += FromU32(std::u32string(1, c));
  }
  return out + q;
}

void Dumps(const Json& v, int indent, bool sort, int level, std::string* out) {
  switch (v.type()) {
    case Json::value_t::null: *out += "null"; return;
    case Json::value_t::boolean: *out += v.get<bool>() ? "true" : "false"; return;
    case Json::value_t::number_integer: *out += std::to_string(v.get<long long>()); return;
    case Json::value_t::number_unsigned: *out += std::to_string(v.get<unsigned long long>()); return;
    case Json::value_t::number_float: {
      double d = v.get<double>();
      *out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : PyFloat(d);
      return;
    }
    case Json::value_t::string: {
      *out += '"';
      for (unsigned char c : v.get_ref<const std::string&>()) {
        switch (c) {
          case '"': *out += "\\\""; break;
          case '\\': *out += "\\\\"; break;
          case '\n': *out += "\\n"; break;
          case '\r': *out += "\\r"; break;
          case '\t': *out += "\\t"; break;
          case '\b': *out += "\\b"; break;
          case '\f': *out += "\\f"; break;
          default:
            if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); *out += b; }
            else *out += char(c);
        }
      }
      *out += '"';
      return;
    }
    case Json::value_t::array:
    case Json::value_t::object: {
      bool arr = v.is_array();
      if (v.empty()) { *out += arr ? "[]" : "{}"; return; }
      *out += arr ? '[' : '{';
      std::string nl = indent >= 0 ? "\n" + std::string(size_t(indent) * (level + 1), ' ') : "";
      std::vector<std::pair<std::string, const Json*>> items;
      if (arr) for (auto& x : v) items.emplace_back("", &x);
      else for (auto it = v.begin(); it != v.end(); ++it) items.emplace_back(it.key(), &it.value());
      if (!arr && sort) std::stable_sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.first < b.first; });
      bool first = true;
      for (auto& [k, x] : items) {
        if (!first) *out += indent >= 0 ? "," : ", ";
        first = false;
        *out += nl;
        if (!arr) { Dumps(Json(k), indent, sort, level + 1, out); *out += ": "; }
        Dumps(*x, indent, sort, level + 1, out);
      }
      if (indent >= 0) *out += "\n" + std::string(size_t(indent) * level, ' ');
      *out += arr ? ']' : '}';
      return;
    }
    default: *out += "null";
  }
}

bool IsNum(const Json& v) { return v.is_number() || v.is_boolean(); }
double Num(const Json& v) { return v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<double>(); }
bool IsInt(const Json& v) { return v.is_number_integer() || v.is_boolean(); }
long long Int(const Json& v) { return v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<long long>(); }

bool Cased(char32_t c) { return u_isUUppercase(c) || u_isULowercase(c) || u_istitle(c); }

}  // namespace

std::string PyStr(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  return PyRepr(v);
}

std::string PyRepr(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "None";
    case Json::value_t::boolean: return v.get<bool>() ? "True" : "False";
    case Json::value_t::number_integer: return std::to_string(v.get<long long>());
    case Json::value_t::number_unsigned: return std::to_string(v.get<unsigned long long>());
    case Json::value_t::number_float: return PyFloat(v.get<double>());
    case Json::value_t::string: return ReprString(v.get<std::string>());
    case Json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + PyRepr(v[i]);
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out += (first ? "" : ", ") + ReprString(it.key()) + ": " + PyRepr(it.value());
        first = false;
      }
      return out + "}";
    }
    default: return "None";
  }
}

bool PyTruth(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return false;
    case Json::value_t::boolean: return v.get<bool>();
    case Json::value_t::number_integer: return v.get<long long>() != 0;
    case Json::value_t::number_unsigned: return v.get<unsigned long long>() != 0;
    case Json::value_t::number_float: return v.get<double>() != 0;
    case Json::value_t::string: return !v.get_ref<const std::string&>().empty();  // json::empty() is false for strings
    case Json::value_t::array: case Json::value_t::object: return !v.empty();
    default: return false;
  }
}

bool PyEqual(const Json& a, const Json& b) {
  if (IsNum(a) && IsNum(b)) {
    if (IsInt(a) && IsInt(b)) return Int(a) == Int(b);
    return Num(a) == Num(b);
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) if (!PyEqual(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto f = b.find(it.key());
      if (f == b.end() || !PyEqual(it.value(), *f)) return false;
    }
    return true;
  }
  return a == b;
}

Expected<bool> PyLess(const Json& a, const Json& b) {
  if (IsNum(a) && IsNum(b)) {
    if (IsInt(a) && IsInt(b)) return Int(a) < Int(b);
    return Num(a) < Num(b);
  }
  if (a.is_string() && b.is_string()) return a.get_ref<const std::string&>() < b.get_ref<const std::string&>();
  if (a.is_array() && b.is_array()) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (PyEqual(a[i], b[i])) continue;
      return PyLess(a[i], b[i]);
    }
    return a.size() < b.size();
  }
  return InvalidArgument("'<' is not supported between ", a.type_name(), " and ", b.type_name());
}

std::string PyJsonDumps(const Json& v, int indent, bool sort_keys) {
  std::string out;
  Dumps(v, indent, sort_keys, 0, &out);
  return out;
}

std::u32string ToU32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + n > s.size()) n = 1;
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (s[i + k] & 0x3f);
    out += cp;
    i += n;
  }
  return out;
}

std::string FromU32(std::u32string_view s) {
  std::string out;
  for (char32_t cp : s) {
    if (cp < 0x80) out += char(cp);
    else if (cp < 0x800) { out += char(0xc0 | (cp >> 6)); out += char(0x80 | (cp & 0x3f)); }
    else if (cp < 0x10000) { out += char(0xe0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3f)); out += char(0x80 | (cp & 0x3f)); }
    else { out += char(0xf0 | (cp >> 18)); out += char(0x80 | ((cp >> 12) & 0x3f)); out += char(0x80 | ((cp >> 6) & 0x3f)); out += char(0x80 | (cp & 0x3f)); }
  }
  return out;
}

bool PyIsSpace(char32_t c) {
  return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

std::string PyStrip(std::string_view s, const Json& chars, bool left, bool right) {
  std::u32string u = ToU32(s), set;
  bool ws = !chars.is_string();
  if (!ws) set = ToU32(chars.get<std::string>());
  auto strip = [&](char32_t c) { return ws ? PyIsSpace(c) : set.find(c) != std::u32string::npos; };
  size_t b = 0, e = u.size();
  if (left) while (b < e && strip(u[b])) ++b;
  if (right) while (e > b && strip(u[e - 1])) --e;
  return FromU32(std::u32string_view(u).substr(b, e - b));
}

std::string PyUpper(std::string_view s) {
  std::string out;
  icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), (int32_t)s.size())).toUpper(icu::Locale::getRoot()).toUTF8String(out);
  return out;
}

std::string PyLower(std::string_view s) {
  std::string out;
  icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), (int32_t)s.size())).toLower(icu::Locale::getRoot()).toUTF8String(out);
  return out;
}

// str.title(): a cased character after a cased one is lowered, others titled.
std::string PyTitle(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  for (char32_t c : ToU32(s)) {
    std::string one = FromU32(std::u32string(1, c));
    if (prev_cased) out += PyLower(one);
    else out += FromU32(std::u32string(1, (char32_t)u_totitle(c)));
    prev_cased = Cased(c);
  }
  return out;
}

std::string JinjaTitle(std::string_view s) {
  std::u32string u = ToU32(s);
  auto sep = [](char32_t c) { return PyIsSpace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<'; };
  std::string out;
  size_t i = 0;
  while (i < u.size()) {
    size_t b = i;
    bool is_sep = sep(u[i]);
    while (i < u.size() && sep(u[i]) == is_sep) ++i;
    std::u32string_view item(u.data() + b, i - b);
    out += PyUpper(FromU32(item.substr(0, 1))) + PyLower(FromU32(item.substr(1)));
  }
  return out;
}

std::string PyCapitalize(std::string_view s) {
  std::u32string u = ToU32(s);
  if (u.empty()) return "";
  return FromU32(std::u32string(1, (char32_t)u_totitle(u[0]))) + PyLower(FromU32(u.substr(1)));
}

std::vector<std::string> PySplit(std::string_view s, const Json& sep, long long maxsplit) {
  std::vector<std::string> out;
  if (sep.is_string()) {
    const std::string& d = sep.get_ref<const std::string&>();
    size_t pos = 0;
    while (maxsplit < 0 || (long long)out.size() < maxsplit) {
      size_t f = s.find(d, pos);
      if (f == std::string::npos) break;
      out.emplace_back(s.substr(pos, f - pos));
      pos = f + d.size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  std::u32string u = ToU32(s);
  size_t i = 0;
  while (true) {
    while (i < u.size() && PyIsSpace(u[i])) ++i;
    if (i >= u.size()) break;
    if (maxsplit >= 0 && (long long)out.size() == maxsplit) {
      out.push_back(FromU32(std::u32string_view(u).substr(i)));  // Python keeps the rest's trailing space
      break;
    }
    size_t b = i;
    while (i < u.size() && !PyIsSpace(u[i])) ++i;
    out.push_back(FromU32(std::u32string_view(u).substr(b, i - b)));
  }
  return out;
}

std::vector<std::string> PySplitLines(std::string_view s) {
  std::u32string u = ToU32(s);
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t i = 0; i < u.size(); ++i) {
    char32_t c = u[i];
    if (c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || c == 0x1c || c == 0x1d || c == 0x1e || c == 0x85 ||
        c == 0x2028 || c == 0x2029) {
      out.push_back(FromU32(std::u32string_view(u).substr(b, i - b)));
      if (c == '\r' && i + 1 < u.size() && u[i + 1] == '\n') ++i;
      b = i + 1;
    }
  }
  if (b < u.size()) out.push_back(FromU32(std::u32string_view(u).substr(b)));
  return out;
}

std::string PyReplace(std::string_view s, std::string_view from, std::string_view to, long long count) {
  std::string out;
  if (from.empty()) {  // Python inserts `to` between every code point
    std::u32string u = ToU32(s);
    long long n = 0;
    for (size_t i = 0; i <= u.size(); ++i) {
      if (count < 0 || n < count) { out += to; ++n; }
      if (i < u.size()) out += FromU32(std::u32string(1, u[i]));
    }
    return out;
  }
  size_t pos = 0;
  long long n = 0;
  while (count < 0 || n < count) {
    size_t f = s.find(from, pos);
    if (f == std::string::npos) break;
    out += s.substr(pos, f - pos);
    out += to;
    pos = f + from.size();
    ++n;
  }
  out += s.substr(pos);
  return out;
}

}  // namespace oc::llm::chat
