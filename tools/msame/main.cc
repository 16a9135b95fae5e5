// msame: runs a .om model with AscendCL and reports latency and throughput.
//
// Written the way an application is: it includes <acl/acl.h>, links
// libascendcl and uses only the public API (init, device, context, stream,
// model load, datasets in device memory, execute, copy back).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "tensor_file.h"

namespace {

struct Options {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string outfmt = "BIN";
  long loop = 1;
  int device = 0;
  int threads = 0;  // --threads N: aclrtSetOpExecuteThreads(N); 0 = library default
  bool debug = false;
  bool profiler = false;  // --profiler true: aclprof reports in <output>/profiler/PROF_<ts>/
  // Dynamic shapes (CANN msame's flags): at most one of these.
  long dym_batch = 0;                     // --dymBatch N
  std::vector<int64_t> dym_hw;            // --dymHW H,W
  std::string dym_dims;                   // --dymDims "name:d0,d1;..."
  std::string dym_shape;                  // --dymShape "name:d0,d1;..."
  std::vector<size_t> output_size;        // --outputSize "bytes0,bytes1"
};

const char kUsage[] =
    "Usage: msame --model MODEL.om [--input A.npy,B.bin] [--output DIR] [--outfmt NPY|BIN|TXT]\n"
    "             [--loop N] [--device ID] [--threads N] [--debug] [--help]\n"
    "             [--dymBatch N | --dymHW H,W | --dymDims \"name:d0,d1;...\" |\n"
    "              --dymShape \"name:d0,d1;...\" [--outputSize \"bytes0,bytes1\"]]\n"
    "\n"
    "  --model    offline model made by atc\n"
    "  --input    one file per model input, comma separated: .npy (dtype and shape are\n"
    "             checked; numpy's types and, as ml_dtypes writes them, bfloat16, float8,\n"
    "             int4, float4) or raw binary (byte size is checked). Omitted: zero-filled inputs\n"
    "  --output   directory for <model>_output_<i>.<ext> (created if missing); omitted: not saved\n"
    "  --outfmt   NPY, BIN (raw bytes, default) or TXT (one row per innermost dimension)\n"
    "  --loop     number of inferences to time (default 1)\n"
    "  --device   device id (default 0; the CPU device is the only one)\n"
    "  --threads  CPU threads per inference, 1..256 (aclrtSetOpExecuteThreads); default:\n"
    "             OPENCANN_NUM_THREADS, else all hardware threads\n"
    "  --debug    print the model description and every run's latency\n"
    "  --profiler true: profile the load and the runs (aclprof API); the reports go to\n"
    "             <output>/profiler/PROF_<timestamp>/ (docs/profiling.md). Needs --output\n"
    "  --dymBatch    batch gear to run a model compiled with atc --dynamic_batch_size\n"
    "  --dymHW       height,width gear of a model compiled with --dynamic_image_size\n"
    "  --dymDims     gear of a --dynamic_dims model, as the full shape of each input\n"
    "                (\"x:4,16;mask:4,16\")\n"
    "  --dymShape    shapes to run a model with unknown dims at (any size): \"x:1,3,224,224;y:1,10\";\n"
    "                without it, the shapes of the .npy inputs (a .bin input needs it)\n"
    "  --outputSize  bytes to allocate per output, comma separated; without it, an output\n"
    "                whose size the model cannot state (unknown dims, NonZero, ...) is sized\n"
    "                by the run (aclmdlExecute allocates it)\n"
    "\n"
    "Library log: ASCEND_GLOBAL_LOG_LEVEL=0..3.\n";

// Reports an AscendCL failure with the library's own explanation.
bool Check(aclError rc, const char* call) {
  if (rc == ACL_SUCCESS) return true;
  std::fprintf(stderr, "[ERROR] %s failed with error %d: %s\n", call, rc, aclGetRecentErrMsg());
  return false;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

bool ParseArgs(int argc, char** argv, Options* o, bool* help) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto need = [&](std::string* out) {
      if (has_value) { *out = value; return true; }
      if (i + 1 >= argc) {
        std::fprintf(stderr, "[ERROR] %s needs a value\n", arg.c_str());
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--help" || arg == "-h") {
      *help = true;
    } else if (arg == "--debug") {
      o->debug = !has_value || value == "true" || value == "1";
    } else if (arg == "--model") {
      if (!need(&o->model)) return false;
    } else if (arg == "--profiler") {
      if (!need(&v)) return false;
      if (v != "true" && v != "false") {
        std::fprintf(stderr, "[ERROR] --profiler must be true or false, got '%s'\n", v.c_str());
        return false;
      }
      o->profiler = v == "true";
    } else if (arg == "--input") {
      if (!need(&v)) return false;
      o->inputs = Split(v, ',');
      for (auto& p : o->inputs)
        if (p.empty()) {
          std::fprintf(stderr, "[ERROR] --input has an empty entry: '%s'\n", v.c_str());
          return false;
        }
    } else if (arg == "--output") {
      if (!need(&o->output_dir)) return false;
    } else if (arg == "--outfmt") {
      if (!need(&v)) return false;
      std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::toupper(c); });
      if (v != "NPY" && v != "BIN" && v != "TXT") {
        std::fprintf(stderr, "[ERROR] --outfmt must be NPY, BIN or TXT, got '%s'\n", v.c_str());
        return false;
      }
      o->outfmt = v;
    } else if (arg == "--dymBatch") {
      if (!need(&v)) return false;
      char* end = nullptr;
      o->dym_batch = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || o->dym_batch < 1) {
        std::fprintf(stderr, "[ERROR] --dymBatch must be an integer >= 1, got '%s'\n", v.c_str());
        return false;
      }
    } else if (arg == "--dymHW") {
      if (!need(&v)) return false;
      auto parts = Split(v, ',');
      o->dym_hw.clear();
      for (const auto& p : parts) {
        char* end = nullptr;
        long long n = std::strtoll(p.c_str(), &end, 10);
        if (p.empty() || *end != '\0' || n < 1) break;
        o->dym_hw.push_back(n);
      }
      if (parts.size() != 2 || o->dym_hw.size() != 2) {
        std::fprintf(stderr, "[ERROR] --dymHW must be HEIGHT,WIDTH (integers >= 1), got '%s'\n", v.c_str());
        return false;
      }
    } else if (arg == "--dymDims") {
      if (!need(&o->dym_dims)) return false;
    } else if (arg == "--dymShape") {
      if (!need(&o->dym_shape)) return false;
    } else if (arg == "--outputSize") {
      if (!need(&v)) return false;
      for (const auto& p : Split(v, ',')) {
        char* end = nullptr;
        long long n = std::strtoll(p.c_str(), &end, 10);
        if (p.empty() || *end != '\0' || n < 0) {
          std::fprintf(stderr, "[ERROR] --outputSize must list byte counts >= 0, got '%s'\n", v.c_str());
          return false;
        }
        o->output_size.push_back(static_cast<size_t>(n));
      }
    } else if (arg == "--threads") {
      if (!need(&v)) return false;
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > 256) {
        std::fprintf(stderr, "[ERROR] --threads must be an integer in [1, 256], got '%s'\n", v.c_str());
        return false;
      }
      o->threads = static_cast<int>(n);
    } else if (arg == "--loop" || arg == "--device") {
      if (!need(&v)) return false;
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || (arg == "--loop" ? n < 1 || n > 100000000 : n < 0 || n > 1 << 20)) {
        std::fprintf(stderr, "[ERROR] %s must be %s, got '%s'\n", arg.c_str(),
                     arg == "--loop" ? "an integer >= 1" : "a device id >= 0", v.c_str());
        return false;
      }
      if (arg == "--loop") o->loop = n;
      else o->device = static_cast<int>(n);
    } else {
      std::fprintf(stderr, "[ERROR] unknown argument '%s' (see --help)\n", argv[i]);
      return false;
    }
  }
  if (!*help && o->model.empty()) {
    std::fprintf(stderr, "[ERROR] --model is required (see --help)\n");
    return false;
  }
  int dym = (o->dym_batch > 0) + !o->dym_hw.empty() + !o->dym_dims.empty() + !o->dym_shape.empty();
  if (dym > 1) {
    std::fprintf(stderr, "[ERROR] --dymBatch, --dymHW, --dymDims and --dymShape are mutually exclusive\n");
    return false;
  }
  return true;
}

