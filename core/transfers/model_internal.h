#pragma once

// The parts of the link model (transfer_model.cpp) its files share: the runs' transfers per
// link, the measured timing of a run's steps and its re-simulation, the link fit, and the
// suggestion passes tried on every run.

#include <QString>
#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <vector>

#include "core/transfers/transfers.h"

namespace stallscope::transfers::linkmodel {

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline int64_t transferNs(const Link& link, double bytes) {
    return link.bytesPerNs > 0 ? int64_t(std::llround(bytes / link.bytesPerNs)) : 0;
}

// std::stable_sort, without its buffer for the few items a run has: an insertion sort (stable)
// up to a few dozen, the library's above.
template <typename Less>
void stableSort(std::span<uint32_t> items, Less less) {
    if (items.size() > 32) {
        std::stable_sort(items.begin(), items.end(), less);
        return;
    }
    for (size_t i = 1; i < items.size(); ++i) {
        const uint32_t item = items[i];
        size_t j = i;
        for (; j > 0 && less(item, items[j - 1]); --j) items[j] = items[j - 1];
        items[j] = item;
    }
}

// The transfers of each run per link (by link index), each link's in issue order (FIFO by
// arrival: one base latency per link, so arrival order is issue order). Grouped once for all
// the passes over the runs (issues never move), flat: runs are many and have few transfers.
class LinkLists {
  public:
    struct Group {
        uint32_t link;
        std::span<const uint32_t> list;
    };
    explicit LinkLists(const Analysis& a) {
        std::vector<std::array<uint32_t, 3>> groups;  // link, begin, end in ids_
        runBegin_.reserve(a.modules.size() + 1);
        for (const ModuleRun& run : a.modules) {
            runBegin_.push_back(groups.size());
            const size_t from = ids_.size();
            ids_.insert(ids_.end(), run.transfers.begin(), run.transfers.end());
            stableSort(std::span<uint32_t>(ids_).subspan(from), [&a](uint32_t x, uint32_t y) {
                const Transfer& tx = a.transfers[x];
                const Transfer& ty = a.transfers[y];
                if (tx.link != ty.link) return tx.link < ty.link;
                return tx.issue < ty.issue;
            });
            for (size_t i = from; i < ids_.size();) {
                const uint32_t link = a.transfers[ids_[i]].link;
                size_t j = i + 1;
                while (j < ids_.size() && a.transfers[ids_[j]].link == link) ++j;
                groups.push_back({link, uint32_t(i), uint32_t(j)});
                i = j;
            }
        }
        runBegin_.push_back(groups.size());
        groups_.reserve(groups.size());
        for (const auto& [link, begin, end] : groups)
            groups_.push_back({link, std::span<const uint32_t>(ids_).subspan(begin, end - begin)});
    }
    std::span<const Group> of(uint32_t module) const {
        return std::span<const Group>(groups_).subspan(runBegin_[module],
                                                       runBegin_[module + 1] - runBegin_[module]);
    }

  private:
    std::vector<uint32_t> ids_;
    std::vector<Group> groups_;
    std::vector<size_t> runBegin_;
};

// What the simulator keeps of each step: the idle time before it and its own length as
// measured, overlap with earlier steps removed (nested ops count once).
struct Timing {
    std::vector<int64_t> gap, own;
    int64_t trailing = 0;
};
void timingOf(const ModuleRun& run, const RunProgram& program, Timing& t);
// simulate() with the run's timing computed once for all the edits tried on it.
int64_t simulateTimed(const Analysis& a, const RunProgram& program, const Timing& timing,
                      const SimEdit& edit);

// Link fit and lifetimes (link_fit.cpp).
void fitLinks(Analysis& a, const LinkLists& byLink);
void lifetimes(Analysis& a, const LinkLists& byLink);

// The edits tried on each run, summed per program into Analysis::suggestions
// (model_suggest.cpp).
class SuggestionPasses {
  public:
    explicit SuggestionPasses(Analysis& a);
    ~SuggestionPasses();
    void tryOn(const RunProgram& p, std::span<const LinkLists::Group> links, const Timing& timing,
               int64_t simulated);
    void finish();

  private:
    struct State;
    Analysis& a_;
    std::unique_ptr<State> state_;
};

}  // namespace stallscope::transfers::linkmodel
