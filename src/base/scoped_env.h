// ScopedEnv: sets (or, given nullptr, unsets) an environment variable for one
// scope and restores what it was (or unsets it) on the way out, also when a
// test's ASSERT leaves early, so a setting never leaks into the tests that run
// after. For tests; not thread-safe (setenv is not).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace oc {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace oc
