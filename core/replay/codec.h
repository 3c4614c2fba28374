#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/replay/instruction_stream.h"

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
void writeBinary(const InstructionStream& trace, std::ostream& out,
                 const std::vector<uint32_t>* origIndex = nullptr);
// Reads the binary form from a (decompressed) input; errors name the file and byte offset.
InstructionStream readBinary(InputFile& in, Progress* progress = nullptr);

// Storage in the workspace: chunks of instructions, each zstd-compressed on its own.
void storeInstructionStream(Workspace& ws, int64_t profileId, const InstructionStream& trace,
                            Progress* progress = nullptr);
InstructionStream loadInstructionStream(const Workspace& ws, int64_t profileId);
// Bytes the stored trace takes in the workspace's blobs.
int64_t storedInstructionStreamBytes(const Workspace& ws, int64_t profileId);

}  // namespace stallscope::replay
