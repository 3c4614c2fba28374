#include "views/common/timeline_lod.h"

#include <cmath>

namespace stallscope {

void BusyPrefix::addBusy(double start, double end) {
    if (cumulative_.empty() || end <= start) return;
    const size_t bins = this->bins();
    const double limit = binWidth_ * static_cast<double>(bins);
    start = std::clamp(start, 0.0, limit);
    end = std::clamp(end, 0.0, limit);
    if (end <= start) return;
    size_t first = std::min(bins - 1, static_cast<size_t>(start / binWidth_));
    const size_t last = std::min(bins - 1, static_cast<size_t>(std::ceil(end / binWidth_)) - 1);
    if (first == last) {
        cumulative_[first + 1] += end - start;
        return;
    }
    cumulative_[first + 1] += binWidth_ * static_cast<double>(first + 1) - start;
    for (size_t b = first + 1; b < last; ++b) cumulative_[b + 1] += binWidth_;
    cumulative_[last + 1] += end - binWidth_ * static_cast<double>(last);
}

void BusyPrefix::finish() {
    for (size_t i = 1; i < cumulative_.size(); ++i) cumulative_[i] += cumulative_[i - 1];
}

double BusyPrefix::busyBefore(double t) const {
    if (cumulative_.empty() || t <= 0) return 0;
    const double position = t / binWidth_;
    const size_t bins = this->bins();
    if (position >= static_cast<double>(bins)) return cumulative_.back();
    const size_t bin = static_cast<size_t>(position);
    const double fraction = position - static_cast<double>(bin);
    return cumulative_[bin] + (cumulative_[bin + 1] - cumulative_[bin]) * fraction;
}

}  // namespace stallscope
