// aclDataBuffer, aclTensorDesc, element sizes and float16 conversion: plain
// host objects that need no aclInit.
#include <cstring>
#include <limits>

#include "acl/acl_internal.h"

using namespace oc::acl;
using oc::StrCat;

namespace oc::acl {
HandleSet& DataBuffers() {
  static HandleSet* s = new HandleSet();
  return *s;
}
HandleSet& TensorDescs() {
  static HandleSet* s = new HandleSet();
  return *s;
}
}  // namespace oc::acl

namespace {

const aclDataBuffer* LiveBuffer(const aclDataBuffer* b) {
  return b && DataBuffers().Contains(b) ? b : nullptr;
}

}  // namespace

// ---- float16 ------------------------------------------------------------------------

float aclFloat16ToFloat(aclFloat16 value) {
  uint32_t sign = static_cast<uint32_t>(value & 0x8000u) << 16;
  uint32_t exp = (value >> 10) & 0x1Fu;
  uint32_t mant = value & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal half: shift until the implicit bit appears.
    int e = -1;
    do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

aclFloat16 aclFloatToFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t exp = (bits >> 23) & 0xFFu;
  uint32_t mant = bits & 0x7FFFFFu;
  if (exp == 0xFF) return static_cast<aclFloat16>(sign | 0x7C00u | (mant ? 0x200u | (mant >> 13) : 0));
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1F) return static_cast<aclFloat16>(sign | 0x7C00u);  // overflow -> inf
  if (e <= 0) {
    if (e < -10) return static_cast<aclFloat16>(sign);  // underflows to zero
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1))) ++half;
    return static_cast<aclFloat16>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into inf: correct
  return static_cast<aclFloat16>(sign | half);
}

// ---- aclDataBuffer ----------------------------------------------------------------------

aclDataBuffer* aclCreateDataBuffer(void* data, size_t size) {
  return GuardValue<aclDataBuffer*>(__func__, nullptr, [&]() -> aclDataBuffer* {
    if (!data && size > 0) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument 'data' is NULL but size is ", size));
      return nullptr;
    }
    auto* b = new aclDataBuffer{data, size};  // the C API hands out raw objects
    DataBuffers().Add(b);
    return b;
  });
}

aclError aclDestroyDataBuffer(const aclDataBuffer* dataBuffer) {
  return Guard(__func__, [&]() -> aclError {
    if (!dataBuffer) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'dataBuffer' is NULL");
    if (!DataBuffers().Remove(dataBuffer))
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("dataBuffer ", PtrString(dataBuffer),
                                                  " is not a live aclDataBuffer (never created or already destroyed)"));
    delete dataBuffer;
    return ACL_SUCCESS;
  });
}

aclError aclUpdateDataBuffer(aclDataBuffer* dataBuffer, void* data, size_t size) {
  return Guard(__func__, [&]() -> aclError {
    if (!dataBuffer) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'dataBuffer' is NULL");
    if (!LiveBuffer(dataBuffer))
      return Fail(ACL_ERROR_INVALID_PARAM,
                  StrCat("dataBuffer ", PtrString(dataBuffer), " is not a live aclDataBuffer"));
    if (!data && size > 0) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument 'data' is NULL but size is ", size));
    dataBuffer->data = data;
    dataBuffer->size = size;
    return ACL_SUCCESS;
  });
}

void* aclGetDataBufferAddr(const aclDataBuffer* dataBuffer) {
  OC_ACL_TRACE_API(__func__);
  const aclDataBuffer* b = LiveBuffer(dataBuffer);
  return b ? b->data : nullptr;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer* dataBuffer) {
  OC_ACL_TRACE_API(__func__);
  const aclDataBuffer* b = LiveBuffer(dataBuffer);
  if (!b) return 0;
  return b->size > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max()
                                                         : static_cast<uint32_t>(b->size);
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer* dataBuffer) {
  OC_ACL_TRACE_API(__func__);
  const aclDataBuffer* b = LiveBuffer(dataBuffer);
  return b ? b->size : 0;
}

