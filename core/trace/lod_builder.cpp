#include "core/trace/lod_builder.h"

namespace stallscope::trace {

int topLevelFor(int64_t span) {
    int k = 1;
    while (k < kMaxLevel && lodWidth(k) < span) ++k;
    return k;
}

std::vector<int> chooseLevels(uint64_t levelZeroItems, const std::vector<uint64_t>& counts) {
    std::vector<int> levels{0};
    uint64_t last = levelZeroItems;
    for (size_t k = 1; k < counts.size(); ++k) {
        if (counts[k] * 2 <= last) {
            levels.push_back(int(k));
            last = counts[k];
        }
    }
    return levels;
}

}  // namespace stallscope::trace
