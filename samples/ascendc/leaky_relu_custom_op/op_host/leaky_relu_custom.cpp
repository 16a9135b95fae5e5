/* LeakyReluCustom's host side: y = x > 0 ? x : x * negative_slope over a
 * tensor of any shape, float or float16. The tiling spreads the elements over
 * up to 8 blocks in whole 32-byte units and picks the kernel's branch for the
 * data type with a tiling key (TILING_KEY_IS in the kernel). */
#include <algorithm>

#include "leaky_relu_custom_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
constexpr uint32_t kMaxBlocks = 8;
constexpr uint32_t kBufferNum = 2;  // double buffering
constexpr uint64_t kTilingKeyFloat = 1;
constexpr uint64_t kTilingKeyHalf = 2;

static ge::graphStatus TilingFunc(gert::TilingContext* context) {
  const ge::DataType dtype = context->GetInputDesc(0)->GetDataType();
  const uint32_t elem = dtype == ge::DT_FLOAT ? 4 : 2;
  const uint32_t align = 32 / elem;  // elements per 32-byte unit
  const uint64_t total = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
  if (total == 0 || total > UINT32_MAX) return ge::GRAPH_FAILED;
  const uint64_t units = (total + align - 1) / align;
  const uint32_t blocks = static_cast<uint32_t>(std::min<uint64_t>(kMaxBlocks, units));
  const uint32_t blockLength = static_cast<uint32_t>((units + blocks - 1) / blocks * align);

  // An input and an output queue, each double-buffered, in the Unified Buffer.
  uint64_t ubSize = 0;
  platform_ascendc::PlatformAscendC(context->GetPlatformInfo())
      .GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
  uint32_t tileLength = static_cast<uint32_t>(ubSize / (2 * kBufferNum) / elem / align * align);
  tileLength = std::min(tileLength, 16384u);
  tileLength = std::min(tileLength, blockLength);

  LeakyReluCustomTilingData tiling;
  tiling.set_totalLength(static_cast<uint32_t>(total));
  tiling.set_blockLength(blockLength);
  tiling.set_tileLength(tileLength);
  const float* slope = context->GetAttrs()->GetAttrPointer<float>(0);
  tiling.set_negativeSlope(slope ? *slope : 0.01f);
  context->SetBlockDim(blocks);
  context->SetTilingKey(dtype == ge::DT_FLOAT ? kTilingKeyFloat : kTilingKeyHalf);
  tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
  context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
  size_t* workspace = context->GetWorkspaceSizes(1);
  workspace[0] = 0;
  return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context) {
  *context->GetOutputShape(0) = *context->GetInputShape(0);
  return GRAPH_SUCCESS;
}
static graphStatus InferDataType(gert::InferDataTypeContext* context) {
  context->SetOutputDataType(0, context->GetInputDataType(0));
  return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class LeakyReluCustom : public OpDef {
 public:
  explicit LeakyReluCustom(const char* name) : OpDef(name) {
    this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
    this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
    this->Attr("negative_slope").AttrType(OPTIONAL).Float(0.01f);
    this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
    this->AICore().SetTiling(optiling::TilingFunc);
    this->AICore().AddConfig("ascend910b");
  }
};
OP_ADD(LeakyReluCustom);
}  // namespace ops
