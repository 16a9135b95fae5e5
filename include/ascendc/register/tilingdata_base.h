/* OpenCANN: tiling data definitions shared by an operator's host code and its
 * kernel (docs/ascendc.md). The host fills an object with set_<field>() and
 * SaveToBuffer()s it into the tiling buffer; the kernel reads it back with
 * GET_TILING_DATA(name, tiling) and uses the fields by name.
 *
 *   namespace optiling {
 *   BEGIN_TILING_DATA_DEF(MyTiling)
 *     TILING_DATA_FIELD_DEF(uint32_t, totalLength);
 *     TILING_DATA_FIELD_DEF_ARR(uint32_t, 4, shape);
 *   END_TILING_DATA_DEF;
 *   REGISTER_TILING_DATA_CLASS(MyOp, MyTiling)
 *   }
 *
 * Both sides compile the same class, so the layout they agree on is the C++
 * layout of its fields in order. */
#ifndef OPENCANN_ASCENDC_REGISTER_TILINGDATA_BASE_H_
#define OPENCANN_ASCENDC_REGISTER_TILINGDATA_BASE_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace optiling {

template <typename D>
class OcTilingData {
 public:
  /* Writes the fields into buf; false (nothing written) when capacity is short. */
  bool SaveToBuffer(void* buf, size_t capacity) const {
    static_assert(std::is_trivially_copyable_v<D>, "tiling data fields must be plain values");
    if (!buf || capacity < sizeof(D)) {
      std::fprintf(stderr, "[ERROR] SaveToBuffer: %zu bytes of tiling data do not fit in %zu bytes\n", sizeof(D),
                   capacity);
      return false;
    }
    std::memcpy(buf, static_cast<const D*>(this), sizeof(D));
    return true;
  }
  size_t GetDataSize() const { return sizeof(D); }
  void InitData() { std::memset(static_cast<D*>(this), 0, sizeof(D)); }
};

}  // namespace optiling

#define BEGIN_TILING_DATA_DEF(class_name) \
  class class_name : public ::optiling::OcTilingData<class_name> { \
   public:
#define TILING_DATA_FIELD_DEF(data_type, field_name)             \
  data_type field_name{};                                        \
  void set_##field_name(data_type value) { field_name = value; } \
  data_type get_##field_name() const { return field_name; }
#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name)                                       \
  arr_type field_name[arr_size]{};                                                                      \
  void set_##field_name(const arr_type* value) { std::memcpy(field_name, value, sizeof(field_name)); } \
  const arr_type* get_##field_name() const { return field_name; }
#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) struct_type field_name;
#define END_TILING_DATA_DEF }

/* Names the tiling class of an operator; GET_TILING_DATA in the kernel then
 * reads that class (one registration per translation unit: otherwise use
 * GET_TILING_DATA_WITH_STRUCT). */
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) \
  using OcTilingOf_##op_type = class_name;              \
  using OcRegisteredTiling = class_name;

/* Kernel side: `name` becomes a copy of the tiling data at the global address `tiling`. */
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, name, tiling) \
  tiling_struct name;                                            \
  std::memcpy(static_cast<void*>(&name), reinterpret_cast<const void*>(tiling), sizeof(tiling_struct))
#define GET_TILING_DATA(name, tiling) GET_TILING_DATA_WITH_STRUCT(::optiling::OcRegisteredTiling, name, tiling)

#endif  // OPENCANN_ASCENDC_REGISTER_TILINGDATA_BASE_H_
