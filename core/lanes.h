#pragma once

// One lane assignment for intervals drawn in rows ("lanes") that must not overlap within a row:
// replay DMAs of one link, Chrome async slices of one name, XProf events of one line.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stallscope::lanes {

// Whether an interval may take a lane at the very time the last one there ended.
enum class Touching { SameLane, NextLane };
// Whether an interval may take a lane by lying within the innermost interval open there
// (nested slices of one line), or only where it overlaps nothing.
enum class Nesting { Refused, Allowed };

// First fit: each interval takes the lowest lane free for it, a new lane when none is.
//
// Without nesting a lane is free at t once everything it held has ended by t (SameLane) or
// before t (NextLane), whatever order the intervals come in; an interval whose end is not known
// yet (open) keeps its lane until close(). Finding the lane is O(log lanes).
//
// With nesting, intervals come in start order (longer first at one start) and a lane also takes
// an interval that ends within the innermost interval still open there; finding it scans the
// lanes from the lowest (events of a line rarely need more than a few).
template <class Time>
class LaneAssigner {
  public:
    explicit LaneAssigner(Touching touching, Nesting nesting = Nesting::Refused)
        : touching_(touching), nesting_(nesting) {}

    // The lane of [start, end).
    size_t place(const Time& start, const Time& end) {
        if (nesting_ == Nesting::Allowed) return placeNested(start, end);
        const size_t lane = open(start);
        close(lane, end);
        return lane;
    }
    // The lane of an interval starting at `start` whose end comes later (Nesting::Refused):
    // busy until close().
    size_t open(const Time& start) {
        size_t lane = firstFree(start);
        if (lane == count_) lane = addLane();
        set(lane, {State::Open, {}});
        return lane;
    }
    // Ends the interval open in `lane`: the lane is free from the latest end it held on.
    void close(size_t lane, const Time& end) {
        const Time& held = heldUntil_[lane];
        Time from = end;
        if (everHeld_[lane] && from < held) from = held;
        heldUntil_[lane] = from;
        everHeld_[lane] = true;
        set(lane, {State::FreeFrom, from});
    }
    // Lanes used so far.
    size_t size() const { return nesting_ == Nesting::Allowed ? stacks_.size() : count_; }

  private:
    enum class State : uint8_t { Empty, FreeFrom, Open };  // ordered: the first fits best
    struct Key {
        State state = State::Empty;
        Time from{};
    };
    bool fits(const Key& key, const Time& start) const {
        if (key.state == State::Empty) return true;
        if (key.state == State::Open) return false;
        return touching_ == Touching::SameLane ? !(start < key.from) : key.from < start;
    }
    // The key of a subtree: one that fits whenever any of its lanes' keys does.
    static const Key& better(const Key& a, const Key& b) {
        if (a.state != b.state) return a.state < b.state ? a : b;
        return b.from < a.from ? b : a;
    }
    // The lowest lane whose key fits, count_ when none does.
    size_t firstFree(const Time& start) const {
        if (count_ == 0 || !fits(tree_[1], start)) return count_;
        size_t node = 1;
        while (node < capacity_) node = fits(tree_[2 * node], start) ? 2 * node : 2 * node + 1;
        return node - capacity_;
    }
    size_t addLane() {
        if (count_ == capacity_) {
            // Double the leaves and rebuild: the tree stays complete.
            const size_t grown = capacity_ == 0 ? 8 : 2 * capacity_;
            std::vector<Key> tree(2 * grown, Key{State::Open, {}});
            for (size_t lane = 0; lane < count_; ++lane)
                tree[grown + lane] = tree_[capacity_ + lane];
            for (size_t node = grown - 1; node >= 1; --node)
                tree[node] = better(tree[2 * node], tree[2 * node + 1]);
            tree_.swap(tree);
            capacity_ = grown;
        }
        heldUntil_.emplace_back();
        everHeld_.push_back(false);
        set(count_, Key{});
        return count_++;
    }
    void set(size_t lane, const Key& key) {
        size_t node = capacity_ + lane;
        tree_[node] = key;
        for (node /= 2; node >= 1; node /= 2)
            tree_[node] = better(tree_[2 * node], tree_[2 * node + 1]);
    }
    size_t placeNested(const Time& start, const Time& end) {
        for (size_t lane = 0;; ++lane) {
            if (lane == stacks_.size()) stacks_.emplace_back();
            std::vector<Time>& stack = stacks_[lane];
            // What ended by `start` (before it, NextLane) no longer encloses anything.
            while (!stack.empty() && (touching_ == Touching::SameLane ? !(start < stack.back())
                                                                      : stack.back() < start))
                stack.pop_back();
            if (stack.empty() || !(stack.back() < end)) {
                stack.push_back(end);
                return lane;
            }
        }
    }

    Touching touching_;
    Nesting nesting_;
    // Without nesting: a min-tree over the lanes' keys, leaves from capacity_ on.
    std::vector<Key> tree_;
    size_t capacity_ = 0, count_ = 0;
    std::vector<Time> heldUntil_;  // the latest end each lane held
    std::vector<bool> everHeld_;
    // With nesting: per lane, the ends of the intervals open there, innermost last.
    std::vector<std::vector<Time>> stacks_;
};

}  // namespace stallscope::lanes
