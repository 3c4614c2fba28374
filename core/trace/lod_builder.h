#pragma once

// Level-of-detail items of a track. Level k >= 1 draws the track at a resolution of lodWidth(k)
// ns: per depth, consecutive items narrower than that starting in the same bucket fold into one
// counted item; slices at least that long stay themselves (see SliceFolder).
//
// What holds at every level (tests/core/test_trace_parts.cpp checks it):
//  - Folding loses nothing: the counts of a level's items add up to the items of level 0.
//  - Every level-0 item lies within exactly one item of the level at its own depth, and a
//    folded item spans exactly its members: from the first one's start to the latest end.
//  - A folded item's members all start in one bucket [b * width, (b + 1) * width), and it is
//    named after one of them.
//  - Folding a finer level's items gives, per depth, the same items as folding level 0 (buckets
//    of a level nest in those of the level below): levels are built as a cascade, each from the
//    one below. Only a folded item's name may differ: it is the widest item's of the finer level,
//    where a folded run counts with its span, not necessarily the longest slice among its
//    members. Runs of different depths may close in another order.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/trace/trace_format.h"

namespace stallscope::trace {

// Folded runs of instants carry this in `args` (in memory only; stored folded items have no
// args) so the next level keeps them apart from slices.
constexpr uint64_t kFoldedInstants = 1;

// Folds slices narrower than the level's width: per depth (instants apart), consecutive narrow
// items starting in the same bucket become one counted item named after the longest of them.
// A slice at least `width` long is emitted as itself and ends the run at its depth.
class SliceFolder {
  public:
    // Widths are powers of two (lodWidth), so buckets are a shift away: this runs for every
    // slice at every level while levels are counted.
    explicit SliceFolder(int64_t width)
        : width_(width), shift_(std::countr_zero(uint64_t(width))) {}

    template <class Emit>
    void add(const SliceItem& item, Emit&& output) {
        const bool instant = item.kind == ItemKind::Instant ||
                             (item.kind == ItemKind::Folded && item.args == kFoldedInstants);
        const size_t slot = size_t(item.depth) * 2 + (instant ? 1 : 0);
        if (slot >= open_.size()) open_.resize(slot + 1);
        Run& run = open_[slot];
        if (item.kind == ItemKind::Slice && item.dur >= width_) {
            close(run, output, instant);
            output(item);
            return;
        }
        const int64_t bucket =
            item.start >> shift_;  // floor division (C++20 shifts are arithmetic)
        if (run.count > 0 && run.bucket == bucket) {
            run.count += item.count;
            run.end = std::max(run.end, item.end());
            if (item.dur > run.longestDur) {
                run.longestDur = item.dur;
                run.longestName = item.name;
            }
            return;
        }
        close(run, output, instant);
        run.bucket = bucket;
        run.count = item.count;
        run.first = item;
        run.longestDur = item.dur;
        run.longestName = item.name;
        run.end = item.end();
    }
    template <class Emit>
    void finish(Emit&& output) {
        for (size_t slot = 0; slot < open_.size(); ++slot)
            close(open_[slot], output, slot % 2 == 1);
    }

  private:
    // The first item whole (a run of one is emitted as it is); of the longest, what the
    // folded item takes (copying whole items was most of the folding's time).
    struct Run {
        int64_t bucket = 0;
        uint64_t count = 0;
        int64_t end = 0;
        int64_t longestDur = 0;
        uint32_t longestName = 0;
        SliceItem first;
    };
    template <class Emit>
    void close(Run& run, Emit& output, bool instants) {
        if (run.count == 0) return;
        if (run.count == 1) {
            output(run.first);
        } else {
            SliceItem folded;
            folded.start = run.first.start;
            folded.dur = run.end - run.first.start;
            folded.name = run.longestName;
            folded.depth = run.first.depth;
            folded.kind = ItemKind::Folded;
            folded.count = run.count;
            folded.args = instants ? kFoldedInstants : 0;
            output(folded);
        }
        run.count = 0;
    }
    int64_t width_;
    int shift_;
    std::vector<Run> open_;
};

// Counter buckets: first timestamp, last value, min, max and count of the samples in each.
class CounterFolder {
  public:
    explicit CounterFolder(int64_t width) : shift_(std::countr_zero(uint64_t(width))) {}
    template <class Emit>
    void add(const CounterItem& s, Emit&& output) {
        const int64_t bucket = s.ts >> shift_;
        if (open_ && bucket == bucket_) {
            item_.value = s.value;
            item_.min = std::min(item_.min, s.min);
            item_.max = std::max(item_.max, s.max);
            item_.count += s.count;
            return;
        }
        finish(output);
        open_ = true;
        bucket_ = bucket;
        item_ = s;
    }
    template <class Emit>
    void finish(Emit&& output) {
        if (open_) output(item_);
        open_ = false;
    }

