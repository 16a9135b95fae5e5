// The C interface over src/train/: argument checks, the JSON spec, errors as
// codes plus a thread-local message, and no exception past the boundary.
#include "ms_backend/ms_backend.h"

#include <cstring>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/thread_pool.h"
#include "parser/mindir/mindir_parser.h"
#include "parser/onnx/onnx_parser.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "train/program.h"

struct OcmsStore {
  oc::train::TensorStore store;
  std::mutex mu;  // programs of one store run one at a time
};
struct OcmsProgram {
  OcmsStore* store;
  std::unique_ptr<oc::train::Program> program;
};

namespace {

using oc::Status;
using json = nlohmann::json;

thread_local std::string g_error;

int Fail(const Status& st) {
  g_error = st.ToString();
  return static_cast<int>(st.code());
}
int Ok() {
  g_error.clear();
  return 0;
}

// Runs fn (returning Status) with every exception turned into an error code.
template <typename F>
int Guard(F&& fn) {
  try {
    Status st = fn();
    return st.ok() ? Ok() : Fail(st);
  } catch (const std::exception& e) {
    return Fail(oc::Internal("ms_backend: ", e.what()));
  } catch (...) {
    return Fail(oc::Internal("ms_backend: unknown exception"));
  }
}

Status Need(const void* p, const char* what) {
  return p ? Status::Ok() : oc::InvalidArgument(what, " is NULL");
}

Status CopyString(const std::string& s, char* buf, size_t cap, size_t* needed) {
  if (needed) *needed = s.size() + 1;
  if (!buf || cap < s.size() + 1)
    return oc::OutOfRange("buffer of ", cap, " bytes is too small for ", s.size() + 1);
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return Status::Ok();
}

oc::Expected<oc::DataType> CheckedType(int dtype) {
  const auto dt = static_cast<oc::DataType>(dtype);
  if (dtype <= 0 || oc::DataTypeSize(dt) == 0 || dt == oc::DataType::kString)
    return oc::InvalidArgument("element type code ", dtype, " is not a fixed-size ONNX tensor type");
  return dt;
}

// The spec's JSON, checked key by key.
oc::Expected<oc::train::ProgramSpec> ParseSpec(const char* text) {
  oc::train::ProgramSpec spec;
  if (!text || !*text) return spec;
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return oc::InvalidArgument("spec: not a JSON object");
  static const char* kKeys[] = {"loss", "params", "return_grads", "fetches", "state_updates", "optimizer"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const char* k : kKeys) known |= it.key() == k;
    if (!known) return oc::InvalidArgument("spec: unknown key '", it.key(), "'");
  }
  auto strings = [&](const json& v, const char* what) -> oc::Expected<std::vector<std::string>> {
    if (!v.is_array()) return oc::InvalidArgument("spec: '", what, "' must be a list of names");
    std::vector<std::string> out;
    for (const json& e : v) {
      if (!e.is_string()) return oc::InvalidArgument("spec: '", what, "' must be a list of names");
      out.push_back(e.get<std::string>());
    }
    return out;
  };
  if (j.contains("loss")) {
    if (!j["loss"].is_string()) return oc::InvalidArgument("spec: 'loss' must be a value name");
    spec.loss = j["loss"].get<std::string>();
  }
  if (j.contains("params")) {
    OC_ASSIGN_OR_RETURN(spec.params, strings(j["params"], "params"));
  }
  if (j.contains("fetches")) {
    OC_ASSIGN_OR_RETURN(spec.fetches, strings(j["fetches"], "fetches"));
  }
  if (j.contains("return_grads")) {
    if (!j["return_grads"].is_boolean()) return oc::InvalidArgument("spec: 'return_grads' must be true or false");
    spec.return_grads = j["return_grads"].get<bool>();
  }
  if (j.contains("state_updates")) {
    const json& su = j["state_updates"];
    if (!su.is_array()) return oc::InvalidArgument("spec: 'state_updates' must be a list of [value, stored] pairs");
    for (const json& e : su) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_string())
        return oc::InvalidArgument("spec: 'state_updates' must be a list of [value, stored] pairs");
      spec.state_updates.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
    }
  }
  if (j.contains("optimizer")) {
    const json& o = j["optimizer"];
    if (!o.is_object()) return oc::InvalidArgument("spec: 'optimizer' must be an object");
    auto& opt = spec.optimizer;
    using Kind = oc::train::OptimizerSpec::Kind;
    const std::string type = o.value("type", "");
    if (type == "sgd")
      opt.kind = Kind::kSgd;
    else if (type == "adam")
      opt.kind = Kind::kAdam;
    else
      return oc::NotSupported("spec: optimizer type '", type, "' (supported: sgd, adam)");
    static const char* kOptKeys[] = {"type", "momentum", "dampening", "nesterov", "beta1", "beta2", "epsilon",
                                     "decoupled_weight_decay", "bias_correction", "epsilon_mode", "weight_decay",
                                     "max_grad_norm", "state_prefixes", "step_name"};
    for (auto it = o.begin(); it != o.end(); ++it) {
      bool known = false;
      for (const char* k : kOptKeys) known |= it.key() == k;
      if (!known) return oc::InvalidArgument("spec: unknown optimizer key '", it.key(), "'");
    }
    auto number = [&](const char* key, double& out) -> Status {
      if (!o.contains(key)) return Status::Ok();
      if (!o[key].is_number()) return oc::InvalidArgument("spec: optimizer '", key, "' must be a number");
      out = o[key].get<double>();
      return Status::Ok();
    };
    auto flag = [&](const char* key, bool& out) -> Status {
      if (!o.contains(key)) return Status::Ok();
      if (!o[key].is_boolean()) return oc::InvalidArgument("spec: optimizer '", key, "' must be true or false");
      out = o[key].get<bool>();
      return Status::Ok();
    };
    OC_RETURN_IF_ERROR(number("momentum", opt.momentum));
    OC_RETURN_IF_ERROR(number("dampening", opt.dampening));
    OC_RETURN_IF_ERROR(number("beta1", opt.beta1));
    OC_RETURN_IF_ERROR(number("beta2", opt.beta2));
    OC_RETURN_IF_ERROR(number("epsilon", opt.epsilon));
    OC_RETURN_IF_ERROR(number("max_grad_norm", opt.max_grad_norm));
    OC_RETURN_IF_ERROR(flag("nesterov", opt.nesterov));
    OC_RETURN_IF_ERROR(flag("decoupled_weight_decay", opt.decoupled_weight_decay));
    OC_RETURN_IF_ERROR(flag("bias_correction", opt.bias_correction));
    if (o.contains("epsilon_mode")) {
      if (!o["epsilon_mode"].is_string()) return oc::InvalidArgument("spec: optimizer 'epsilon_mode' must be a string");
      opt.epsilon_mode = o["epsilon_mode"].get<std::string>();
    }
    if (o.contains("step_name")) {
      if (!o["step_name"].is_string()) return oc::InvalidArgument("spec: optimizer 'step_name' must be a string");
      opt.step_name = o["step_name"].get<std::string>();
    }
    if (o.contains("state_prefixes")) {
      OC_ASSIGN_OR_RETURN(opt.state_prefixes, strings(o["state_prefixes"], "state_prefixes"));
    }
    if (o.contains("weight_decay")) {
      const json& wd = o["weight_decay"];
      if (wd.is_number()) {
        opt.weight_decay.assign(spec.params.size(), wd.get<double>());
      } else if (wd.is_array()) {
        for (const json& e : wd) {
          if (!e.is_number()) return oc::InvalidArgument("spec: optimizer 'weight_decay' must be numbers");
          opt.weight_decay.push_back(e.get<double>());
        }
      } else {
        return oc::InvalidArgument("spec: optimizer 'weight_decay' must be a number or a list per parameter");
      }
    }
  }
  return spec;
}

