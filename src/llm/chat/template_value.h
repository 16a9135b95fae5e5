// Python's view of the template values (nlohmann ordered_json): str(), repr(),
// truth, equality and ordering, json.dumps as transformers' tojson calls it,
// and the code-point string operations Python's str has.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "llm/chat/template_ast.h"

namespace oc::llm::chat {

std::string PyStr(const Json& v);   // str(v): None, True, 1.5, [1, 'a'], {'k': 2}
std::string PyRepr(const Json& v);  // repr(v)
bool PyTruth(const Json& v);
bool PyEqual(const Json& a, const Json& b);
// a < b as Python orders numbers and strings; other pairs are an error.
Expected<bool> PyLess(const Json& a, const Json& b);
// json.dumps(v, ensure_ascii=False, indent=indent (<0: None), sort_keys=sort_keys)
std::string PyJsonDumps(const Json& v, int indent, bool sort_keys);

std::u32string ToU32(std::string_view s);
std::string FromU32(std::u32string_view s);
bool PyIsSpace(char32_t c);
std::string PyStrip(std::string_view s, const Json& chars, bool left, bool right);
std::string PyUpper(std::string_view s);
std::string PyLower(std::string_view s);
std::string PyTitle(std::string_view s);
std::string PyCapitalize(std::string_view s);
// Jinja's `title` filter (not str.title): each run between whitespace, '-',
// '(', '{', '[' or '<' gets its first character upper-cased, the rest lowered.
std::string JinjaTitle(std::string_view s);
std::vector<std::string> PySplit(std::string_view s, const Json& sep, long long maxsplit);
std::vector<std::string> PySplitLines(std::string_view s);
std::string PyReplace(std::string_view s, std::string_view from, std::string_view to, long long count);

}  // namespace oc::llm::chat
