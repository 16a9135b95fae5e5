// libFuzzer target for the .om reader: any input must yield a model or an
// error Status, never a crash, hang or sanitizer report. A model that loads is
// also dumped, since OmToJson/OmSummary walk everything the reader built.
//
// Build, full instrumentation (clang, from the repository root):
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
//     -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
//     -DOC_SANITIZE=address,undefined,fuzzer-no-link
//   ninja -C build-fuzz oc_core
//   clang++ -std=c++20 -g -O1 -fsanitize=address,undefined,fuzzer \
//     -Isrc -Ibuild-fuzz/gen/om src/om/om_fuzz.cc build-fuzz/liboc_core.a \
//     -o build-fuzz/om_fuzz -pthread
// Quick variant (minutes instead of a sanitized build of every kernel): only
// the om sources are instrumented; the rest comes from an ordinary build's
// archive (gcc or clang, same libstdc++). Objects listed before the archive
// take precedence over its om members.
//   B=build   # any configured build dir with oc_core built
//   for f in om_format om_file om_reader om_json; do
//     clang++ -std=c++20 -g -O1 -fsanitize=address,undefined,fuzzer-no-link \
//       -DOPENCANN_VERSION='"0.1.0"' -Isrc -I$B/gen/om -c src/om/$f.cc -o /tmp/$f.o; done
//   clang++ -std=c++20 -g -O1 -fsanitize=address,undefined,fuzzer -Isrc -I$B/gen/om \
//     src/om/om_fuzz.cc /tmp/om_format.o /tmp/om_file.o /tmp/om_reader.o /tmp/om_json.o \
//     $B/liboc_core.a -o om_fuzz -pthread
// Seed corpus: any .om written by atc (a small one is best), then
//   ./om_fuzz -max_len=65536 -max_total_time=600 corpus_dir
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
