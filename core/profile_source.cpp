#include "core/profile_source.h"

#include "core/sqlite.h"
#include "core/workspace.h"

namespace stallscope {

void recordProfileSource(Workspace& workspace, int64_t profileId, const std::string& source,
                         int64_t sizeBytes) {
    sql::Statement update(workspace.db(),
                          "UPDATE profiles SET source_path = ?, source_size = ? WHERE id = ?");
    update.bind(1, source).bind(2, sizeBytes).bind(3, profileId);
    update.exec();
}

}  // namespace stallscope
