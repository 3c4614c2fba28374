#pragma once

// Every analysis Stallscope runs on a profile, in one list: the import service derives those
// that run at import, the command line and the views ask it by name, and one test drives each
// through derive -> store -> reopen -> equal.

#include <string_view>
#include <vector>

#include "core/analysis/analysis.h"

namespace stallscope::analysis {

const std::vector<const Definition*>& registry();
// nullptr when no analysis has that name.
const Definition* find(std::string_view name);

}  // namespace stallscope::analysis