// "name:d0,d1;name2:d0" -> {(name, dims)}; names may contain ':' (the last separates).
bool ParseNamedShapes(const char* flag, const std::string& text,
                      std::vector<std::pair<std::string, std::vector<int64_t>>>* out) {
  for (const std::string& item : Split(text, ';')) {
    if (item.empty()) continue;
    size_t colon = item.rfind(':');
    bool ok = colon != std::string::npos && colon > 0;
    std::vector<int64_t> dims;
    if (ok && colon + 1 < item.size()) {
      for (const std::string& d : Split(item.substr(colon + 1), ',')) {
        char* end = nullptr;
        long long n = std::strtoll(d.c_str(), &end, 10);
        if (d.empty() || *end != '\0' || n < 0) ok = false;
        dims.push_back(n);
      }
    }
    if (!ok) {
      std::fprintf(stderr, "[ERROR] %s: '%s' is not \"input_name:d0,d1,...\" with dims >= 0\n", flag, item.c_str());
      return false;
    }
    out->emplace_back(item.substr(0, colon), std::move(dims));
  }
  if (out->empty()) {
    std::fprintf(stderr, "[ERROR] %s lists no shapes\n", flag);
    return false;
  }
  return true;
}

using msame::ShapeString;
using msame::Tensor;

bool Describe(aclmdlDesc* desc, bool input, size_t i, Tensor* t) {
  aclmdlIODims d;
  aclError rc = input ? aclmdlGetInputDims(desc, i, &d) : aclmdlGetOutputDims(desc, i, &d);
  if (!Check(rc, input ? "aclmdlGetInputDims" : "aclmdlGetOutputDims")) return false;
  t->name = d.name;
  t->dims.assign(d.dims, d.dims + d.dimCount);
  t->dtype = input ? aclmdlGetInputDataType(desc, i) : aclmdlGetOutputDataType(desc, i);
  t->bytes = input ? aclmdlGetInputSizeByIndex(desc, i) : aclmdlGetOutputSizeByIndex(desc, i);
  t->data_bytes = t->bytes;
  return true;
}