Status Info(const oc::train::TensorInfo& t, char* name, size_t name_cap, int* dtype, int64_t* dims, int* ndim) {
  if (name) OC_RETURN_IF_ERROR(CopyString(t.name, name, name_cap, nullptr));
  if (dtype) *dtype = static_cast<int>(t.dtype);
  if (ndim) {
    const int cap = *ndim;
    *ndim = static_cast<int>(t.shape.size());
    if (dims) {
      if (cap < *ndim) return oc::OutOfRange("rank ", *ndim, " does not fit dims of ", cap);
      for (int i = 0; i < *ndim; ++i) dims[i] = t.shape[static_cast<size_t>(i)];
    }
  }
  return Status::Ok();
}

}  // namespace

extern "C" {

const char* ocms_last_error(void) { return g_error.c_str(); }
int ocms_abi_version(void) { return 1; }

int ocms_set_num_threads(int num_threads) {
  return Guard([&]() -> Status {
    const int n = num_threads > 0 ? num_threads : static_cast<int>(std::thread::hardware_concurrency());
    oc::ThreadPool::SetGlobalThreads(n > 0 ? n : 1);
    return Status::Ok();
  });
}

OcmsStore* ocms_store_new(void) {
  try {
    return new OcmsStore();
  } catch (...) {
    g_error = "ms_backend: out of memory";
    return nullptr;
  }
}
void ocms_store_free(OcmsStore* store) { delete store; }

int ocms_store_set(OcmsStore* store, const char* name, int dtype, const int64_t* dims, int ndim, const void* data) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(store, "store"));
    OC_RETURN_IF_ERROR(Need(name, "name"));
    if (ndim < 0 || ndim > 32 || (ndim > 0 && !dims)) return oc::InvalidArgument("ndim ", ndim, " or dims invalid");
    OC_ASSIGN_OR_RETURN(oc::DataType dt, CheckedType(dtype));
    std::lock_guard<std::mutex> lock(store->mu);
    return store->store.Set(name, dt, std::vector<int64_t>(dims, dims + ndim), data);
  });
}

