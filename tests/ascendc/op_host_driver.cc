// Drives a CANN-style custom operator project (samples/ascendc/add_custom_op:
// op_host + op_kernel, compiled into this program by ascendc++) the way the
// operator runtime does: finds the OpDef that OP_ADD registered, infers the
// output's shape and type, runs the tiling function through a TilingContext,
// and launches the kernel with the tiling data it wrote.
//   op_host_driver N x.bin y.bin z.bin   (N halves)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "acl/acl.h"
#include "aclrtlaunch_add_custom.h"
#include "register/op_def_registry.h"

#define CHECK(cond, ...)                 \
  do {                                   \
    if (!(cond)) {                       \
      std::printf("FAIL: " __VA_ARGS__); \
      std::printf("\n");                 \
      return 1;                          \
    }                                    \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  int64_t n = std::atoll(argv[1]);
  auto& reg = ops::OcOpRegistry();
  auto it = reg.find("AddCustom");
  CHECK(it != reg.end(), "AddCustom is not registered");
  const ops::OpDef& def = *it->second;
  CHECK(def.GetInputs().size() == 2 && def.GetOutputs().size() == 1, "wrong parameters");
  CHECK(def.GetInputs()[0].Name() == "x" && def.GetOutputs()[0].Name() == "z", "wrong names");
  CHECK(def.GetInputs()[1].GetDataTypes().size() == 1 && def.GetInputs()[1].GetDataTypes()[0] == ge::DT_FLOAT16,
        "wrong dtypes");
  CHECK(def.GetAICore().GetSocs().size() == 1 && def.GetAICore().GetSocs()[0] == "ascend910b", "wrong socs");
  std::printf("op %s: %zu inputs, %zu outputs\n", def.GetOpType().c_str(), def.GetInputs().size(),
              def.GetOutputs().size());

  gert::OcNodeState node;
  node.name = "add0";
  node.type = def.GetOpType();
  node.input_shapes = {gert::StorageShape(gert::Shape{n}), gert::StorageShape(gert::Shape{n})};
  node.input_present = {true, true};
  node.input_descs = {{ge::DT_FLOAT16, ge::FORMAT_ND}, {ge::DT_FLOAT16, ge::FORMAT_ND}};
  node.output_shapes.resize(1);
  node.output_descs.resize(1);
  gert::InferShapeContext infer(&node);
  CHECK(def.GetInferShape()(&infer) == ge::GRAPH_SUCCESS, "InferShape failed");
  gert::InferDataTypeContext infer_dt(&node);
  CHECK(def.GetInferDataType()(&infer_dt) == ge::GRAPH_SUCCESS, "InferDataType failed");
  std::printf("inferred z: [%lld] dtype %d\n", (long long)node.output_shapes[0].GetOriginShape().GetDim(0),
              (int)node.output_descs[0].GetDataType());

  std::vector<uint8_t> tiling_buf(64 * 1024);
  gert::TilingData raw(tiling_buf.data(), tiling_buf.size());
  gert::TilingContext ctx(&node, &raw, nullptr);
  CHECK(def.GetAICore().GetTiling()(&ctx) == ge::GRAPH_SUCCESS, "tiling failed");
  std::printf("tiling: blockDim %u, %zu bytes, workspace %zu\n", ctx.GetBlockDim(), raw.GetDataSize(),
              ctx.GetWorkspaceSizes(1)[0]);

  size_t bytes = size_t(n) * 2;
  std::vector<uint8_t> x(bytes), y(bytes), z(bytes);
  FILE* f = std::fopen(argv[2], "rb");
  CHECK(f && std::fread(x.data(), 1, bytes, f) == bytes, "read x");
  std::fclose(f);
  f = std::fopen(argv[3], "rb");
  CHECK(f && std::fread(y.data(), 1, bytes, f) == bytes, "read y");
  std::fclose(f);
  CHECK(aclInit(nullptr) == ACL_SUCCESS && aclrtSetDevice(0) == ACL_SUCCESS, "acl init");
  aclrtStream stream;
  CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS, "stream");
  void *xd, *yd, *zd, *td;
  CHECK(aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == 0 && aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == 0 &&
            aclrtMalloc(&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == 0 &&
            aclrtMalloc(&td, raw.GetDataSize(), ACL_MEM_MALLOC_HUGE_FIRST) == 0,
        "malloc");
  aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemcpy(yd, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemcpy(td, raw.GetDataSize(), raw.GetData(), raw.GetDataSize(), ACL_MEMCPY_HOST_TO_DEVICE);
  uint32_t rc = ACLRT_LAUNCH_KERNEL(add_custom)(ctx.GetBlockDim(), stream, xd, yd, zd, nullptr, td);
  CHECK(rc == 0, "launch %u", rc);
  aclError sync = aclrtSynchronizeStream(stream);
  CHECK(sync == ACL_SUCCESS, "sync %d: %s", (int)sync, aclGetRecentErrMsg());
  aclrtMemcpy(z.data(), bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  f = std::fopen(argv[4], "wb");
  std::fwrite(z.data(), 1, bytes, f);
  std::fclose(f);
  for (void* p : {xd, yd, zd, td}) aclrtFree(p);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  std::printf("done\n");
  return 0;
}
