// aclInit / aclFinalize, the process-wide runtime state and the helpers the
// other API files share (current context, stream resolution).
#include <fstream>
#include <iterator>
#include <sstream>

#include "acl/acl_custom_op.h"
#include "acl/acl_internal.h"

namespace oc::acl {

namespace {

// A strict JSON syntax check (RFC 8259) that returns the offset of the first
// error. aclInit only needs to know the config is well formed; its keys
// (dump/profiling settings on an accelerator) have no meaning here.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}

  // Empty string on success, else "<what> at byte <offset>".
  std::string Check() {
    SkipWs();
    if (pos_ >= s_.size()) return "";  // an empty file counts as no settings
    if (s_[pos_] != '{') return Error("expected '{' (the config must be a JSON object)");
    if (!Value(0)) return err_;
    SkipWs();
    if (pos_ != s_.size()) return Error("unexpected text after the JSON object");
    return "";
  }

 private:
  std::string Error(const std::string& what) {
    if (err_.empty()) err_ = StrCat(what, " at byte ", pos_);
    return err_;
  }
  bool Fail(const std::string& what) {
    Error(what);
    return false;
  }
  void SkipWs() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool Literal(const char* word) {
    size_t n = std::char_traits<char>::length(word);
    if (s_.compare(pos_, n, word) != 0) return Fail("invalid literal");
    pos_ += n;
    return true;
  }
  bool String() {
    ++pos_;  // opening quote
    while (pos_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') { ++pos_; return true; }
      if (c < 0x20) return Fail("control character in string");
      if (c == '\\') {
        ++pos_;
        if (pos_ >= s_.size()) break;
        char e = s_[pos_];
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i)
            if (pos_ + i >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_ + i])))
              return Fail("bad \\u escape");
          pos_ += 4;
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return Fail("bad escape");
        }
      }
      ++pos_;
    }
    return Fail("unterminated string");
  }
  bool Number() {
    size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t b = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      return pos_ > b;
    };
    if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
    else if (!digits()) return Fail("bad number");
    if (pos_ < s_.size() && s_[pos_] == '.') { ++pos_; if (!digits()) return Fail("bad fraction"); }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return Fail("bad exponent");
    }
    return pos_ > start;
  }
  bool Value(int depth) {
    if (depth > 256) return Fail("nesting too deep");
    SkipWs();
    if (pos_ >= s_.size()) return Fail("unexpected end of file");
    char c = s_[pos_];
    if (c == '{') return Container(depth, '}', true);
    if (c == '[') return Container(depth, ']', false);
    if (c == '"') return String();
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return Number();
    return Fail(StrCat("unexpected character '", c, "'"));
  }
  bool Container(int depth, char close, bool object) {
    ++pos_;
    SkipWs();
    if (pos_ < s_.size() && s_[pos_] == close) { ++pos_; return true; }
    for (;;) {
      SkipWs();
      if (object) {
        if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a string key");
        if (!String()) return false;
        SkipWs();
        if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':'");
        ++pos_;
      }
      if (!Value(depth + 1)) return false;
      SkipWs();
      if (pos_ >= s_.size()) return Fail("unexpected end of file");
      if (s_[pos_] == ',') { ++pos_; continue; }
      if (s_[pos_] == close) { ++pos_; return true; }
      return Fail(StrCat("expected ',' or '", close, "'"));
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::string err_;
};

thread_local struct {
  const void* ptr = nullptr;
  uint64_t id = 0;
} t_current;

}  // namespace

Runtime& RuntimeState() {
  // Never destroyed: worker threads and atexit ordering must not race with it.
  static Runtime* r = new Runtime();
  return *r;
}

aclError RequireInit() {
  Runtime& r = RuntimeState();
  std::lock_guard<std::mutex> lk(r.mu);
  if (!r.initialized) return Fail(ACL_ERROR_UNINITIALIZE, "AscendCL is not initialised; call aclInit first");
  return ACL_SUCCESS;
}

ContextObj* CurrentContextLocked(Runtime& r) {
  if (!t_current.ptr) return nullptr;
  auto it = r.contexts.find(t_current.ptr);
  if (it == r.contexts.end() || it->second->id != t_current.id) return nullptr;
  return it->second.get();
}

void SetCurrentContextLocked(ContextObj* ctx) {
  t_current.ptr = ctx;
  t_current.id = ctx ? ctx->id : 0;
}

aclError ResolveStream(aclrtStream handle, std::shared_ptr<StreamObj>* out) {
  Runtime& r = RuntimeState();
  std::lock_guard<std::mutex> lk(r.mu);
  if (!r.initialized) return Fail(ACL_ERROR_UNINITIALIZE, "AscendCL is not initialised; call aclInit first");
  if (handle) {
    auto it = r.streams.find(handle);
    if (it == r.streams.end())
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("stream ", PtrString(handle),
                                                  " is not a live stream (never created or already destroyed)"));
    *out = it->second;
    return ACL_SUCCESS;
  }
  ContextObj* ctx = CurrentContextLocked(r);
  if (!ctx)
    return Fail(ACL_ERROR_RT_CONTEXT_NULL,
                "stream is NULL (the default stream) but this thread has no current context; call "
                "aclrtSetDevice or aclrtSetCurrentContext first");
  if (!ctx->default_stream) {
    ctx->default_stream = NewStreamLocked(r, ctx, true);
  }
  *out = r.streams.at(ctx->default_stream);
  return ACL_SUCCESS;
}

