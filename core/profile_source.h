#pragma once

#include <cstdint>
#include <string>

namespace stallscope {

class Workspace;

// Records where a profile came from when that is not the file an import read: the stored stream
// of a derived profile, the bundled resource a demo input was copied from. `source` is shown as
// the profile's source, `sizeBytes` as its size. Call inside the transaction that wrote it.
void recordProfileSource(Workspace& workspace, int64_t profileId, const std::string& source,
                         int64_t sizeBytes);

}  // namespace stallscope
