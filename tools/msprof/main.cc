// msprof: profiles an unchanged AscendCL program.
//
//   msprof --application="./app arg1 arg2" --output=DIR
//   msprof --output=DIR ./app arg1 arg2
//
// The program runs with OPENCANN_PROF_DIR set; libascendcl starts recording
// at aclInit and writes its raw data into DIR/PROF_<ts>/data/ at aclFinalize
// (or at exit). msprof then merges the data of every process the command ran
// and writes the reports next to it (runtime/prof_report.h).
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/prof_report.h"

namespace fs = std::filesystem;

namespace {

const char kUsage[] =
    "Usage: msprof --application=\"PROGRAM ARGS\" --output=DIR [options]\n"
    "       msprof --output=DIR [options] PROGRAM ARGS...\n"
    "Runs PROGRAM (any program linked with libascendcl; it needs no change) and writes\n"
    "DIR/PROF_<timestamp>/: op_summary_<ts>.csv, op_statistic_<ts>.csv,\n"
    "api_statistic_<ts>.csv, msprof_<ts>.json (Chrome trace / Perfetto) and report.html.\n"
    "Options:\n"
    "  --application=CMD    the command line to run (through /bin/sh)\n"
    "  --output=DIR         where PROF_<timestamp>/ is created (default: the current directory)\n"
    "  --ascendcl=on|off    AscendCL API call times (default on)\n"
    "  --task-time=on|off   per-node execution times (default on)\n"
    "  CANN's hardware-counter switches (--aic-metrics, --aicpu, --l2, --hccl, --sys-*, ...)\n"
    "  are accepted and ignored: the CPU device has no such counters.\n"
    "  --help               this text\n"
    "See docs/profiling.md for the meaning of every column.\n";

// CANN msprof switches that select data this device does not have (hardware
// counters, AI CPU, collectives, system sampling): accepted, with a warning,
// so existing command lines keep working.
const char* const kNoEffect[] = {"--aic-metrics", "--ai-core", "--aicpu", "--l2", "--hccl", "--runtime-api",
                                 "--model-execution", "--sys-hardware-mem", "--sys-cpu-profiling",
                                 "--sys-profiling", "--sys-pid-profiling", "--sys-io-profiling",
                                 "--sys-interconnection-profiling", "--dvpp-profiling", "--host-sys",
                                 "--msproftx", "--training-trace", "--type"};

bool OnOff(const std::string& v, bool* out) {
  if (v == "on") *out = true;
  else if (v == "off") *out = false;
  else return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string application, output = ".";
  bool ascendcl = true, task_time = true;
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!command.empty() || (arg.rfind("--", 0) != 0 && arg != "-h")) {
      command.push_back(arg);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--") {
      for (++i; i < argc; ++i) command.push_back(argv[i]);
      break;
    }
    const size_t eq = arg.find('=');
    std::string key = arg.substr(0, eq), value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "[ERROR] %s needs a value (see --help)\n", key.c_str());
      return 2;
    }
    if (key == "--application") {
      application = value;
    } else if (key == "--output") {
      output = value;
    } else if (key == "--ascendcl" || key == "--task-time") {
      if (!OnOff(value, key == "--ascendcl" ? &ascendcl : &task_time)) {
        std::fprintf(stderr, "[ERROR] %s must be on or off, got '%s'\n", key.c_str(), value.c_str());
        return 2;
      }
    } else if (std::find_if(std::begin(kNoEffect), std::end(kNoEffect),
                            [&](const char* k) { return key == k; }) != std::end(kNoEffect)) {
      std::fprintf(stderr, "[WARNING] %s has no effect on the CPU device (no such counters); ignored\n",
                   key.c_str());
    } else {
      std::fprintf(stderr, "[ERROR] unknown option '%s' (see --help)\n", key.c_str());
      return 2;
    }
  }
  if (application.empty() && command.empty()) {
    std::fprintf(stderr, "[ERROR] no program to profile: give --application=\"PROGRAM ARGS\" (see --help)\n");
    return 2;
  }
  if (!application.empty() && !command.empty()) {
    std::fprintf(stderr, "[ERROR] give the program either with --application or after the options, not both\n");
    return 2;
  }
  uint64_t mask = (ascendcl ? oc::trace::kAclApi : 0) | (task_time ? oc::trace::kTaskTime : 0);
  if (!mask) {
    std::fprintf(stderr, "[ERROR] --ascendcl=off and --task-time=off leave nothing to record\n");
    return 2;
  }

  const std::string ts = oc::trace::ProfTimestamp();
  fs::path out = fs::path(output) / ("PROF_" + ts);
  for (int n = 1; fs::exists(out); ++n) out = fs::path(output) / ("PROF_" + ts + "_" + std::to_string(n));
  std::error_code ec;
  fs::create_directories(out / "data", ec);
  if (ec) {
    std::fprintf(stderr, "[ERROR] cannot create '%s': %s\n", out.c_str(), ec.message().c_str());
    return 1;
  }
  out = fs::absolute(out);

  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child < 0) {
    std::perror("[ERROR] fork");
    return 1;
  }
  if (child == 0) {
    ::setenv("OPENCANN_PROF_DIR", out.c_str(), 1);
    ::setenv("OPENCANN_PROF_MASK", std::to_string(mask).c_str(), 1);
    if (!application.empty()) {
      ::execl("/bin/sh", "sh", "-c", application.c_str(), static_cast<char*>(nullptr));
    } else {
      std::vector<char*> args;
      for (std::string& a : command) args.push_back(a.data());
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
    }
    std::fprintf(stderr, "[ERROR] cannot run '%s': %s\n",
                 application.empty() ? command[0].c_str() : "/bin/sh", std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      std::perror("[ERROR] waitpid");
      return 1;
    }
  }
  int app_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (app_rc != 0) std::fprintf(stderr, "[WARNING] the program exited with status %d\n", app_rc);

  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(out / "data", ec))
    if (entry.path().extension() == ".ocprof") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr,
                 "[ERROR] the program wrote no profiling data into %s: it must be linked with libascendcl and "
                 "call aclInit (and run a model or an API between aclInit and aclFinalize or exit)\n",
                 (out / "data").c_str());
    return app_rc ? app_rc : 1;
  }
  std::vector<oc::trace::ProfData> parts;
  for (const fs::path& f : files) {
    auto d = oc::trace::ReadRaw(f.string());
    if (!d.ok()) {
      std::fprintf(stderr, "[ERROR] %s\n", d.status().ToString().c_str());
      return 1;
    }
    parts.push_back(std::move(d).value());
  }
  oc::trace::ProfData all = oc::trace::Merge(std::move(parts));
  oc::Status st = oc::trace::WriteReports(all, out.string(), ts);
  if (!st.ok()) {
    std::fprintf(stderr, "[ERROR] %s\n", st.ToString().c_str());
    return 1;
  }
  if (all.dropped)
    std::fprintf(stderr, "[WARNING] %llu records were dropped (a ring buffer filled faster than it drained)\n",
                 static_cast<unsigned long long>(all.dropped));
  size_t nodes = 0;
  for (const auto& e : all.events) nodes += e.kind == oc::trace::Kind::kNode;
  std::printf("[INFO] msprof: %zu process file(s), %zu node executions, %zu records; reports in %s\n",
              files.size(), nodes, all.events.size(), out.c_str());
  return app_rc;
}