// ---- Element sizes ------------------------------------------------------------------------

namespace {
// Bits per element; 0 for types without a storage size.
size_t ElementBits(int dataType) {
  switch (dataType) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0: return 8;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16: return 16;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32: return 32;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64: return 64;
    case ACL_COMPLEX128: return 128;
    case ACL_INT4:
    case ACL_FLOAT4_E2M1:
    case ACL_FLOAT4_E1M2: return 4;
    case ACL_UINT1: return 1;
    default: return 0;  // ACL_STRING, ACL_FLOAT6_* (no packing defined), unknown
  }
}
}  // namespace

size_t aclDataTypeSize(aclDataType dataType) {
  OC_ACL_TRACE_API(__func__);
  const size_t bits = ElementBits(EnumBits(dataType));
  return bits >= 8 ? bits / 8 : 0;
}

// ---- aclTensorDesc ------------------------------------------------------------------------

namespace {
const aclTensorDesc* LiveDesc(const aclTensorDesc* d) { return d && TensorDescs().Contains(d) ? d : nullptr; }

// Product of dims, or 0 when a dim is unknown or the product overflows.
size_t ElementCount(const aclTensorDesc& d) {
  size_t n = 1;
  for (int64_t v : d.dims) {
    if (v < 0) return 0;
    if (v != 0 && n > std::numeric_limits<size_t>::max() / static_cast<size_t>(v)) return 0;
    n *= static_cast<size_t>(v);
  }
  return n;
}
}  // namespace

aclTensorDesc* aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t* dims, aclFormat format) {
  return GuardValue<aclTensorDesc*>(__func__, nullptr, [&]() -> aclTensorDesc* {
    if (numDims < 0) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("numDims ", numDims, " is negative"));
      return nullptr;
    }
    if (numDims > 0 && !dims) {
      Fail(ACL_ERROR_INVALID_PARAM, StrCat("argument 'dims' is NULL but numDims is ", numDims));
      return nullptr;
    }
    for (int i = 0; i < numDims; ++i) {
      if (dims[i] < -2) {
        Fail(ACL_ERROR_INVALID_PARAM, StrCat("dims[", i, "] is ", dims[i], "; dimensions must be >= -2"));
        return nullptr;
      }
    }
    auto* d = new aclTensorDesc();
    d->dtype = dataType;
    d->format = format;
    if (numDims > 0) d->dims.assign(dims, dims + numDims);
    TensorDescs().Add(d);
    return d;
  });
}

void aclDestroyTensorDesc(const aclTensorDesc* desc) {
  OC_ACL_TRACE_API(__func__);
  if (desc && TensorDescs().Remove(desc)) delete desc;
}

aclDataType aclGetTensorDescType(const aclTensorDesc* desc) {
  OC_ACL_TRACE_API(__func__);
  auto* d = LiveDesc(desc);
  return d ? d->dtype : ACL_DT_UNDEFINED;
}

aclFormat aclGetTensorDescFormat(const aclTensorDesc* desc) {
  OC_ACL_TRACE_API(__func__);
  auto* d = LiveDesc(desc);
  return d ? d->format : ACL_FORMAT_UNDEFINED;
}

size_t aclGetTensorDescSize(const aclTensorDesc* desc) {
  OC_ACL_TRACE_API(__func__);
  auto* d = LiveDesc(desc);
  if (!d) return 0;
  const size_t n = ElementCount(*d), bits = ElementBits(EnumBits(d->dtype));
  if (bits == 0) return 0;
  if (bits < 8) return n / (8 / bits) + (n % (8 / bits) != 0);  // packed, rounded up to whole bytes
  const size_t size = bits / 8;
  return n > std::numeric_limits<size_t>::max() / size ? 0 : n * size;  // 0 on overflow
}

