// src/journal_codec.h: the journal's binary encoding (hived/journal.h, "Encoding"), written
// field by field from the call's own arguments so that an append copies nothing but bytes.
//
// Example: size_t at = BeginFrame(&buf, JournalOp::kRelease, seq, fp);
//          PutString(&buf, name); EndFrame(&buf, at);
//
// Thread safety: pure functions.
#ifndef HIVED_SRC_JOURNAL_CODEC_H_
#define HIVED_SRC_JOURNAL_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hived/journal.h"
#include "hived/schedule_result.h"
#include "hived/state.h"

namespace hived::internal {

inline constexpr size_t kJournalFrameHeader = 8;  // u32 body size, u32 CRC-32

uint32_t Crc32(std::string_view bytes);

// Starts a frame at the end of `out` (its header, then the body's op, sequence and
// fingerprint); returns where it starts, for `EndFrame`, which fills in size and CRC.
size_t BeginFrame(std::string* out, JournalOp op, uint64_t sequence, uint64_t fingerprint);
void EndFrame(std::string* out, size_t start);

void PutVarint(std::string* out, uint64_t v);
void PutSigned(std::string* out, int64_t v);  // zigzag
void PutString(std::string* out, std::string_view s);
void PutRequest(std::string* out, const GroupRequest& r);
void PutPlacement(std::string* out, const Placement& p);
void PutRecord(std::string* out, const GroupRecord& r);

// SpecFingerprint's 16 hex digits as a number (0 for anything else).
uint64_t FingerprintValue(std::string_view hex);

}  // namespace hived::internal

#endif  // HIVED_SRC_JOURNAL_CODEC_H_
