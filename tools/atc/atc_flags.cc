#include "atc_flags.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

namespace oc::atc {
namespace {

struct FlagInfo {
  const char* name;
  const char* value;  // "" for switches
  const char* help;
};

// The flags atc implements, in the order --help lists them.
constexpr FlagInfo kFlags[] = {
    {"mode", "<0|1|6>", "0: compile a model to .om (default); 1: dump a .om as JSON (--om, --json); "
                        "6: print a .om summary (--om)"},
    {"model", "<path>", "the source model (.onnx, or .mindir with --framework=1); ONNX external-data files are "
                        "read from its folder"},
    {"framework", "<1|5>", "source framework: 5 = ONNX, 1 = MindSpore (MINDIR); 0 Caffe and 3 TensorFlow are "
                           "not supported"},
    {"output", "<path>", "output model path without suffix; '.om' is appended"},
    {"input_shape", "<\"name:n,c,h,w;...\">",
     "shapes for model inputs; -1 = a dim set at run time (or by a --dynamic_* gear)"},
    {"dynamic_batch_size", "<\"1,4,8\">", "batch gears: the -1 (first) dims of --input_shape take these values"},
    {"dynamic_image_size", "<\"h,w;h,w\">", "image-size gears: the two -1 dims of each input are height, width"},
    {"dynamic_dims", "<\"d,d;d,d\">", "gears giving one value per -1 of --input_shape, in order"},
    {"input_format", "<NCHW|NHWC|ND|NCDHW>", "layout of the inputs, recorded in the .om"},
    {"out_nodes", "<\"node:index;...\">", "use these node outputs (or tensor names) as the model outputs"},
    {"soc_version", "<host|x86_64|aarch64>", "target; only the host CPU is supported (default: host)"},
    {"precision_mode", "<force_fp32|must_keep_origin_dtype|allow_fp32_to_bf16|allow_mix_precision_bf16|int8>",
     "precision policy (default: force_fp32); the bf16 modes run Conv/MatMul/Gemm in bfloat16 with float32 "
     "accumulation (AMX-BF16 or AVX512_BF16; float32 on CPUs without them), everything else in float32; int8 "
     "quantizes Conv/MatMul/Gemm after calibration on --calibration_data"},
    {"precision_mode_v2", "<origin|mixed_bfloat16>",
     "the same policy in the newer spelling (origin = must_keep_origin_dtype, mixed_bfloat16 = the bf16 mode); "
     "not with --precision_mode"},
    {"calibration_data", "<\"name:a.npy,b.npy;name2:c.npy\">",
     "with --precision_mode=int8: float32 .npy samples per model input (the input's shape, or N of them stacked "
     "along a new first dim or the batch dim); Conv/MatMul/Gemm get int8 weights and uint8 activations"},
    {"calibration_method", "<minmax|percentile>",
     "int8 activation ranges: minmax (default) or percentile (99.99% of the calibration values)"},
    {"fusion_switch_file", "<path>",
     "optimisation passes to switch off: JSON {\"Switch\": {\"GraphFusion\": {\"<pass>\": \"off\"}}} or "
     "\"<pass>:off\" lines; \"ALL\" names every switchable pass (fuse-qdq, common-subexpressions, "
     "fold-conv-batchnorm, fuse-layernorm, fuse-gelu, fuse-attention, fuse-bias-activation, nchwc-layout); other "
     "fusion names are ignored with a warning"},
    {"log", "<debug|info|warning|error|null>", "log level on stdout (default: null); info lists each pass"},
    {"input_shape_range", "<\"name:[1~8,3,224,224];...\">",
     "dims given as ranges lo~hi (hi -1: unbounded): dynamic dims whose run-time values are checked against the "
     "range; the same as lo~hi dims in --input_shape"},
    {"output_type", "<FP32|FP16|UINT8 or \"node:index:FP16;...\">",
     "data type of all model outputs, or of the named outputs (node output index, or the output tensor's name)"},
    {"input_fp16_nodes", "<\"input1;input2\">", "these float32 inputs take float16 data (converted inside the model)"},
    {"insert_op_conf", "<aipp.cfg>",
     "static AIPP: uint8 images (RGB888_U8, YUV420SP_U8, YUV400_U8) preprocessed inside the model - channel swap, "
     "crop, colour-space conversion, mean/min/scale (docs/aipp.md)"},
    {"singleop", "<ops.json>",
     "compile the single operators the JSON lists (op, input_desc, output_desc, attr) into one .om each in the "
     "--output directory, for aclopSetModelDir / aclopLoad (docs/single_op.md)"},
    {"om", "<path>", "the .om to read in --mode=1 and --mode=6"},
    {"json", "<path>", "the JSON file to write in --mode=1"},
    {"help", "", "print this help and exit"},
    {"version", "", "print the version and exit"},
};

// ATC options we recognise but do not implement yet: a clear "not supported"
// beats "unknown parameter" for someone porting an ATC command line.
struct Unsupported {
  const char* name;
  const char* reason;
};
constexpr Unsupported kUnsupported[] = {
    {"weight", "Caffe models are not supported; ONNX and MINDIR models carry their weights in (or next to) the file"},
    {"is_input_adjust_hw_layout", "float16 / NC1HWC0 inputs are not available"},
    {"is_output_adjust_hw_layout", "float16 / NC1HWC0 outputs are not available"},
    {"dump_mode", "dumping is not available yet"},
};

// ATC options that tune how Ascend hardware runs a model, or where ATC keeps
// its own files: they change nothing a CPU computes, so a command line written
// for ATC runs here with a warning naming each one.
constexpr Unsupported kIgnored[] = {
    {"op_select_implmode", "kernels are chosen by CPU features"},
    {"optypelist_for_implmode", "kernels are chosen by CPU features"},
    {"enable_small_channel", "a hint for Ascend cores"},
    // These four change precision under the bf16 and int8 modes: RunCompile refuses them there.
    {"keep_dtype", "every op computes in the model's data types (float32) in this precision mode"},
    {"customize_dtypes", "every op computes in the model's data types (float32) in this precision mode"},
    {"modify_mixlist", "every op computes in the model's data types (float32) in this precision mode"},
    {"op_precision_mode", "every op computes in the model's data types (float32) in this precision mode"},
    {"compression_optimize_conf", "weight compression applies to Ascend cores"},
    {"buffer_optimize", "buffer optimisation applies to Ascend on-chip buffers"},
    {"disable_reuse_memory", "activation memory is always planned with reuse"},
    {"op_debug_level", "operator debug builds apply to Ascend kernels"},
    {"op_compiler_cache_mode", "there is no operator compile cache"},
    {"op_compiler_cache_dir", "there is no operator compile cache"},
    {"debug_dir", "there are no operator debug files"},
    {"auto_tune_mode", "there is no auto tuning"},
    {"host_env_os", "the .om is always made for the machine atc runs on (its loader checks the CPU)"},
    {"host_env_cpu", "the .om is always made for the machine atc runs on (its loader checks the CPU)"},
    {"virtual_type", "there is no device virtualisation"},
    {"check_report", "no pre-check report is written"},
};

const FlagInfo* FindFlag(const std::string& name) {
  for (const auto& f : kFlags) if (name == f.name) return &f;
  return nullptr;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string Suggestion(const std::string& name) {
  const char* best = nullptr;
  size_t best_d = 3;  // only suggest near misses
  for (const auto& f : kFlags) {
    size_t d = EditDistance(name, f.name);
    if (d < best_d) { best_d = d; best = f.name; }
  }
  return best ? std::string("; did you mean --") + best + "?" : std::string();
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); ++k) if (s[k] < '0' || s[k] > '9') return false;
  *out = std::strtoll(s.c_str(), nullptr, 10);
  return true;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) { parts.push_back(cur); cur.clear(); }
    else cur += c;
  }
  parts.push_back(cur);
  return parts;
}

