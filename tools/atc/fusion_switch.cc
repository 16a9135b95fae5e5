#include "fusion_switch.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "passes/pipeline.h"

namespace oc::atc {
namespace {

AtcError Bad(const std::string& path, const std::string& why) {
  return Invalid("fusion_switch_file", path, why);
}

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// name -> true (on) / false (off), in file order; a name given twice must agree.
using Settings = std::vector<std::pair<std::string, bool>>;

std::optional<AtcError> Add(const std::string& path, const std::string& name, std::string value, Settings* s) {
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  if (value != "on" && value != "off")
    return Bad(path, "'" + name + "' is set to '" + value + "'; expected on or off");
  if (name.empty()) return Bad(path, "an entry has no pass name");
  for (const auto& [n, on] : *s)
    if (n == name && on != (value == "on")) return Bad(path, "'" + name + "' is set both on and off");
  s->emplace_back(name, value == "on");
  return std::nullopt;
}

std::optional<AtcError> ReadJson(const std::string& path, const std::string& text, Settings* s) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Bad(path, "not valid JSON");
  if (!doc.is_object() || !doc.contains("Switch") || !doc["Switch"].is_object())
    return Bad(path, "expected {\"Switch\": {\"GraphFusion\": {...}, \"UBFusion\": {...}}}");
  for (const auto& [group, entries] : doc["Switch"].items()) {
    if (group != "GraphFusion" && group != "UBFusion")
      return Bad(path, "unknown group \"" + group + "\" under \"Switch\" (expected GraphFusion or UBFusion)");
    if (!entries.is_object()) return Bad(path, "\"" + group + "\" must be an object of \"name\": \"on|off\"");
    for (const auto& [name, value] : entries.items()) {
      if (!value.is_string()) return Bad(path, "'" + name + "' must be set to \"on\" or \"off\"");
      if (auto err = Add(path, name, value.get<std::string>(), s)) return err;
    }
  }
  return std::nullopt;
}

std::optional<AtcError> ReadText(const std::string& path, const std::string& text, Settings* s) {
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const size_t colon = line.rfind(':');
    if (colon == std::string::npos)
      return Bad(path, "line " + std::to_string(number) + " is not 'name:on' or 'name:off'");
    if (auto err = Add(path, Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)), s)) return err;
  }
  return std::nullopt;
}

}  // namespace

std::optional<AtcError> ParseFusionSwitch(const std::string& path, const std::string& text, FusionSwitch* out) {
  Settings settings;
  const std::string body = Trim(text);
  auto err = !body.empty() && body[0] == '{' ? ReadJson(path, body, &settings) : ReadText(path, body, &settings);
  if (err) return err;

  std::map<std::string, bool> on;  // switchable pass -> runs
  for (const std::string& p : SwitchablePasses()) on[p] = true;
  for (const auto& [name, value] : settings)
    if (name == "ALL")
      for (auto& [p, v] : on) v = value;
  for (const auto& [name, value] : settings) {
    if (name == "ALL") continue;
    if (IsSwitchablePass(name)) {
      on[name] = value;
      continue;
    }
    for (const PassInfo& p : Passes())
      if (name == p.name) return Bad(path, "pass '" + name + "' is required and cannot be switched");
    out->ignored.push_back(name);
  }
  out->disabled.clear();
  for (const std::string& p : SwitchablePasses())
    if (!on[p]) out->disabled.push_back(p);
  return std::nullopt;
}

std::optional<AtcError> LoadFusionSwitch(const std::string& path, FusionSwitch* out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return Bad(path, "the file cannot be read");
  const std::streamoff size = f.tellg();
  if (size < 0) return Bad(path, "the file cannot be read");
  if (size > (1 << 20)) return Bad(path, "larger than 1 MiB; a switch file lists a few pass names");
  std::string text(static_cast<size_t>(size), '\0');
  f.seekg(0);
  if (!f.read(text.data(), size)) return Bad(path, "the file cannot be read");
  return ParseFusionSwitch(path, text, out);
}

}  // namespace oc::atc
