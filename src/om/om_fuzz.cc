// libFuzzer target for the .om reader: any input must yield a model or an
// error Status, never a crash, hang or sanitizer report. A model that loads is
// also dumped, since OmToJson/OmSummary walk everything the reader built.
//
// Build: `make fuzz` (all fuzz targets), or
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang \
//     -DCMAKE_CXX_COMPILER=clang++ -DOC_FUZZ=ON && ninja -C build-fuzz om_fuzz
// (the om/graph/ops sources are instrumented, kernels come from oc_core).
// By hand, against any up-to-date liboc_core.a in $B (gcc or clang build):
//   for f in om_format om_file om_reader om_json; do
//     clang++ -std=c++20 -g -O1 -fsanitize=address,undefined,fuzzer-no-link \
//       -Isrc -I$B/gen/om -c src/om/$f.cc -o /tmp/$f.o; done
//   clang++ -std=c++20 -g -O1 -fsanitize=address,undefined,fuzzer -Isrc -I$B/gen/om \
//     src/om/om_fuzz.cc /tmp/om_format.o /tmp/om_file.o /tmp/om_reader.o /tmp/om_json.o \
//     $B/liboc_core.a -o om_fuzz -pthread
// (objects before the archive take precedence over its om members).
// Seed corpus: small .om files written by atc, then
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
