// libFuzzer target for msame's .npy input reader (ParseNpy): any bytes must
// give an array or an error message, never a crash, a sanitizer report or an
// array whose data disagrees with its header. (.bin inputs are taken as raw
// bytes and only size-checked, so there is no parser to fuzz for them.)
// Built with the other fuzz targets: cmake -DOC_FUZZ=ON (see docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  msame::NpyArray a;
  std::string err = msame::ParseNpy("fuzz.npy", bytes, &a);
  if (err.empty()) {
    // Invariants msame relies on when it copies the data into a model input.
    if (a.item_size == 0 || a.data.size() != a.NumElements() * a.item_size) std::abort();
    if (a.TypeName().empty()) std::abort();
  } else if (err.find("fuzz.npy") == std::string::npos) {
    std::abort();  // every message must name the file
  }
  return 0;
}
