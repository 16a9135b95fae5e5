// libFuzzer target for the GGUF reader (GgufFile::Parse, DequantizeGguf): any
// bytes must give a file or an error naming it, never a crash, a sanitizer
// report or a tensor whose bytes lie outside the input.
// Built with the other fuzz targets: cmake -DOC_FUZZ=ON (see docs/reliability.md).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "llm/model/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  auto g = oc::llm::GgufFile::Parse(bytes, "fuzz.gguf");
  if (!g.ok()) {
    if (g.status().message().find("fuzz.gguf") == std::string::npos) std::abort();  // messages name the file
    return 0;
  }
  const uint8_t* begin = bytes.data();
  for (const auto& [name, t] : (*g)->tensors()) {
    if (t.data.data() < begin || t.data.data() + t.data.size() > begin + bytes.size()) std::abort();
    if (t.offset % (*g)->alignment() != 0 || t.offset < (*g)->data_offset()) std::abort();
    if (!oc::llm::GgmlTypeSupported(t.type) || t.numel() > (1 << 20)) continue;
    std::vector<float> out(static_cast<size_t>(t.numel()));
    if (!oc::llm::DequantizeGguf(t, out.data()).ok()) std::abort();
  }
  return 0;
}
