#pragma once

#include <cstddef>

#include "core/replay/instruction_stream.h"
#include "core/replay/suggest.h"
#include "core/workspace.h"

namespace stallscope::replay {

// Stores the edited trace of `suggestion` (one of `trace`'s, `trace` being the stored profile
// `parent`) as a new replay profile derived from `parent`, in one transaction: named
// "<parent> (suggestion applied)" (made unique), its parent recorded, its size the bytes its
// stored stream takes, its metadata naming the applied suggestion and its predicted saving.
// Returns the stored row. Throws InputError for a read-only workspace.
ProfileInfo writeDerivedProfile(Workspace& workspace, const ProfileInfo& parent,
                                const InstructionStream& trace, const Suggestion& suggestion);

}  // namespace stallscope::replay
