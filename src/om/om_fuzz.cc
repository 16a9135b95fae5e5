// libFuzzer target for the .om reader: any input must yield a model or an
// error Status, never a crash, hang or sanitizer report. A model that loads is
// also dumped, since OmToJson/OmSummary walk everything the reader built.
//
// Build (clang, from the repository root; the core gets sanitizer coverage):
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
//     -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
//     -DOC_SANITIZE=address,undefined,fuzzer-no-link
//   ninja -C build-fuzz oc_core
//   clang++ -std=c++20 -g -O1 -fsanitize=address,undefined,fuzzer \
//     -Isrc -Ibuild-fuzz/gen/om src/om/om_fuzz.cc build-fuzz/liboc_core.a \
//     -o build-fuzz/om_fuzz -pthread
// Seed corpus: any .om written by atc (or by the om tests), then
//   build-fuzz/om_fuzz -max_len=65536 corpus_dir
#include <cstddef>
#include <cstdint>
#include <vector>

#include "om/om_file.h"
#include "om/om_format.h"

namespace {
void LoadAndDump(const uint8_t* data, size_t size) {
  auto model = oc::LoadOmMemory(data, size);
  if (model.ok()) {
    (void)oc::OmToJson(*model);
    (void)oc::OmSummary(*model);
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As is: exercises the header and checksum checks.
  LoadAndDump(data, size);
  // With both CRCs recomputed, so mutations reach the FlatBuffers verifier and
  // the semantic checks instead of stopping at the checksum.
  if (size >= oc::om_internal::kOmHeaderSize) {
    std::vector<uint8_t> sealed(data, data + size);
    oc::om_internal::Reseal(sealed);
    LoadAndDump(sealed.data(), sealed.size());
  }
  return 0;
}