std::optional<AtcError> Assign(AtcFlags* f, const std::string& name, const std::string& value) {
  if (value.empty()) return Invalid(name, value, "the value is empty");
  if (name == "mode") {
    int64_t m = -1;
    if (!ParseInt(value, &m)) return Invalid(name, value, "expected 0, 1 or 6");
    if (m == 3) return AtcError{"E10004", "--mode=3 (pre-check only) is not supported yet; use --mode=0"};
    if (m != 0 && m != 1 && m != 6) return Invalid(name, value, "expected 0 (compile), 1 (om to JSON) or 6 (om summary)");
    f->mode = static_cast<int>(m);
  } else if (name == "framework") {
    int64_t fw = -1;
    if (!ParseInt(value, &fw) || (fw != 0 && fw != 1 && fw != 3 && fw != 5))
      return Invalid(name, value, "expected 0 (Caffe), 1 (MindSpore), 3 (TensorFlow) or 5 (ONNX)");
    f->framework = static_cast<int>(fw);
  } else if (name == "log") {
    static const std::map<std::string, LogLevel> kLevels = {
        {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo}, {"warning", LogLevel::kWarning},
        {"error", LogLevel::kError}, {"null", LogLevel::kNull}};
    auto it = kLevels.find(value);
    if (it == kLevels.end()) return Invalid(name, value, "expected debug, info, warning, error or null");
    f->log = it->second;
  } else if (name == "model") { f->model = value; }
  else if (name == "output") { f->output = value; }
  else if (name == "input_shape") { f->input_shape = value; }
  else if (name == "dynamic_batch_size") { f->dynamic_batch_size = value; }
  else if (name == "dynamic_image_size") { f->dynamic_image_size = value; }
  else if (name == "dynamic_dims") { f->dynamic_dims = value; }
  else if (name == "input_format") { f->input_format = value; }
  else if (name == "out_nodes") { f->out_nodes = value; }
  else if (name == "soc_version") { f->soc_version = value; }
  else if (name == "precision_mode") { f->precision_mode = value; }
  else if (name == "precision_mode_v2") {
    f->precision_mode_v2 = value;
    f->precision_mode = value == "origin" ? "must_keep_origin_dtype" : value;
  }
  else if (name == "calibration_data") { f->calibration_data = value; }
  else if (name == "calibration_method") { f->calibration_method = value; }
  else if (name == "fusion_switch_file") { f->fusion_switch_file = value; }
  else if (name == "om") { f->om = value; }
  else if (name == "singleop") { f->singleop = value; }
  else if (name == "insert_op_conf") { f->insert_op_conf = value; }
  else if (name == "output_type") { f->output_type = value; }
  else if (name == "input_shape_range") { f->input_shape_range = value; }
  else if (name == "input_fp16_nodes") { f->input_fp16_nodes = value; }
  else if (name == "json") { f->json = value; }
  return std::nullopt;
}

}  // namespace