  private:
    int shift_;
    bool open_ = false;
    int64_t bucket_ = 0;
    CounterItem item_;
};

// Chains folders: what folder k emits goes to `visit(k, item)` and on into folder k + 1.
template <class Folder, class Item, class Visit>
class Cascade {
  public:
    Cascade(std::vector<Folder>& folders, Visit visit)
        : folders_(folders), visit_(std::move(visit)) {
        for (size_t k = 0; k < folders.size(); ++k) emits_.push_back(Emit{this, k});
    }
    Cascade(const Cascade&) = delete;
    Cascade& operator=(const Cascade&) = delete;
    struct Emit {
        Cascade* cascade;
        size_t k;
        void operator()(const Item& item) const {
            cascade->visit_(k, item);
            if (k + 1 < cascade->folders_.size())
                cascade->folders_[k + 1].add(item, cascade->emits_[k + 1]);
        }
    };
    // Level-0 items in order go into the first folder.
    void add(const Item& item) {
        if (!folders_.empty()) folders_[0].add(item, emits_[0]);
    }
    // Closes every open run, finer levels first (what they emit still goes up).
    void finish() {
        for (size_t k = 0; k < folders_.size(); ++k) folders_[k].finish(emits_[k]);
    }

  private:
    std::vector<Folder>& folders_;
    Visit visit_;
    std::vector<Emit> emits_;
};

// The highest level worth counting for a track spanning `span` ns: the first whose bucket
// holds the whole span (at least 1).
int topLevelFor(int64_t span);

// Levels worth storing: a level is kept when it holds at most half the items of the last kept
// one, so a query at any resolution reads at most about twice the items of the ideal level.
// counts[k]: the items level k would hold (counts[0] unused).
std::vector<int> chooseLevels(uint64_t levelZeroItems, const std::vector<uint64_t>& counts);

// First pass over a track's level-0 items: how many items each level up to topLevelFor(span)
// would hold, and from that the levels to store.
template <class Folder, class Item>
class LevelCounter {
  public:
    explicit LevelCounter(int64_t span)
        : counts_(size_t(topLevelFor(std::max<int64_t>(1, span))) + 1, 0),
          folders_(makeFolders(counts_.size())),
          cascade_(folders_, CountItem{&counts_}) {}
    void add(const Item& item) { cascade_.add(item); }
    // The levels to store, 0 first; call once, after the last item.
    std::vector<int> finish(uint64_t levelZeroItems) {
        cascade_.finish();
        return chooseLevels(levelZeroItems, counts_);
    }
    // Items level k would hold (after finish()).
    uint64_t count(int level) const { return counts_[size_t(level)]; }

  private:
    // folders_[k] folds level k + 1 and feeds its items to the next level up.
    struct CountItem {
        std::vector<uint64_t>* counts;
        void operator()(size_t k, const Item&) const { ++(*counts)[k + 1]; }
    };
    static std::vector<Folder> makeFolders(size_t levels) {
        std::vector<Folder> folders;
        for (size_t k = 1; k < levels; ++k) folders.emplace_back(lodWidth(int(k)));
        return folders;
    }
    std::vector<uint64_t> counts_;
    std::vector<Folder> folders_;
    Cascade<Folder, Item, CountItem> cascade_;
};

// Second pass: builds the kept levels from a track's level-0 items in order. output(level,
// item) receives each item of each level above 0, in order within a level.
template <class Folder, class Item, class Output>
class LevelBuilder {
  public:
    // levels: as chooseLevels returns them (0 first, then ascending).
    LevelBuilder(const std::vector<int>& levels, Output output)
        : levels_(levels),
          folders_(makeFolders(levels)),
          cascade_(folders_, ToLevel{&levels_, std::move(output)}) {}
    void add(const Item& item) { cascade_.add(item); }
    void finish() { cascade_.finish(); }

  private:
    struct ToLevel {
        const std::vector<int>* levels;
        Output output;
        void operator()(size_t i, const Item& item) { output((*levels)[i + 1], item); }
    };
    static std::vector<Folder> makeFolders(const std::vector<int>& levels) {
        std::vector<Folder> folders;
        for (size_t i = 1; i < levels.size(); ++i) folders.emplace_back(lodWidth(levels[i]));
        return folders;
    }
    std::vector<int> levels_;
    std::vector<Folder> folders_;
    Cascade<Folder, Item, ToLevel> cascade_;
};

}  // namespace stallscope::trace
