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

// std::lower_bound over v[first, last) for `key`, searched from `hint` (the answer for a key
// not long before this one): forward by doubling steps when the answer lies after it, the
// whole range otherwise. The same answer as std::lower_bound.
template <class T>
inline size_t hintedLowerBound(const std::vector<T>& v, size_t first, size_t last, size_t hint,
                               const T& key) {
    hint = std::clamp(hint, first, last);
    if (hint == last || !(v[hint] < key)) {
        if (hint == first || v[hint - 1] < key) return hint;
        return size_t(std::lower_bound(v.begin() + std::ptrdiff_t(first),
                                       v.begin() + std::ptrdiff_t(hint), key) -
                      v.begin());
    }
    size_t low = hint + 1, step = 1;  // v[hint] < key: the answer is past it
    while (low + step < last && v[low + step - 1] < key) {
        low += step;
        step *= 2;
    }
    const size_t high = std::min(last, low + step);
    return size_t(
        std::lower_bound(v.begin() + std::ptrdiff_t(low), v.begin() + std::ptrdiff_t(high), key) -
        v.begin());
}

}  // namespace stallscope