AtcError Invalid(const std::string& flag, const std::string& value, const std::string& why) {
  return {"E10001", "Value [" + value + "] for parameter [--" + flag + "] is invalid: " + why};
}

std::optional<AtcError> ParseFlags(int argc, char** argv, AtcFlags* flags) {
  std::set<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h") { flags->help = true; continue; }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2)
      return AtcError{"E10002", "unexpected argument [" + arg + "]; parameters are written --name=value"};
    std::string body = arg.substr(2);
    size_t eq = body.find('=');
    std::string name = body.substr(0, eq);
    bool has_value = eq != std::string::npos;
    std::string value = has_value ? body.substr(eq + 1) : std::string();
    const FlagInfo* info = FindFlag(name);
    if (!info) {
      bool ignored = false;
      for (const auto& u : kIgnored) {
        if (name != u.name) continue;
        if (!has_value && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) value = argv[++i];
        flags->warnings.push_back("--" + name + (value.empty() ? "" : "=" + value) + " is ignored: " + u.reason);
        flags->ignored.push_back(name);
        ignored = true;
      }
      if (ignored) continue;
      for (const auto& u : kUnsupported)
        if (name == u.name)
          return AtcError{"E10004", "parameter [--" + name + "] is not supported yet: " + u.reason};
      return AtcError{"E10002", "unknown parameter [--" + name + "]" + Suggestion(name) +
                                    " (see atc --help)"};
    }
    if (!*info->value) {  // a switch
      if (has_value) return Invalid(name, value, "this switch takes no value");
      if (name == "help") flags->help = true;
      if (name == "version") flags->version = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0)
        return AtcError{"E10003", "parameter [--" + name + "] needs a value: --" + name + "=" + info->value};
      value = argv[++i];
    }
    if (!seen.insert(name).second)
      return Invalid(name, value, "the parameter is given more than once");
    flags->given.push_back(name);
    if (auto err = Assign(flags, name, value)) return err;
  }
  // Per-op precision lists mean something once ops leave float32.
  if (flags->precision_mode != "force_fp32" && flags->precision_mode != "must_keep_origin_dtype")
    for (const std::string& name : flags->ignored)
      if (name == "keep_dtype" || name == "customize_dtypes" || name == "modify_mixlist" || name == "op_precision_mode")
        return AtcError{"E10004", "parameter [--" + name + "] is not supported yet with --precision_mode=" +
                                      flags->precision_mode + ": per-op precision lists are not applied (use "
                                      "force_fp32, or leave the list out)"};
  return std::nullopt;
}

