// Internal building blocks of the .om container shared by the writer, the
// reader, the JSON dump and the tests: the fixed header, CRC-32C, target
// strings. The byte layout is documented at the top of om_file.cc and in
// docs/om_format.md. Not part of the public om_file.h interface.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "graph/dtype.h"

namespace oc::om_internal {

inline constexpr char kOmMagic[8] = {'O', 'C', 'A', 'N', 'N', 'O', 'M', '\0'};
inline constexpr uint32_t kOmHeaderSize = 128;
inline constexpr size_t kOmTargetFieldSize = 32;  // NUL-padded, at most 31 characters
inline constexpr uint64_t kOmBlobAlign = 64;      // blob start and every blob entry
inline constexpr uint64_t kOmFlatBufferAlign = 8;

// Header flags. Bit 0: some constants are stored only inside the prepacked
// bytes of the nodes that read them (Value.packed_in_node >= 0). Readers that
// predate it reject the file by its unknown flag, with a clear message.
inline constexpr uint32_t kOmFlagPackedOnlyWeights = 1u;
inline constexpr uint32_t kOmKnownFlags = kOmFlagPackedOnlyWeights;

// The (op, input) pairs whose kernels accept a float32 constant input that the
// .om stores only in their prepacked bytes (see Kernel::PrepackedInputs): the
// writer elides nothing else and the reader rejects anything else, so a
// damaged or hostile file cannot hand a null weight to a kernel that would
// read it.
bool AcceptsPackedOnlyInput(std::string_view domain, std::string_view op_type, size_t input);

// What may be stored only inside prepacked bytes, in two halves the writer
// and the reader both apply (the writer to choose, the reader to refuse): the
// weight (a non-empty float32 constant), and each node that reads it (input
// `input` of an op AcceptsPackedOnlyInput lists, of a node with prepacked
// bytes and a float32 first input; `input0` kUndefined when that is absent).
bool PackedOnlyWeight(DataType dtype, uint64_t bytes);
bool PackedOnlyReader(std::string_view domain, std::string_view op_type, size_t input, uint64_t prepacked_bytes,
                      DataType input0);

// Byte offsets of the header fields.
inline constexpr size_t kOffMagic = 0;
inline constexpr size_t kOffVersion = 8;
inline constexpr size_t kOffHeaderSize = 12;
inline constexpr size_t kOffFlags = 16;
inline constexpr size_t kOffBodyCrc = 20;
inline constexpr size_t kOffFbOffset = 24;
inline constexpr size_t kOffFbSize = 32;
inline constexpr size_t kOffBlobOffset = 40;
inline constexpr size_t kOffBlobSize = 48;
inline constexpr size_t kOffFileSize = 56;
inline constexpr size_t kOffTarget = 64;
inline constexpr size_t kOffReserved = 96;
inline constexpr size_t kOffHeaderCrc = 124;

struct OmHeader {
  uint32_t format_version = 0;
  uint32_t header_size = kOmHeaderSize;
  uint32_t flags = 0;
  uint32_t body_crc = 0;  // CRC-32C of bytes [header_size, file_size)
  uint64_t fb_offset = 0;
  uint64_t fb_size = 0;
  uint64_t blob_offset = 0;
  uint64_t blob_size = 0;
  uint64_t file_size = 0;
  std::string target;
  uint32_t header_crc = 0;  // CRC-32C of header bytes [0, 124)
};

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, init and final xor
// 0xFFFFFFFF). `crc` chains calls: Crc32c(b, Crc32c(a)) == Crc32c(a + b).
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

uint32_t LoadLE32(const uint8_t* p);
uint64_t LoadLE64(const uint8_t* p);
void StoreLE32(uint8_t* p, uint32_t v);
void StoreLE64(uint8_t* p, uint64_t v);

// Serialises `h` (target must fit the field) and fills in header_crc.
std::array<uint8_t, kOmHeaderSize> EncodeHeader(const OmHeader& h);

// Reads and checks the header of a file of `size` bytes: magic, format version,
// header size, header CRC, flags, reserved bytes and the target field's form.
// Does not check the target against the host, the layout or the body CRC.
Expected<OmHeader> DecodeHeader(const uint8_t* data, size_t size);

// Checks offsets and sizes of the header against each other and `actual_size`.
Status CheckLayout(const OmHeader& h, uint64_t actual_size);

// Builds a complete container: header, FlatBuffer section at offset 128, zero
// padding, blob at the next multiple of 64. Both CRCs are computed.
std::vector<uint8_t> PackContainer(std::span<const uint8_t> flatbuffer,
                                   std::span<const uint8_t> blob, const std::string& target,
                                   uint32_t format_version, uint32_t flags = 0);

// Recomputes body and header CRCs of a whole file in place (tests use this to
// reach checks that sit behind the checksums). Needs at least a full header.
void Reseal(std::vector<uint8_t>& file);

// Target strings: "<arch>[-<isa>]" with arch x86_64 (isa "", avx2, avx512) or
// aarch64. A model runs on a host of the same arch whose ISA level is at least
// the model's.
bool IsKnownTarget(std::string_view target);
Status CheckTargetCompatible(std::string_view model_target, std::string_view host_target);

// JSON string literal (with quotes) for arbitrary bytes: escapes quotes,
// backslashes and control characters; bytes that are not valid UTF-8 become
// \u00XX so the output is always valid JSON.
std::string JsonString(std::string_view s);

}  // namespace oc::om_internal
