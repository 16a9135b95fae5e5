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
  std::string dynamic_batch_size;  // "1,4,8"
  std::string dynamic_image_size;  // "224,224;448,448"
  std::string dynamic_dims;        // "1,224;4,448"

  std::string input_format;
  std::string out_nodes;
  std::string soc_version;
  std::string precision_mode = "force_fp32";
  // --precision_mode_v2 as given ("" when absent); precision_mode then holds
  // its equivalent (origin -> must_keep_origin_dtype, mixed_bfloat16 as is).
  std::string precision_mode_v2;
  // --precision_mode=int8: "input:a.npy,b.npy;input2:c.npy" and minmax|percentile.
  std::string calibration_data;
  std::string calibration_method = "minmax";
  std::string fusion_switch_file;  // passes to switch off (fusion_switch.h)
  LogLevel log = LogLevel::kNull;
  std::string om;
  std::string json;
  std::string singleop;  // --singleop: the JSON list of operators
  std::string insert_op_conf;  // --insert_op_conf: static AIPP configuration
  std::string output_type;       // "FP16" or "node:0:FP16;y:FP32"
  std::string input_shape_range;  // "x:[1~8,3,224,224]"
  std::string input_fp16_nodes;  // "input1;input2"
  std::vector<std::string> given;  // flag names in command-line order
  std::vector<std::string> warnings;  // ATC tuning flags accepted and ignored (atc prints them)
  std::vector<std::string> ignored;   // their names
};

// The E10001 error "Value [value] for parameter [--flag] is invalid: why".
AtcError Invalid(const std::string& flag, const std::string& value, const std::string& why);

// Parses argv; values are checked for syntax here and for meaning in Validate*.
std::optional<AtcError> ParseFlags(int argc, char** argv, AtcFlags* flags);

// "name:1,3,224,224;name2:8" -> {name: [1,3,224,224], name2: [8]}. Names may
// contain ':' (the last one separates the dims). A dim may be -1 (unknown:
// set at run time, or by the gears of --dynamic_*); ranges ("1~8") get an
// error that says they are not supported.
std::optional<AtcError> ParseInputShape(const std::string& text,
                                        std::map<std::string, std::vector<int64_t>>* out);
// The same entries in the order written (the order --dynamic_dims refers to).
// Per input with a range dim, per dim {lo, hi} (hi -1: unbounded; {-1, -1}: not a range).
using InputRanges = std::map<std::string, std::vector<std::pair<int64_t, int64_t>>>;
// `ranges` null: lo~hi dims are refused.
std::optional<AtcError> ParseInputShapeOrdered(const std::string& text,
                                               std::vector<std::pair<std::string, std::vector<int64_t>>>* out,
                                               InputRanges* ranges = nullptr);
// "--dynamic_batch_size=1,4,8" -> {{1},{4},{8}}; the image-size and dims flags
// -> one list per ';'-separated gear. Checks syntax (integers >= 1) only.
std::optional<AtcError> ParseGearList(const std::string& flag, const std::string& text, bool batch,
                                      std::vector<std::vector<int64_t>>* out);
// "name:a.npy,b.npy;name2:c.npy" -> {{name, {a.npy, b.npy}}, {name2, {c.npy}}}
// in the order written (a name may come twice). Names may contain ':' (the
// last one separates the files); empty entries and file names are skipped.
std::optional<AtcError> ParseCalibrationData(const std::string& text,
                                             std::vector<std::pair<std::string, std::vector<std::string>>>* out);
// "node:0;node2:1" -> {"node:0", "node2:1"}.
std::optional<AtcError> ParseOutNodes(const std::string& text, std::vector<std::string>* out);

// Checks --framework / --soc_version / --precision_mode / --input_format values.
std::optional<AtcError> ValidateCompileFlags(const AtcFlags& flags);

std::string UsageText();

}  // namespace oc::atc
