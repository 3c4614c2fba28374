#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace stallscope {

// Sorts `items` in place when most are in order already (flows come by their id's first event,
// Kineto's ids by launch time): those in order stay where they are, the few out of place are
// sorted on their own and merged in from the back; past an eighth out of place, a plain sort.
// No second copy of the items either way.
template <class T, class Less>
inline void sortNearlySorted(std::vector<T>& items, Less less) {
    if (std::is_sorted(items.begin(), items.end(), less)) return;
    std::vector<T> outOfPlace;
    size_t kept = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        if (kept > 0 && less(items[i], items[kept - 1])) {
            outOfPlace.push_back(items[i]);
            if (outOfPlace.size() > items.size() / 8) break;
            continue;
        }
        items[kept++] = items[i];
    }
    if (outOfPlace.size() > items.size() / 8) {
        // The scanned items are the kept ones and those set aside (the rest was not touched):
        // together again, then a plain sort.
        std::copy(outOfPlace.begin(), outOfPlace.end(), items.begin() + std::ptrdiff_t(kept));
        std::sort(items.begin(), items.end(), less);
        return;
    }
    std::sort(outOfPlace.begin(), outOfPlace.end(), less);
    // Merge from the back into the items' own space: kept items in [0, kept), the sorted rest
    // from outOfPlace, largest first.
    size_t k = items.size(), i = kept, j = outOfPlace.size();
    while (j > 0) {
        if (i > 0 && less(outOfPlace[j - 1], items[i - 1]))
            items[--k] = items[--i];
        else
            items[--k] = outOfPlace[--j];
    }
}

}  // namespace stallscope