aclError SyncStream(StreamObj& s, int64_t timeout_ms) {
  if (!s.queue->WaitIdle(timeout_ms))
    return Fail(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                StrCat("the stream's queued work did not finish within ", timeout_ms, " ms"));
  Status st = s.queue->TakeError();
  if (!st.ok()) return FailStatus(st, ACL_ERROR_RT_MODEL_EXECUTE);
  return ACL_SUCCESS;
}

StreamObj* NewStreamLocked(Runtime& r, ContextObj* ctx, bool is_default) {
  auto s = std::make_shared<StreamObj>();
  s->ctx = ctx;
  s->is_default = is_default;
  s->queue = rt::CpuDevice::Get(ctx->device).CreateStream();
  r.streams[s.get()] = s;
  return s.get();
}

std::vector<std::shared_ptr<StreamObj>> DetachStreamsLocked(Runtime& r, ContextObj* ctx) {
  std::vector<std::shared_ptr<StreamObj>> out;
  for (auto it = r.streams.begin(); it != r.streams.end();) {
    if (!ctx || it->second->ctx == ctx) {
      if (it->second->is_default) it->second->ctx->default_stream = nullptr;
      out.push_back(std::move(it->second));
      it = r.streams.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

aclError SynchronizeAllStreams() {
  std::vector<std::shared_ptr<StreamObj>> all;
  {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    for (auto& [k, s] : r.streams) all.push_back(s);
  }
  aclError first = ACL_SUCCESS;
  for (auto& s : all) {
    aclError e = SyncStream(*s, -1);
    if (first == ACL_SUCCESS) first = e;
  }
  return first;
}

}  // namespace oc::acl

using namespace oc::acl;

aclError aclInit(const char* configPath) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::lock_guard<std::mutex> lk(r.mu);
    if (r.initialized)
      return Fail(ACL_ERROR_REPEAT_INITIALIZE, "AscendCL is already initialised in this process");
    if (configPath && *configPath) {
      std::ifstream f(configPath, std::ios::binary);
      if (!f)
        return Fail(ACL_ERROR_INVALID_FILE,
                    oc::StrCat("configPath '", configPath, "' cannot be opened for reading"));
      std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      std::string err = JsonChecker(text).Check();
      if (!err.empty())
        return Fail(ACL_ERROR_PARSE_FILE, oc::StrCat("configPath '", configPath, "' is not valid JSON: ", err));
    }
    r.initialized = true;
    r.ever_initialized = true;
    LoadCustomOpPackages();
    // msprof: OPENCANN_PROF_DIR set by the launcher starts a profiling session.
    if (oc::trace::StartEnvSession()) Log(kLogInfo, "aclInit: profiling for msprof (OPENCANN_PROF_DIR)");
    Log(kLogInfo, oc::StrCat("aclInit: initialised (config ", configPath ? configPath : "none", ")"));
    return ACL_SUCCESS;
  });
}

aclError aclFinalize(void) {
  return Guard(__func__, [&]() -> aclError {
    Runtime& r = RuntimeState();
    std::vector<std::shared_ptr<StreamObj>> streams;
    {
      std::lock_guard<std::mutex> lk(r.mu);
      if (!r.initialized) {
        if (r.ever_initialized) return Fail(ACL_ERROR_REPEAT_FINALIZE, "AscendCL is already finalised");
        return Fail(ACL_ERROR_UNINITIALIZE, "AscendCL was never initialised; call aclInit first");
      }
      r.initialized = false;
      streams = DetachStreamsLocked(r, nullptr);
    }
    streams.clear();  // finishes queued work, joins the workers
    UnloadAllModels();
    {
      std::lock_guard<std::mutex> lk(r.mu);
      r.events.clear();
      r.contexts.clear();
      r.devices.clear();
      SetCurrentContextLocked(nullptr);
    }
    oc::rt::MemStats mem = r.memory.Stats();
    size_t leaked = mem.live_blocks;
    ForgetDvppMemory();
    r.memory.FreeAll();
    oc::trace::FlushEnvSession();  // msprof: this process's data, written before the program exits
    Log(kLogInfo, oc::StrCat("aclFinalize: all resources released; memory pool: ", mem.pool.allocations,
                             " allocations (", mem.pool.cache_hits, " from the cache), peak in use ",
                             mem.pool.peak_in_use_bytes, " bytes, peak reserved ", mem.pool.peak_reserved_bytes,
                             " bytes", leaked ? oc::StrCat(", ", leaked, " blocks the application never freed") : ""));
    return ACL_SUCCESS;
  });
}

aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion) {
  return Guard(__func__, [&]() -> aclError {
    if (!majorVersion || !minorVersion || !patchVersion)
      return Fail(ACL_ERROR_INVALID_PARAM, oc::StrCat("argument '",
                                                      !majorVersion ? "majorVersion" : !minorVersion ? "minorVersion"
                                                                                                     : "patchVersion",
                                                      "' is NULL"));
    *majorVersion = ACL_MAJOR_VERSION;
    *minorVersion = ACL_MINOR_VERSION;
    *patchVersion = ACL_PATCH_VERSION;
    return ACL_SUCCESS;
  });
}