int ocms_store_info(const OcmsStore* store, const char* name, int* dtype, int64_t* dims, int* ndim) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(store, "store"));
    OC_RETURN_IF_ERROR(Need(name, "name"));
    const oc::train::StoredTensor* t = store->store.Find(name);
    if (!t) return oc::NotFound("no stored tensor '", name, "'");
    return Info({name, t->dtype, t->shape, t->bytes()}, nullptr, 0, dtype, dims, ndim);
  });
}

int ocms_store_get(const OcmsStore* store, const char* name, void* data, size_t bytes) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(store, "store"));
    OC_RETURN_IF_ERROR(Need(name, "name"));
    const oc::train::StoredTensor* t = store->store.Find(name);
    if (!t) return oc::NotFound("no stored tensor '", name, "'");
    if (bytes != t->bytes())
      return oc::InvalidArgument("stored tensor '", name, "' has ", t->bytes(), " bytes, the buffer ", bytes);
    if (bytes) {
      OC_RETURN_IF_ERROR(Need(data, "data"));
      std::memcpy(data, t->data.data(), bytes);
    }
    return Status::Ok();
  });
}

int ocms_store_remove(OcmsStore* store, const char* name) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(store, "store"));
    OC_RETURN_IF_ERROR(Need(name, "name"));
    std::lock_guard<std::mutex> lock(store->mu);
    return store->store.Remove(name);
  });
}

int ocms_store_names(const OcmsStore* store, char* buf, size_t cap, size_t* needed) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(store, "store"));
    std::string all;
    for (const std::string& n : store->store.Names()) all += (all.empty() ? "" : "\n") + n;
    return CopyString(all, buf, cap, needed);
  });
}