bool Unknown(const std::vector<int64_t>& dims) {
  return std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; });
}

double Percentile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// Everything acquired from AscendCL, released in reverse order on every path.
class Session {
 public:
  ~Session() {
    // The profile is written before the teardown so it covers the runs only.
    if (prof_config) {
      aclprofStop(prof_config);
      aclprofDestroyConfig(prof_config);
    }
    if (prof_initialized) Check(aclprofFinalize(), "aclprofFinalize");
    for (auto* set : {&inputs, &outputs})
      for (Tensor& t : *set) {
        // The buffer's address: for an output aclmdlExecute allocated, memory it set there.
        void* mem = t.buf ? aclGetDataBufferAddr(t.buf) : t.dev;
        if (mem) aclrtFree(mem);
        if (t.buf) aclDestroyDataBuffer(t.buf);
      }
    if (in_ds) aclmdlDestroyDataset(in_ds);
    if (out_ds) aclmdlDestroyDataset(out_ds);
    if (desc) aclmdlDestroyDesc(desc);
    if (model_loaded) aclmdlUnload(model_id);
    if (stream) aclrtDestroyStream(stream);
    if (context) aclrtDestroyContext(context);
    if (device_set) aclrtResetDevice(device);
    if (initialized) aclFinalize();
  }

  bool initialized = false, device_set = false, model_loaded = false;
  bool prof_initialized = false;
  aclprofConfig* prof_config = nullptr;
  int device = 0;
  aclrtContext context = nullptr;
  aclrtStream stream = nullptr;
  uint32_t model_id = 0;
  aclmdlDesc* desc = nullptr;
  aclmdlDataset* in_ds = nullptr;
  aclmdlDataset* out_ds = nullptr;
  std::vector<Tensor> inputs, outputs;
};

