// The aclprof API: a profiling session the program controls itself. Recording
// is the tracer's (runtime/trace.h); the reports are runtime/prof_report.h's.
// Under msprof (environment mode) the launcher owns the session: these calls
// then check their arguments and succeed without touching the recording, so
// the program's own start/stop does not cut msprof's data short.
#include <filesystem>

#include "acl/acl_internal.h"
#include "acl/acl_prof.h"
#include "runtime/prof_report.h"

struct aclprofConfig {
  std::vector<uint32_t> devices;
  aclprofAicoreMetrics metrics = ACL_AICORE_NONE;
  uint64_t data_types = 0;
};

using namespace oc::acl;
using oc::StrCat;

namespace {

constexpr uint64_t kKnownBits = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU |
                                ACL_PROF_L2CACHE | ACL_PROF_HCCL_TRACE | ACL_PROF_TRAINING_TRACE |
                                ACL_PROF_MSPROFTX | ACL_PROF_RUNTIME_API | ACL_PROF_TASK_TIME_L0 |
                                ACL_PROF_TASK_MEMORY | ACL_PROF_OP_ATTR;

struct ProfState {
  std::mutex mu;
  bool initialized = false;
  std::string dir;
  const aclprofConfig* running = nullptr;  // the config of the session that runs
  std::vector<oc::trace::ProfData> sessions;
};

ProfState& State() {
  static ProfState* s = new ProfState();
  return *s;
}

HandleSet& Configs() {
  static HandleSet* s = new HandleSet();
  return *s;
}

aclError CheckConfig(const aclprofConfig* c) {
  if (!c) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'profilerConfig' is NULL");
  if (!Configs().Contains(c))
    return Fail(ACL_ERROR_INVALID_PARAM, StrCat("profilerConfig ", PtrString(c),
                                                " is not a live aclprofConfig (never created or already destroyed)"));
  return ACL_SUCCESS;
}

}  // namespace

aclError aclprofInit(const char* profilerResultPath, size_t length) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = RequireInit()) return e;
    if (!profilerResultPath) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'profilerResultPath' is NULL");
    const size_t n = std::strlen(profilerResultPath);
    if (n == 0) return Fail(ACL_ERROR_INVALID_PARAM, "profilerResultPath is empty");
    if (length != n)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("length is ", length, " but profilerResultPath '",
                                                  profilerResultPath, "' has ", n, " characters"));
    ProfState& s = State();
    std::lock_guard<std::mutex> lk(s.mu);
    if (s.initialized)
      return Fail(ACL_ERROR_REPEAT_INITIALIZE, "profiling is already initialised; call aclprofFinalize first");
    std::error_code ec;
    std::filesystem::create_directories(profilerResultPath, ec);
    if (ec || !std::filesystem::is_directory(profilerResultPath))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("profilerResultPath '", profilerResultPath,
                                                  "' is not a directory and cannot be created",
                                                  ec ? ": " + ec.message() : std::string()));
    s.initialized = true;
    s.dir = profilerResultPath;
    s.sessions.clear();
    return ACL_SUCCESS;
  });
}

aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums, aclprofAicoreMetrics aicoreMetrics,
                                   const aclprofAicoreEvents* aicoreEvents, uint64_t dataTypeConfig) {
  return GuardValue<aclprofConfig*>(__func__, nullptr, [&]() -> aclprofConfig* {
    if (deviceNums > 0 && !deviceIdList) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("deviceIdList is NULL but deviceNums is ", deviceNums));
      return nullptr;
    }
    if (deviceNums > 64) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("deviceNums ", deviceNums, " is larger than the device count (1)"));
      return nullptr;
    }
    for (uint32_t i = 0; i < deviceNums; ++i) {
      if (deviceIdList[i] != 0) {
        Fail(ACL_ERROR_INVALID_PARAM, StrCat("deviceIdList[", i, "] is ", deviceIdList[i],
                                             " but the only device is 0 (the CPU)"));
        return nullptr;
      }
    }
    const int metric = EnumBits(aicoreMetrics);
    if (!((metric >= ACL_AICORE_ARITHMETIC_UTILIZATION && metric <= ACL_AICORE_MEMORY_ACCESS) ||
          metric == ACL_AICORE_NONE)) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("aicoreMetrics ", metric, " is not an aclprofAicoreMetrics value"));
      return nullptr;
    }
    if (aicoreEvents) {
      Fail(ACL_ERROR_INVALID_PARAM, "aicoreEvents must be NULL");
      return nullptr;
    }
    if (dataTypeConfig & ~kKnownBits) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("dataTypeConfig has unknown bits 0x", std::hex,
                                           dataTypeConfig & ~kKnownBits, " (known: ACL_PROF_* values)"));
      return nullptr;
    }
    auto* c = new aclprofConfig();
    c->devices.assign(deviceIdList, deviceIdList + deviceNums);
    c->metrics = static_cast<aclprofAicoreMetrics>(metric);
    c->data_types = dataTypeConfig;
    Configs().Add(c);
    return c;
  });
}

aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig) {
  return Guard(__func__, [&]() -> aclError {
    if (!profilerConfig) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'profilerConfig' is NULL");
    {
      ProfState& s = State();
      std::lock_guard<std::mutex> lk(s.mu);
      if (s.running == profilerConfig)
        return Fail(ACL_ERROR_INVALID_PARAM, "profilerConfig is in use by a running session; call aclprofStop first");
    }
    if (!Configs().Remove(profilerConfig))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("profilerConfig ", PtrString(profilerConfig),
                                                  " is not a live aclprofConfig (never created or already destroyed)"));
    delete profilerConfig;
    return ACL_SUCCESS;
  });
}

aclError aclprofStart(const aclprofConfig* profilerConfig) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckConfig(profilerConfig)) return e;
    ProfState& s = State();
    std::lock_guard<std::mutex> lk(s.mu);
    if (!s.initialized) return Fail(ACL_ERROR_PROF_NOT_RUN, "profiling is not initialised; call aclprofInit first");
    if (s.running) return Fail(ACL_ERROR_PROF_ALREADY_RUN, "a profiling session is already running");
    s.running = profilerConfig;
    const uint64_t bits = profilerConfig->data_types & oc::trace::kAll;
    if (!oc::trace::EnvSessionActive() && bits) oc::trace::Start(bits);
    Log(kLogInfo, StrCat("aclprofStart: recording data types 0x", std::hex, profilerConfig->data_types));
    return ACL_SUCCESS;
  });
}

aclError aclprofStop(const aclprofConfig* profilerConfig) {
  return Guard(__func__, [&]() -> aclError {
    if (aclError e = CheckConfig(profilerConfig)) return e;
    ProfState& s = State();
    std::lock_guard<std::mutex> lk(s.mu);
    if (!s.running) return Fail(ACL_ERROR_PROF_NOT_RUN, "no profiling session is running; call aclprofStart first");
    if (s.running != profilerConfig)
      return Fail(ACL_ERROR_INVALID_PARAM, "profilerConfig is not the config the running session was started with");
    s.running = nullptr;
    if (!oc::trace::EnvSessionActive()) {
      // Work queued before the stop still belongs to the session.
      SynchronizeAllStreams();
      oc::trace::Stop();
      s.sessions.push_back(oc::trace::TakeData());
    }
    return ACL_SUCCESS;
  });
}

aclError aclprofFinalize(void) {
  return Guard(__func__, [&]() -> aclError {
    ProfState& s = State();
    std::lock_guard<std::mutex> lk(s.mu);
    if (!s.initialized) return Fail(ACL_ERROR_PROF_NOT_RUN, "profiling is not initialised; call aclprofInit first");
    if (s.running && !oc::trace::EnvSessionActive()) {
      SynchronizeAllStreams();
      oc::trace::Stop();
      s.sessions.push_back(oc::trace::TakeData());
    }
    s.running = nullptr;
    s.initialized = false;
    std::vector<oc::trace::ProfData> sessions;
    sessions.swap(s.sessions);
    if (oc::trace::EnvSessionActive()) {
      Log(kLogInfo, "aclprofFinalize: running under msprof, which writes the reports");
      return ACL_SUCCESS;
    }
    const std::string ts = oc::trace::ProfTimestamp();
    const std::string out = (std::filesystem::path(s.dir) / ("PROF_" + ts)).string();
    oc::Status st = sessions.empty() ? oc::Status::Ok()
                                     : oc::trace::WriteReports(oc::trace::Merge(std::move(sessions)), out, ts);
    if (!st.ok()) return Fail(ACL_ERROR_PROFILING_FAILURE, StrCat("cannot write the reports: ", st.message()));
    Log(kLogInfo, StrCat("aclprofFinalize: reports in ", out));
    return ACL_SUCCESS;
  });
}
