// Recent-error messages, logging and status mapping for the C API.
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "acl/acl_internal.h"

namespace oc::acl {

namespace {
thread_local const char* t_function = nullptr;
thread_local std::string t_recent_error;

int ReadLogLevel() {
  const char* env = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
  if (!env || !*env) return kLogNone;
  char* end = nullptr;
  long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < kLogDebug || v > kLogNone) return kLogNone;
  return static_cast<int>(v);
}

const char* LevelName(int level) {
  switch (level) {
    case kLogDebug: return "DEBUG";
    case kLogInfo: return "INFO";
    case kLogWarning: return "WARNING";
    default: return "ERROR";
  }
}
}  // namespace

ApiScope::ApiScope(const char* fn) : prev_(t_function) { t_function = fn; }
ApiScope::~ApiScope() { t_function = prev_; }

bool LogEnabled(int level) {
  static const int threshold = ReadLogLevel();
  return level >= threshold && threshold != kLogNone;
}

void Log(int level, const std::string& msg) {
  if (!LogEnabled(level)) return;
  // One fprintf per line keeps lines from different threads whole.
  std::fprintf(stderr, "[OpenCANN][%s] %s\n", LevelName(level), msg.c_str());
}

aclError Fail(aclError code, const std::string& msg) {
  t_recent_error = t_function ? StrCat(t_function, ": ", msg) : msg;
  Log(kLogError, StrCat(t_recent_error, " (error ", code, ")"));
  return code;
}

aclError CodeFor(const Status& st, aclError fallback) {
  if (!st.ok() && st.api_code() != 0) return st.api_code();
  switch (st.code()) {
    case StatusCode::kOk: return ACL_SUCCESS;
    case StatusCode::kInvalidArgument: return ACL_ERROR_INVALID_PARAM;
    case StatusCode::kResourceExhausted: return ACL_ERROR_BAD_ALLOC;
    case StatusCode::kInternal: return ACL_ERROR_INTERNAL_ERROR;
    default: return fallback;
  }
}

aclError FailStatus(const Status& st, aclError fallback) {
  return Fail(CodeFor(st, fallback), st.message());
}

std::string PtrString(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

void HandleSet::Add(const void* p) {
  std::lock_guard<std::mutex> lk(mu_);
  live_.insert(p);
}
bool HandleSet::Remove(const void* p) {
  std::lock_guard<std::mutex> lk(mu_);
  return live_.erase(p) > 0;
}
bool HandleSet::Contains(const void* p) const {
  std::lock_guard<std::mutex> lk(mu_);
  return live_.count(p) > 0;
}

}  // namespace oc::acl

extern "C" const char* aclGetRecentErrMsg(void) { return oc::acl::t_recent_error.c_str(); }