size_t aclGetTensorDescElementCount(const aclTensorDesc* desc) {
  OC_ACL_TRACE_API(__func__);
  auto* d = LiveDesc(desc);
  return d ? ElementCount(*d) : 0;
}

size_t aclGetTensorDescNumDims(const aclTensorDesc* desc) {
  OC_ACL_TRACE_API(__func__);
  auto* d = LiveDesc(desc);
  return d ? d->dims.size() : 0;
}

int64_t aclGetTensorDescDim(const aclTensorDesc* desc, size_t index) {
  OC_ACL_TRACE_API(__func__);
  auto* d = LiveDesc(desc);
  return d && index < d->dims.size() ? d->dims[index] : -1;
}

aclError aclGetTensorDescDimV2(const aclTensorDesc* desc, size_t index, int64_t* dimSize) {
  return Guard(__func__, [&]() -> aclError {
    if (!desc) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'desc' is NULL");
    if (!dimSize) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'dimSize' is NULL");
    auto* d = LiveDesc(desc);
    if (!d) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("desc ", PtrString(desc), " is not a live aclTensorDesc"));
    if (index >= d->dims.size())
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("index ", index, " is out of range for a tensor of rank ",
                                                  d->dims.size()));
    *dimSize = d->dims[index];
    return ACL_SUCCESS;
  });
}

void aclSetTensorDescName(aclTensorDesc* desc, const char* name) {
  GuardValue<int>(__func__, 0, [&] {
    if (LiveDesc(desc)) desc->name = name ? name : "";
    return 0;
  });
}

aclError aclSetTensorConst(aclTensorDesc* desc, void* dataBuffer, size_t length) {
  return Guard(__func__, [&]() -> aclError {
    if (!desc) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'desc' is NULL");
    if (!LiveDesc(desc)) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("desc ", PtrString(desc), " is not a live aclTensorDesc"));
    if (!dataBuffer && length > 0) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'dataBuffer' is NULL");
    for (int64_t d : desc->dims)
      if (d < 0) return Fail(ACL_ERROR_INVALID_PARAM, "a constant tensor needs every dim known");
    if (aclDataTypeSize(desc->dtype) == 0)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("data type ", EnumBits(desc->dtype), " has no element size"));
    size_t bytes = aclDataTypeSize(desc->dtype);
    for (int64_t d : desc->dims) {
      if (d != 0 && bytes > std::numeric_limits<size_t>::max() / static_cast<size_t>(d))
        return Fail(ACL_ERROR_INVALID_PARAM, "the desc's byte size overflows size_t");
      bytes *= static_cast<size_t>(d);
    }
    if (length != bytes)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("length is ", length, " bytes but the desc describes ", bytes,
                                                  " bytes"));
    const auto* p = static_cast<const uint8_t*>(dataBuffer);
    desc->const_value = std::make_shared<const std::vector<uint8_t>>(p, p + length);
    return ACL_SUCCESS;
  });
}

aclError aclSetTensorPlaceMent(aclTensorDesc* desc, aclMemType memType) {
  return Guard(__func__, [&]() -> aclError {
    if (!desc) return Fail(ACL_ERROR_INVALID_PARAM, "argument 'desc' is NULL");
    if (!LiveDesc(desc)) return Fail(ACL_ERROR_INVALID_PARAM, StrCat("desc ", PtrString(desc), " is not a live aclTensorDesc"));
    const int m = EnumBits(memType);
    if (m < ACL_MEMTYPE_DEVICE || m > ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT)
      return Fail(ACL_ERROR_INVALID_PARAM, StrCat("memType ", m, " is not an aclMemType"));
    desc->placement = m;
    return ACL_SUCCESS;
  });
}

const char* aclGetTensorDescName(aclTensorDesc* desc) {
  OC_ACL_TRACE_API(__func__);
  auto* d = LiveDesc(desc);
  return d ? d->name.c_str() : "";
}
