// atc's command line: Huawei-ATC-style flags (--name=value or --name value),
// checked against one table so that an unknown flag, a flag we know but do not
// implement yet, and a bad value each get their own clear error.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace oc::atc {

// An ATC-style coded error: "E10001: <message>". Codes are ours (see README.md).
struct AtcError {
  std::string code;
  std::string message;
};

enum class LogLevel { kDebug, kInfo, kWarning, kError, kNull };

struct AtcFlags {
  bool help = false;
  bool version = false;
  int mode = 0;
  std::string model;
  std::optional<int> framework;
  std::string output;
  std::string input_shape;
  std::string input_format;
  std::string out_nodes;
  std::string soc_version;
  std::string precision_mode = "force_fp32";
  LogLevel log = LogLevel::kNull;
  std::string om;
  std::string json;
  std::vector<std::string> given;  // flag names in command-line order
};

// Parses argv; values are checked for syntax here and for meaning in Validate*.
std::optional<AtcError> ParseFlags(int argc, char** argv, AtcFlags* flags);

// "name:1,3,224,224;name2:8" -> {name: [1,3,224,224], name2: [8]}. Names may
// contain ':' (the last one separates the dims). Dynamic dims (-1, ranges) get
// an error that says dynamic shapes are not available yet.
std::optional<AtcError> ParseInputShape(const std::string& text,
                                        std::map<std::string, std::vector<int64_t>>* out);
// "node:0;node2:1" -> {"node:0", "node2:1"}.
std::optional<AtcError> ParseOutNodes(const std::string& text, std::vector<std::string>* out);

// Checks --framework / --soc_version / --precision_mode / --input_format values.
std::optional<AtcError> ValidateCompileFlags(const AtcFlags& flags);

std::string UsageText();

}  // namespace oc::atc