std::optional<AtcError> ParseInputShape(const std::string& text,
                                        std::map<std::string, std::vector<int64_t>>* out) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> ordered;
  if (auto err = ParseInputShapeOrdered(text, &ordered)) return err;
  for (auto& [name, dims] : ordered) (*out)[name] = std::move(dims);
  return std::nullopt;
}

std::optional<AtcError> ParseGearList(const std::string& flag, const std::string& text, bool batch,
                                      std::vector<std::vector<int64_t>>* out) {
  std::vector<std::string> gears = Split(text, batch ? ',' : ';');
  if (!gears.empty() && gears.back().empty()) gears.pop_back();  // a trailing separator
  for (const std::string& g : gears) {
    std::vector<int64_t> values;
    for (const std::string& d : batch ? std::vector<std::string>{g} : Split(g, ',')) {
      std::string t = d;
      t.erase(0, t.find_first_not_of(' '));
      t.erase(t.find_last_not_of(' ') + 1);
      int64_t v = 0;
      if (!ParseInt(t, &v) || v < 1)
        return Invalid(flag, text, "gear value '" + d + "' is not an integer >= 1");
      values.push_back(v);
    }
    out->push_back(std::move(values));
  }
  if (out->empty()) return Invalid(flag, text, "no gears");
  return std::nullopt;
}

std::optional<AtcError> ParseInputShapeOrdered(const std::string& text,
                                               std::vector<std::pair<std::string, std::vector<int64_t>>>* out,
                                               InputRanges* ranges) {
  for (const std::string& item : Split(text, ';')) {
    if (item.empty()) continue;  // tolerate a trailing ';'
    size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return Invalid("input_shape", item, "expected \"input_name:dim0,dim1,...\"");
    std::string name = item.substr(0, colon);
    std::string dims_text = item.substr(colon + 1);
    dims_text.erase(std::remove(dims_text.begin(), dims_text.end(), ' '), dims_text.end());
    if (dims_text.size() >= 2 && dims_text.front() == '[' && dims_text.back() == ']')  // --input_shape_range form
      dims_text = dims_text.substr(1, dims_text.size() - 2);
    std::vector<int64_t> dims;
    std::vector<std::pair<int64_t, int64_t>> bounds;
    bool any_range = false;
    if (!dims_text.empty()) {
      for (const std::string& d : Split(dims_text, ',')) {
        int64_t v = 0;
        if (const size_t t = d.find('~'); t != std::string::npos) {
          int64_t lo = 0, hi = 0;
          if (!ranges || !ParseInt(d.substr(0, t), &lo) || !ParseInt(d.substr(t + 1), &hi) || lo < 0 ||
              (hi != -1 && hi < lo))
            return Invalid("input_shape", item, "range '" + d + "' is not lo~hi with 0 <= lo <= hi (hi -1: no bound)");
          dims.push_back(-1);
          bounds.emplace_back(lo, hi);
          any_range = true;
          continue;
        }
        if (d == "?")
          return Invalid("input_shape", item, "dim '?' is not supported: write -1 for a dim set at run time");
        if (!ParseInt(d, &v) || v < -1)
          return Invalid("input_shape", item, "dim '" + d + "' is not a non-negative integer, -1 or lo~hi");
        dims.push_back(v);
        bounds.emplace_back(-1, -1);
      }
    }
    if (any_range) (*ranges)[name] = std::move(bounds);
    for (const auto& e : *out)
      if (e.first == name) return Invalid("input_shape", text, "input '" + name + "' is given twice");
    out->emplace_back(name, std::move(dims));
  }
  if (out->empty()) return Invalid("input_shape", text, "no \"name:dims\" entries");
  return std::nullopt;
}

