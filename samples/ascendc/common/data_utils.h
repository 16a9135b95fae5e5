// Small helpers the Ascend C samples' host programs share: raw binary files in
// and out, and a check on AscendCL calls.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "acl/acl.h"

#define CHECK_ACL(call)                                                                              \
  do {                                                                                               \
    aclError rc_ = (call);                                                                           \
    if (rc_ != ACL_SUCCESS) {                                                                        \
      std::fprintf(stderr, "%s:%d: %s failed with %d: %s\n", __FILE__, __LINE__, #call, (int)rc_,    \
                   aclGetRecentErrMsg());                                                            \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

inline bool ReadFile(const std::string& path, void* buf, size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    return false;
  }
  size_t got = std::fread(buf, 1, bytes, f);
  std::fclose(f);
  if (got != bytes) std::fprintf(stderr, "%s holds %zu bytes, expected %zu\n", path.c_str(), got, bytes);
  return got == bytes;
}

inline bool WriteFile(const std::string& path, const void* buf, size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(buf, 1, bytes, f) == bytes;
  std::fclose(f);
  return ok;
}
