#include "llm/server/byte_size.h"

#include <limits>
#include <map>
#include <stdexcept>

namespace oc::llm::server {

bool ParseByteSize(const std::string& s, int64_t* out) {
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  static const std::map<std::string, int64_t> kUnits = {
      {"", 1},           {"B", 1},         {"K", 1LL << 10}, {"KiB", 1LL << 10}, {"k", 1LL << 10}, {"M", 1LL << 20},
      {"MiB", 1LL << 20}, {"m", 1LL << 20}, {"G", 1LL << 30}, {"GiB", 1LL << 30}, {"g", 1LL << 30}};
  auto it = kUnits.find(s.substr(used));
  if (it == kUnits.end() || n < 1 || n > std::numeric_limits<int64_t>::max() / it->second) return false;
  *out = n * it->second;
  return true;
}

}  // namespace oc::llm::server
