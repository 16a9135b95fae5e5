// libFuzzer entry point for the MINDIR parser: any input must yield a Graph
// or an error, never a crash, leak or undefined behaviour. Built by `make fuzz`
// (the OC_FUZZ section of CMakeLists.txt); seed corpus: tests/fuzz/mindir_parser.
#include <cstddef>
#include <cstdint>

#include "parser/mindir/mindir_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto graph = oc::ParseMindirBytes(data, size, {});
  if (graph.ok()) (void)(*graph)->Verify();
  return 0;
}