int ocms_compile(OcmsStore* store, const void* onnx, size_t size, const char* spec_json, OcmsProgram** program) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(store, "store"));
    OC_RETURN_IF_ERROR(Need(program, "program"));
    *program = nullptr;
    OC_ASSIGN_OR_RETURN(oc::train::ProgramSpec spec, ParseSpec(spec_json));
    std::unique_ptr<oc::Graph> graph;
    if (onnx || size) {
      OC_RETURN_IF_ERROR(Need(onnx, "onnx"));
      OC_ASSIGN_OR_RETURN(graph, oc::ParseOnnxBytes(onnx, size, "", {}));
    }
    std::lock_guard<std::mutex> lock(store->mu);
    OC_ASSIGN_OR_RETURN(std::unique_ptr<oc::train::Program> p,
                        oc::train::Program::Compile(std::move(graph), spec, store->store));
    *program = new OcmsProgram{store, std::move(p)};
    return Status::Ok();
  });
}

int ocms_compile_mindir(OcmsStore* store, const void* mindir, size_t size, const char* spec_json,
                        OcmsProgram** program) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(store, "store"));
    OC_RETURN_IF_ERROR(Need(program, "program"));
    OC_RETURN_IF_ERROR(Need(mindir, "mindir"));
    *program = nullptr;
    OC_ASSIGN_OR_RETURN(oc::train::ProgramSpec spec, ParseSpec(spec_json));
    OC_ASSIGN_OR_RETURN(std::unique_ptr<oc::Graph> graph, oc::ParseMindirBytes(mindir, size, {}));
    if (spec.fetches.empty())
      for (const oc::Value* v : graph->outputs) spec.fetches.push_back(v->name);
    std::lock_guard<std::mutex> lock(store->mu);
    OC_ASSIGN_OR_RETURN(std::unique_ptr<oc::train::Program> p,
                        oc::train::Program::Compile(std::move(graph), spec, store->store));
    *program = new OcmsProgram{store, std::move(p)};
    return Status::Ok();
  });
}

void ocms_program_free(OcmsProgram* program) { delete program; }

size_t ocms_program_count(const OcmsProgram* program, int is_fetch) {
  if (!program) return 0;
  return is_fetch ? program->program->fetches().size() : program->program->feeds().size();
}

int ocms_program_io(const OcmsProgram* program, int is_fetch, size_t index, char* name, size_t name_cap, int* dtype,
                    int64_t* dims, int* ndim) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(program, "program"));
    const auto& list = is_fetch ? program->program->fetches() : program->program->feeds();
    if (index >= list.size())
      return oc::OutOfRange(is_fetch ? "fetch " : "feed ", index, " of ", list.size());
    return Info(list[index], name, name_cap, dtype, dims, ndim);
  });
}

int ocms_program_run(OcmsProgram* program, const void* const* feeds, size_t num_feeds, void* const* fetches,
                     size_t num_fetches, float lr) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(program, "program"));
    if (num_feeds && !feeds) return oc::InvalidArgument("feeds is NULL");
    if (num_fetches && !fetches) return oc::InvalidArgument("fetches is NULL");
    std::lock_guard<std::mutex> lock(program->store->mu);  // no allocation per step: the caller's arrays as spans
    return program->program->Run({feeds, num_feeds}, {fetches, num_fetches}, lr, oc::ThreadPool::Global());
  });
}

int ocms_infer(const void* onnx, size_t size, char* out, size_t cap, size_t* needed) {
  return Guard([&]() -> Status {
    OC_RETURN_IF_ERROR(Need(onnx, "onnx"));
    OC_ASSIGN_OR_RETURN(std::unique_ptr<oc::Graph> g, oc::ParseOnnxBytes(onnx, size, "", {}));
    OC_RETURN_IF_ERROR(oc::RunShapeInference(*g, oc::CompileOptions{}));
    json j = json::array();
    for (const oc::Value* v : g->outputs) {
      json shape = json::array();
      for (int64_t d : v->shape) shape.push_back(d);
      j.push_back({{"name", v->name}, {"dtype", static_cast<int>(v->dtype)},
                   {"shape", v->has_shape ? shape : json(nullptr)}});
    }
    return CopyString(j.dump(), out, cap, needed);
  });
}

}  // extern "C"
