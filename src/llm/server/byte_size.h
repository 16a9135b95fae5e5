// Sizes as the server's flags and the offline API's config take them:
// "1048576", "512MiB", "2G" (K / M / G are powers of 1024, with or without "iB").
#pragma once

#include <cstdint>
#include <string>

namespace oc::llm::server {

// False when `s` is not a positive size or overflows.
bool ParseByteSize(const std::string& s, int64_t* out);

}  // namespace oc::llm::server
