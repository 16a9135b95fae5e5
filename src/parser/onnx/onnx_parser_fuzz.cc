// libFuzzer entry point for the ONNX parser: any input must yield a Graph or an
// error, never a crash, leak or undefined behaviour. Not part of the default
// build; build by hand, for example:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -Iinclude \
//     -I<build>/gen/onnx src/parser/onnx/onnx_parser_fuzz.cc src/parser/onnx/onnx_{parser,tensor,graph_fixup}.cc \
//     <build>/gen/onnx/onnx.pb.cc <build>/liboc_core.a -lprotobuf -lpthread -o onnx_parser_fuzz
//   ./onnx_parser_fuzz -max_total_time=300 corpus/   (seed corpus: small .onnx files)
#include <cstddef>
#include <cstdint>

#include "parser/onnx/onnx_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An empty base dir keeps external-data reads inside the current folder.
  auto graph = oc::ParseOnnxBytes(data, size, "", {});
  if (graph.ok()) (void)(*graph)->Verify();
  return 0;
}
