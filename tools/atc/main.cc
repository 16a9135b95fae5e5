// atc: the offline model compiler. Command line and messages follow Huawei
// ATC's conventions (flags, "ATC run success" / coded error lines) so that
// existing scripts and habits carry over; the codes and wording are ours.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "atc_compile.h"
#include "atc_flags.h"

namespace {

int Fail(const oc::atc::AtcError& e) {
  std::fflush(stdout);
  std::fprintf(stderr, "ATC run failed, Please check the detail log, Try 'atc --help' for more information\n");
  std::fprintf(stderr, "%s: %s\n", e.code.c_str(), e.message.c_str());
  return 1;
}

int Main(int argc, char** argv) {
  using namespace oc::atc;
  AtcFlags flags;
  if (argc <= 1) {
    std::printf("%s", UsageText().c_str());
    return Fail({"E10003", "no parameters given"});
  }
  if (auto err = ParseFlags(argc, argv, &flags)) return Fail(*err);
  if (flags.help) {
    std::printf("%s", UsageText().c_str());
    return 0;
  }
  if (flags.version) {
    std::printf("ATC (OpenCANN) version %s\n", OPENCANN_VERSION);
    return 0;
  }
  std::printf("ATC start working now, please wait for a moment.\n");
  for (const std::string& w : flags.warnings) std::printf("[WARNING] ATC: %s\n", w.c_str());
  std::fflush(stdout);
  std::optional<AtcError> err;
  switch (flags.mode) {
    case 1: err = RunOmToJson(flags); break;
    case 6: err = RunOmSummary(flags); break;
    default: err = flags.singleop.empty() ? RunCompile(flags) : RunSingleOp(flags); break;
  }
  if (err) return Fail(*err);
  std::printf("ATC run success, welcome to the next use.\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    return Fail({"E19999", std::string("internal error: ") + e.what()});
  } catch (...) {
    return Fail({"E19999", "internal error (unknown exception)"});
  }
}
