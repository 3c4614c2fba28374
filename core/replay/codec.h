#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "trace.h"

namespace stallscope {
class InputFile;
class Progress;
class Workspace;
}  // namespace stallscope

namespace stallscope::replay {

// Binary replay format (see replay.proto for the layout).
inline constexpr char kBinaryMagic[] = "SSREPLAY";
inline constexpr size_t kBinaryMagicSize = 8;

// Writes the binary form. origIndex (optional, same size as instrs) is stored as orig_i.
void writeBinary(const Trace& trace, std::ostream& out,
                 const std::vector<uint32_t>* origIndex = nullptr);
// Reads the binary form from a (decompressed) input; errors name the file and byte offset.
Trace readBinary(InputFile& in, Progress* progress = nullptr);

// Storage in the workspace: chunks of instructions, each zstd-compressed on its own.
void storeTrace(Workspace& ws, int64_t profileId, const Trace& trace, Progress* progress = nullptr);
Trace loadTrace(const Workspace& ws, int64_t profileId);
// Bytes the stored trace takes in the workspace's blobs.
int64_t storedTraceBytes(const Workspace& ws, int64_t profileId);

}  // namespace stallscope::replay
