// Typed access to the fields of tokenizer.json with errors that name the
// file and the field's path ("tokenizer.json: model.merges[3]: ...").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace oc::llm {

using Json = nlohmann::json;

// A place in a JSON document, for messages.
struct JsonPath {
  std::string file;
  std::string path;
  JsonPath Key(const std::string& key) const { return {file, path.empty() ? key : path + "." + key}; }
  JsonPath Index(size_t i) const { return {file, path + "[" + std::to_string(i) + "]"}; }
  std::string Name() const { return file + ": " + (path.empty() ? "(top level)" : path); }
};

inline Expected<const Json*> RequireField(const Json& obj, const std::string& key, const JsonPath& at) {
  if (!obj.is_object()) return InvalidFile(at.Name(), ": expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) return InvalidFile(at.Key(key).Name(), ": missing field");
  return &*it;
}

// The field, or null when it is absent or JSON null.
inline const Json* OptionalField(const Json& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

inline Expected<std::string> RequireString(const Json& obj, const std::string& key, const JsonPath& at) {
  OC_ASSIGN_OR_RETURN(const Json* v, RequireField(obj, key, at));
  if (!v->is_string()) return InvalidFile(at.Key(key).Name(), ": expected a string, got ", v->type_name());
  return v->get<std::string>();
}

inline Expected<bool> OptionalBool(const Json& obj, const std::string& key, bool fallback, const JsonPath& at) {
  const Json* v = OptionalField(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) return InvalidFile(at.Key(key).Name(), ": expected true or false, got ", v->type_name());
  return v->get<bool>();
}

inline Expected<std::optional<std::string>> OptionalString(const Json& obj, const std::string& key,
                                                           const JsonPath& at) {
  const Json* v = OptionalField(obj, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) return InvalidFile(at.Key(key).Name(), ": expected a string, got ", v->type_name());
  return std::optional<std::string>(v->get<std::string>());
}

inline Expected<int64_t> RequireInt(const Json& obj, const std::string& key, const JsonPath& at) {
  OC_ASSIGN_OR_RETURN(const Json* v, RequireField(obj, key, at));
  if (!v->is_number_integer()) return InvalidFile(at.Key(key).Name(), ": expected an integer, got ", v->type_name());
  return v->get<int64_t>();
}

// A component's "type" field.
inline Expected<std::string> TypeOf(const Json& obj, const JsonPath& at) { return RequireString(obj, "type", at); }

}  // namespace oc::llm