std::optional<AtcError> ParseCalibrationData(const std::string& text,
                                             std::vector<std::pair<std::string, std::vector<std::string>>>* out) {
  for (const std::string& entry : Split(text, ';')) {
    if (entry.empty()) continue;
    const size_t colon = entry.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == entry.size())
      return Invalid("calibration_data", text, "entry '" + entry + "' is not name:file.npy[,file.npy...]");
    std::vector<std::string> files;
    for (std::string& f : Split(entry.substr(colon + 1), ','))
      if (!f.empty()) files.push_back(std::move(f));
    out->emplace_back(entry.substr(0, colon), std::move(files));
  }
  return std::nullopt;
}

std::optional<AtcError> ParseOutNodes(const std::string& text, std::vector<std::string>* out) {
  for (const std::string& item : Split(text, ';')) {
    if (item.empty()) continue;
    out->push_back(item);
  }
  if (out->empty()) return Invalid("out_nodes", text, "expected \"node_name:output_index;...\"");
  return std::nullopt;
}

std::optional<AtcError> ValidateCompileFlags(const AtcFlags& f) {
  if (f.model.empty()) return AtcError{"E10003", "parameter [--model] is required in --mode=0"};
  if (!f.framework) return AtcError{"E10003", "parameter [--framework] is required in --mode=0 (5 = ONNX)"};
  if (f.output.empty()) return AtcError{"E10003", "parameter [--output] is required in --mode=0"};
  static const std::map<int, const char*> kFrameworks = {{0, "Caffe"}, {3, "TensorFlow"}};
  if (auto it = kFrameworks.find(*f.framework); it != kFrameworks.end())
    return AtcError{"E10004", std::string("--framework=") + std::to_string(*f.framework) + " (" + it->second +
                                  ") is not supported; ONNX (--framework=5) and MindSpore MINDIR (--framework=1) "
                                  "models can be compiled"};
  if (*f.framework == 1) {
    std::string ext = f.model.size() >= 4 ? f.model.substr(f.model.size() - 4) : "";
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".air")
      return AtcError{"E10004", "--framework=1 with an .air model is not supported yet; export MINDIR "
                                "(mindspore.export(..., file_format=\"MINDIR\"))"};
  }
  // The host CPU is the only target; Ascend SoC names are recognised so that
  // an unchanged Ascend command line gets a clear answer.
  const std::string& soc = f.soc_version;
  if (!soc.empty() && soc != "host") {
#if defined(__x86_64__)
    const char* host_arch = "x86_64";
#elif defined(__aarch64__)
    const char* host_arch = "aarch64";
#else
    const char* host_arch = "";
#endif
    std::string lower = soc;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.rfind("ascend", 0) == 0)
      return AtcError{"E10004", "--soc_version=" + soc + ": Ascend SoCs are not supported; OpenCANN compiles "
                                    "for the host CPU (omit --soc_version, or use host)"};
    if (soc == "x86_64" || soc == "aarch64") {
      if (soc != host_arch)
        return AtcError{"E10004", "--soc_version=" + soc + ": cross-compiling is not supported; this machine is " +
                                      host_arch + " (use host)"};
    } else {
      return Invalid("soc_version", soc, "expected host, x86_64 or aarch64");
    }
  }
  const bool given_v1 = std::find(f.given.begin(), f.given.end(), "precision_mode") != f.given.end();
  if (!f.precision_mode_v2.empty()) {
    const std::string& v2 = f.precision_mode_v2;
    if (given_v1)
      return AtcError{"E10001", "parameters [--precision_mode] and [--precision_mode_v2] are mutually exclusive; "
                                "give one"};
    static const std::set<std::string> kLaterV2 = {"fp16", "cube_fp16in_fp32out", "mixed_float16", "cube_hif8",
                                                   "mixed_hif8"};
    if (kLaterV2.count(v2))
      return AtcError{"E10004", "--precision_mode_v2=" + v2 + " is not supported yet: use origin (float32) or "
                                    "mixed_bfloat16 (Conv/MatMul/Gemm in bfloat16)"};
    if (v2 != "origin" && v2 != "mixed_bfloat16")
      return Invalid("precision_mode_v2", v2, "expected origin or mixed_bfloat16");
  } else {
    const std::string& pm = f.precision_mode;
    static const std::set<std::string> kLaterModes = {"force_fp16", "allow_fp32_to_fp16", "allow_mix_precision",
                                                      "allow_mix_precision_fp16", "force_lowerprecision",
                                                      "cube_fp16in_fp32out"};
    if (kLaterModes.count(pm))
      return AtcError{"E10004", "--precision_mode=" + pm + " is not supported yet: float16 compute is not "
                                    "available; use force_fp32, must_keep_origin_dtype, or bfloat16 through "
                                    "allow_fp32_to_bf16 / allow_mix_precision_bf16"};
    if (pm != "force_fp32" && pm != "must_keep_origin_dtype" && pm != "allow_fp32_to_bf16" &&
        pm != "allow_mix_precision_bf16" && pm != "int8")
      return Invalid("precision_mode", pm,
                     "expected force_fp32, must_keep_origin_dtype, allow_fp32_to_bf16, allow_mix_precision_bf16 or int8");
  }
  if (f.precision_mode == "int8" && f.calibration_data.empty())
    return AtcError{"E10003", "--precision_mode=int8 needs --calibration_data=\"input:samples.npy;...\" (float32 "
                              "sample inputs the activation ranges are measured on)"};
  if (f.precision_mode != "int8" && !f.calibration_data.empty())
    return AtcError{"E10001", "parameter [--calibration_data] is only used with --precision_mode=int8"};
  if (f.calibration_method != "minmax" && f.calibration_method != "percentile")
    return Invalid("calibration_method", f.calibration_method, "expected minmax or percentile");
  const std::string& fmt = f.input_format;
  if (!fmt.empty() && fmt != "NCHW" && fmt != "NHWC" && fmt != "ND" && fmt != "NCDHW")
    return Invalid("input_format", fmt, "expected NCHW, NHWC, ND or NCDHW");
  int gear_flags = !f.dynamic_batch_size.empty() + !f.dynamic_image_size.empty() + !f.dynamic_dims.empty();
  if (gear_flags > 1)
    return AtcError{"E10001", "parameters [--dynamic_batch_size], [--dynamic_image_size] and [--dynamic_dims] "
                              "are mutually exclusive; give one"};
  if (gear_flags == 1 && f.input_shape.find("-1") == std::string::npos && f.input_shape.find('~') == std::string::npos)
    return AtcError{"E10001", "--dynamic_batch_size, --dynamic_image_size and --dynamic_dims need --input_shape "
                              "with -1 for the dims the gears set (for example --input_shape=\"x:-1,3,224,224\" "
                              "--dynamic_batch_size=\"1,4,8\")"};
  for (const char* name : {"om", "json"})
    if (std::find(f.given.begin(), f.given.end(), name) != f.given.end())
      return AtcError{"E10001", std::string("parameter [--") + name + "] is only used with --mode=1 or --mode=6"};
  return std::nullopt;
}

std::string UsageText() {
  std::ostringstream os;
  os << "Usage: atc --model=<model.onnx> --framework=5 --output=<name> [options]\n"
        "       atc --model=<model.mindir> --framework=1 --output=<name> [options]\n"
        "       atc --mode=1 --om=<model.om> --json=<out.json>\n"
        "       atc --mode=6 --om=<model.om>\n\n"
        "Compiles an ONNX or MindSpore (MINDIR) model into an offline model (.om) for the OpenCANN CPU runtime.\n\n"
        "Options:\n";
  for (const auto& f : kFlags) {
    std::string lhs = std::string("  --") + f.name + (*f.value ? std::string("=") + f.value : "");
    os << lhs;
    if (lhs.size() < 44) os << std::string(44 - lhs.size(), ' ');
    else os << "\n" << std::string(44, ' ');
    os << f.help << "\n";
  }
  os << "\nExample:\n"
        "  atc --model=resnet50.onnx --framework=5 --output=resnet50 \\\n"
        "      --input_shape=\"input:1,3,224,224\" --input_format=NCHW\n";
  return os.str();
}

}  // namespace oc::atc