int Run(const Options& o) {
  Session s;
  if (!Check(aclInit(nullptr), "aclInit")) return 1;
  s.initialized = true;
  if (!Check(aclrtSetDevice(o.device), "aclrtSetDevice")) return 1;
  s.device_set = true;
  s.device = o.device;
  if (o.threads > 0) {
    if (!Check(aclrtSetOpExecuteThreads(static_cast<uint32_t>(o.threads)), "aclrtSetOpExecuteThreads")) return 1;
    std::printf("[INFO] kernel threads: %d\n", o.threads);
  }
  if (!Check(aclrtCreateContext(&s.context, o.device), "aclrtCreateContext")) return 1;
  if (!Check(aclrtCreateStream(&s.stream), "aclrtCreateStream")) return 1;
  if (o.profiler) {
    if (o.output_dir.empty()) {
      std::fprintf(stderr, "[ERROR] --profiler true needs --output (the reports go to <output>/profiler)\n");
      return 2;
    }
    const std::string dir = (std::filesystem::path(o.output_dir) / "profiler").string();
    if (!Check(aclprofInit(dir.c_str(), dir.size()), "aclprofInit")) return 1;
    s.prof_initialized = true;
    uint32_t devices[1] = {static_cast<uint32_t>(o.device)};
    s.prof_config = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME);
    if (!s.prof_config) {
      Check(ACL_ERROR_INVALID_PARAM, "aclprofCreateConfig");
      return 1;
    }
    if (!Check(aclprofStart(s.prof_config), "aclprofStart")) return 1;
    std::printf("[INFO] profiling on: reports in %s/PROF_<timestamp>/\n", dir.c_str());
  }

  auto t0 = std::chrono::steady_clock::now();
  if (!Check(aclmdlLoadFromFile(o.model.c_str(), &s.model_id), "aclmdlLoadFromFile")) return 1;
  s.model_loaded = true;
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  s.desc = aclmdlCreateDesc();
  if (!s.desc || !Check(aclmdlGetDesc(s.desc, s.model_id), "aclmdlGetDesc")) return 1;
  size_t n_in = aclmdlGetNumInputs(s.desc), n_out = aclmdlGetNumOutputs(s.desc);
  std::printf("[INFO] model %s loaded in %.2f ms: %zu inputs, %zu outputs\n", o.model.c_str(), load_ms, n_in, n_out);

  s.inputs.resize(n_in);
  s.outputs.resize(n_out);
  for (size_t i = 0; i < n_in + n_out; ++i) {
    bool is_in = i < n_in;
    size_t k = is_in ? i : i - n_in;
    Tensor& t = is_in ? s.inputs[k] : s.outputs[k];
    if (!Describe(s.desc, is_in, k, &t)) return 1;
    if (o.debug)
      std::printf("[DEBUG] %s %zu: '%s' %s shape %s, %zu bytes\n", is_in ? "input" : "output", k, t.name.c_str(),
                  msame::ElemTypeName(t.dtype).c_str(), ShapeString(t.dims).c_str(), t.bytes);
  }
  // A gear model has one more input, the dynamic tensor: it takes no file.
  size_t dyn_index = n_in;
  for (size_t k = 0; k < n_in; ++k)
    if (s.inputs[k].name == ACL_DYNAMIC_TENSOR_NAME) dyn_index = k;
  const bool gear_flag = o.dym_batch > 0 || !o.dym_hw.empty() || !o.dym_dims.empty();
  if (gear_flag && dyn_index == n_in) {
    std::fprintf(stderr, "[ERROR] --dymBatch, --dymHW and --dymDims select a gear of a model compiled with atc "
                         "--dynamic_batch_size, --dynamic_image_size or --dynamic_dims; this model has no gears\n");
    return 1;
  }
  if (!gear_flag && dyn_index != n_in) {
    std::fprintf(stderr, "[ERROR] the model was compiled with gears: select one with --dymBatch, --dymHW or "
                         "--dymDims\n");
    return 1;
  }
  const size_t n_data = n_in - (dyn_index != n_in ? 1 : 0);
  if (!o.inputs.empty() && o.inputs.size() != n_data) {
    std::fprintf(stderr, "[ERROR] --input lists %zu files but the model has %zu inputs\n", o.inputs.size(), n_data);
    return 1;
  }
  // The files, one per model input in order (the dynamic tensor takes none).
  std::vector<msame::InputFile> files(n_in);
  for (size_t k = 0, file = 0; k < n_in && !o.inputs.empty(); ++k) {
    if (k == dyn_index) continue;
    std::string err = msame::ReadInputFile(o.inputs[file++], &files[k]);
    if (!err.empty()) {
      std::fprintf(stderr, "[ERROR] input %zu ('%s'): %s\n", k, s.inputs[k].name.c_str(), err.c_str());
      return 1;
    }
  }
  // This run's input shapes: the gear's, --dymShape's or a .npy file's in place
  // of unknown dims.
  std::vector<std::pair<std::string, std::vector<int64_t>>> named;
  if (!o.dym_dims.empty() && !ParseNamedShapes("--dymDims", o.dym_dims, &named)) return 1;
  if (!o.dym_shape.empty() && !ParseNamedShapes("--dymShape", o.dym_shape, &named)) return 1;
  for (const auto& [name, dims] : named) {
    bool found = false;
    for (size_t k = 0; k < n_in; ++k) found |= k != dyn_index && s.inputs[k].name == name;
    if (!found) {
      std::fprintf(stderr, "[ERROR] %s names '%s', which is not an input of the model\n",
                   o.dym_dims.empty() ? "--dymShape" : "--dymDims", name.c_str());
      return 1;
    }
  }
  aclmdlIODims gear_dims{};
  bool shapes_set = false;  // a model with free unknown dims: the shapes go in the input dataset's descs
  for (size_t k = 0; k < n_in; ++k) {
    if (k == dyn_index) continue;
    Tensor& t = s.inputs[k];
    const bool known = !Unknown(t.dims);
    size_t holes = 0;
    for (int64_t& d : t.dims) {
      if (d != -1) continue;
      if (o.dym_batch > 0) d = o.dym_batch;
      else if (!o.dym_hw.empty()) d = o.dym_hw[std::min<size_t>(holes, 1)];
      ++holes;
    }
    auto take = [&](const std::vector<int64_t>& dims, const std::string& from) {
      if (!t.dims.empty() && t.dims[0] != -2 && dims.size() != t.dims.size()) {
        std::fprintf(stderr, "[ERROR] input %zu ('%s'): the model has rank %zu %s, %s is %s\n", k, t.name.c_str(),
                     t.dims.size(), ShapeString(t.dims).c_str(), from.c_str(), ShapeString(dims).c_str());
        return false;
      }
      t.dims = dims;
      return true;
    };
    bool given = false;
    for (const auto& [name, dims] : named)
      if (name == t.name) {
        if (!take(dims, "the shape given")) return 1;
        given = true;
      }
    if (!given && Unknown(t.dims) && !gear_flag && files[k].is_npy &&
        !take(files[k].npy.shape, "the shape of '" + files[k].path + "'"))
      return 1;
    if (Unknown(t.dims)) {
      std::fprintf(stderr, "[ERROR] input %zu ('%s') has unknown dims %s: give its shape with --dymShape, or a .npy "
                           "file, which states it (or a gear with --dymBatch / --dymHW / --dymDims)\n",
                   k, t.name.c_str(), ShapeString(t.dims).c_str());
      return 1;
    }
    shapes_set |= !gear_flag && !known;
    if (!known || given) {
      // The desc's size is the largest gear's (or 0): this run's follows from its shape.
      const int64_t bytes = msame::TensorBytes(t.dtype, t.dims);
      if (bytes < 0) {
        std::fprintf(stderr, "[ERROR] input %zu ('%s') has %s, whose size at shape %s msame cannot compute\n", k,
                     t.name.c_str(), msame::ElemTypeName(t.dtype).c_str(), ShapeString(t.dims).c_str());
        return 1;
      }
      t.data_bytes = static_cast<size_t>(bytes);
      t.bytes = std::max(t.bytes, t.data_bytes);
    }
    for (int64_t d : t.dims)
      if (gear_dims.dimCount < ACL_MAX_DIM_CNT) gear_dims.dims[gear_dims.dimCount++] = d;
  }
  // Outputs: --outputSize where given; the size the model states where its
  // shape is known; else (a shape that follows from this run's input shapes,
  // or from the data) a buffer aclmdlExecute allocates.
  for (size_t k = 0; k < n_out; ++k) {
    Tensor& t = s.outputs[k];
    if (k < o.output_size.size()) t.bytes = o.output_size[k];
    else if (Unknown(t.dims)) t.allocate_in_run = true;
  }

  s.in_ds = aclmdlCreateDataset();
  s.out_ds = aclmdlCreateDataset();
  if (!s.in_ds || !s.out_ds) return Check(ACL_ERROR_BAD_ALLOC, "aclmdlCreateDataset"), 1;
  for (size_t i = 0; i < n_in + n_out; ++i) {
    bool is_in = i < n_in;
    size_t k = is_in ? i : i - n_in;
    Tensor& t = is_in ? s.inputs[k] : s.outputs[k];
    if (t.bytes > 0 && !t.allocate_in_run &&
        !Check(aclrtMalloc(&t.dev, t.bytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc"))
      return 1;
    t.buf = aclCreateDataBuffer(t.dev, t.dev ? t.bytes : 0);
    if (!t.buf) return Check(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer"), 1;
    if (!Check(aclmdlAddDatasetBuffer(is_in ? s.in_ds : s.out_ds, t.buf), "aclmdlAddDatasetBuffer")) return 1;
    if (!is_in) continue;
    if (t.bytes > 0 && !Check(aclrtMemset(t.dev, t.bytes, 0, t.bytes), "aclrtMemset")) return 1;
    if (k == dyn_index || o.inputs.empty()) continue;
    // Every input takes its file, an empty one (a dim of 0) too.
    std::vector<uint8_t> host;
    std::string err = msame::InputBytes(files[k], k, t, &host);
    if (!err.empty()) {
      std::fprintf(stderr, "[ERROR] %s\n", err.c_str());
      return 1;
    }
    if (!host.empty() &&
        !Check(aclrtMemcpy(t.dev, t.bytes, host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy"))
      return 1;
  }
  if (o.inputs.empty()) std::printf("[INFO] no --input given: all inputs are zero-filled\n");
  if (o.dym_batch > 0 &&
      !Check(aclmdlSetDynamicBatchSize(s.model_id, s.in_ds, dyn_index, static_cast<uint64_t>(o.dym_batch)),
             "aclmdlSetDynamicBatchSize"))
    return 1;
  if (!o.dym_hw.empty() &&
      !Check(aclmdlSetDynamicHWSize(s.model_id, s.in_ds, dyn_index, static_cast<uint64_t>(o.dym_hw[0]),
                                    static_cast<uint64_t>(o.dym_hw[1])),
             "aclmdlSetDynamicHWSize"))
    return 1;
  if (!o.dym_dims.empty() &&
      !Check(aclmdlSetInputDynamicDims(s.model_id, s.in_ds, dyn_index, &gear_dims), "aclmdlSetInputDynamicDims"))
    return 1;
  if (shapes_set) {
    for (size_t k = 0; k < n_in; ++k) {
      const Tensor& t = s.inputs[k];
      aclTensorDesc* d = aclCreateTensorDesc(t.dtype, static_cast<int>(t.dims.size()), t.dims.data(), ACL_FORMAT_ND);
      if (!d) return Check(ACL_ERROR_BAD_ALLOC, "aclCreateTensorDesc"), 1;
      aclError rc = aclmdlSetDatasetTensorDesc(s.in_ds, d, k);
      aclDestroyTensorDesc(d);
      if (!Check(rc, "aclmdlSetDatasetTensorDesc")) return 1;
    }
  }

  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(o.loop));
  auto start_all = std::chrono::steady_clock::now();
  for (long i = 0; i < o.loop; ++i) {
    auto a = std::chrono::steady_clock::now();
    // Outputs whose size only the run tells: aclmdlExecute allocates them (the
    // first run); later runs reuse that memory, the inputs being the same.
    const bool allocate = std::any_of(s.outputs.begin(), s.outputs.end(), [](const Tensor& t) {
      return t.allocate_in_run;
    });
    if (allocate) {
      if (!Check(aclmdlExecute(s.model_id, s.in_ds, s.out_ds), "aclmdlExecute")) return 1;
      for (Tensor& t : s.outputs) {
        if (!t.allocate_in_run) continue;
        t.allocate_in_run = false;
        t.dev = aclGetDataBufferAddr(t.buf);
        t.bytes = aclGetDataBufferSizeV2(t.buf);
      }
    } else {
      if (!Check(aclmdlExecuteAsync(s.model_id, s.in_ds, s.out_ds, s.stream), "aclmdlExecuteAsync")) return 1;
      if (!Check(aclrtSynchronizeStream(s.stream), "aclrtSynchronizeStream")) return 1;
    }
    double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
    ms.push_back(t);
    if (o.debug) std::printf("[DEBUG] run %ld: %.3f ms\n", i + 1, t);
  }
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_all).count();
  // The shapes the outputs were written with: from the current gear, or from
  // the output dataset's descs after a run at shapes set on the inputs (or one
  // whose output shapes depend on the data).
  for (size_t i = 0; i < n_out; ++i) {
    Tensor& t = s.outputs[i];
    if (!gear_flag && !shapes_set && !Unknown(t.dims)) continue;
    if (gear_flag) {
      aclmdlIODims d;
      if (!Check(aclmdlGetCurOutputDims(s.desc, i, &d), "aclmdlGetCurOutputDims")) return 1;
      t.dims.assign(d.dims, d.dims + d.dimCount);
    } else {
      aclTensorDesc* d = aclmdlGetDatasetTensorDesc(s.out_ds, i);
      if (!d) return Check(ACL_ERROR_INVALID_PARAM, "aclmdlGetDatasetTensorDesc"), 1;
      t.dims.clear();
      for (size_t k = 0; k < aclGetTensorDescNumDims(d); ++k) {
        int64_t v = 0;
        if (!Check(aclGetTensorDescDimV2(d, k, &v), "aclGetTensorDescDimV2")) return 1;
        t.dims.push_back(v);
      }
    }
    // A type msame cannot size (no AscendCL code) keeps the whole buffer.
    const int64_t bytes = msame::TensorBytes(t.dtype, t.dims);
    t.data_bytes = bytes >= 0 ? static_cast<size_t>(bytes) : t.bytes;
    if (o.debug)
      std::printf("[DEBUG] output %zu ('%s') written with shape %s\n", i, t.name.c_str(), ShapeString(t.dims).c_str());
  }

  if (!o.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.output_dir, ec);
    if (ec) {
      std::fprintf(stderr, "[ERROR] cannot create output directory '%s': %s\n", o.output_dir.c_str(),
                   ec.message().c_str());
      return 1;
    }
    std::string stem = std::filesystem::path(o.model).stem().string();
    for (size_t i = 0; i < n_out; ++i) {
      Tensor& t = s.outputs[i];
      std::vector<uint8_t> host(std::min(t.data_bytes, t.bytes));
      if (!host.empty() &&
          !Check(aclrtMemcpy(host.data(), host.size(), t.dev, host.size(), ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy"))
        return 1;
      const std::string path = (std::filesystem::path(o.output_dir) / (stem + "_output_" + std::to_string(i))).string();
      if (!msame::SaveOutput(o.outfmt, path, i, t, host)) return 1;
    }
  } else {
    std::printf("[INFO] no --output given: outputs are not saved\n");
  }

  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  std::printf("[INFO] %ld inference(s): latency ms min %.3f max %.3f mean %.3f median %.3f p99 %.3f\n", o.loop,
              sorted.front(), sorted.back(), mean, Percentile(sorted, 0.5), Percentile(sorted, 0.99));
  std::printf("[INFO] throughput: %.2f inferences/s\n", total_s > 0 ? static_cast<double>(o.loop) / total_s : 0.0);
  std::printf("Inference average time: %.3f ms\n", mean);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Line-buffered stdout: its [INFO] lines and stderr's [ERROR] lines stay in
  // the order they happen when both go to one file or pipe.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  bool help = false;
  if (!ParseArgs(argc, argv, &o, &help)) return 2;
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  int rc = Run(o);
  if (rc != 0) std::fprintf(stderr, "[ERROR] msame failed\n");
  return rc;
}
