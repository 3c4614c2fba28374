// Interval lists of the step analysis: merging, lookups, and the packed form the host's lists
// are kept in (varint deltas in blocks).

#include <algorithm>
#include <queue>

#include "core/byte_codec.h"
#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

void mergeIntervals(std::vector<Interval>& v) {
    const auto byStart = [](const Interval& a, const Interval& b) { return a.start < b.start; };
    // Merged, the order of equal starts makes no difference; one thread's come sorted.
    if (!std::is_sorted(v.begin(), v.end(), byStart)) std::sort(v.begin(), v.end(), byStart);
    size_t out = 0;
    for (const Interval& i : v) {
        if (i.end <= i.start) continue;
        if (out > 0 && i.start <= v[out - 1].end)
            v[out - 1].end = std::max(v[out - 1].end, i.end);
        else
            v[out++] = i;
    }
    v.resize(out);
}

size_t firstEndingAfter(const std::vector<Interval>& v, int64_t t) {
    return size_t(std::upper_bound(v.begin(), v.end(), t,
                                   [](int64_t x, const Interval& i) { return x < i.end; }) -
                  v.begin());
}

bool overlapsAny(const std::vector<Interval>& v, int64_t from, int64_t to) {
    const size_t i = firstEndingAfter(v, from);
    return i < v.size() && v[i].start < to;
}

PackedIntervals::PackedIntervals(const std::vector<Interval>& merged) {
    for (const Interval& v : merged) push_back(v);
    shrinkToFit();
}

void PackedIntervals::push_back(const Interval& v) {
    // From the previous end (the block's first: from its own start, 0).
    const int64_t from = size_ % kBlock == 0 ? v.start : blocks_.back().lastEnd;
    if (size_ % kBlock == 0) blocks_.push_back({v.start, v.end, bytes_.size()});
    char* at = putVarint(bytes_.tail(20), uint64_t(v.start) - uint64_t(from));
    bytes_.advance(putVarint(at, uint64_t(v.end - v.start)));
    blocks_.back().lastEnd = v.end;
    ++size_;
}

void PackedIntervals::shrinkToFit() {
    bytes_.shrinkToFit();
    blocks_.shrink_to_fit();
}

void IntervalRuns::add(int64_t start, int64_t end) {
    // A slice before the one being merged (its track not by start): a run of its own, so that
    // every run stays sorted for the merge.
    if (open_ && start < open_->start) endRun();
    if (open_ && start <= open_->end) {
        open_->end = std::max(open_->end, end);
        return;
    }
    if (open_)
        write(*open_);
    else
        runs_.push_back({bytes_.size(), 0, start});
    open_ = Interval{start, end};
}

void IntervalRuns::write(const Interval& v) {
    Run& run = runs_.back();
    char* at =
        putZigzag(bytes_.tail(20), difference(v.start, run.count == 0 ? run.firstStart : lastEnd_));
    bytes_.advance(putZigzag(at, difference(v.end, v.start)));
    lastEnd_ = v.end;
    ++run.count;
}

void IntervalRuns::endRun() {
    if (!open_) return;
    write(*open_);
    open_.reset();
}

PackedIntervals IntervalRuns::merged() {
    endRun();
    struct Reader {
        const char* at;
        size_t left;
        Interval current;
        void read() {
            current.start = plus(current.end, readZigzag(at));
            current.end = plus(current.start, readZigzag(at));
            --left;
        }
    };
    std::vector<Reader> readers;
    readers.reserve(runs_.size());
    using Next = std::pair<int64_t, size_t>;  // (start, reader)
    std::priority_queue<Next, std::vector<Next>, std::greater<Next>> next;
    for (const Run& run : runs_) {
        if (run.count == 0) continue;
        // The run's first interval is written from its own start (its "previous end").
        readers.push_back(
            {bytes_.data() + run.offset, run.count, {run.firstStart, run.firstStart}});
        readers.back().read();
        next.push({readers.back().current.start, readers.size() - 1});
    }
    // As mergeIntervals: by start, empty ones left out, overlapping and touching ones joined.
    PackedIntervals out;
    std::optional<Interval> last;
    const auto take = [&](const Interval& v) {
        if (v.end <= v.start) return;
        if (last && v.start <= last->end) {
            last->end = std::max(last->end, v.end);
        } else {
            if (last) out.push_back(*last);
            last = v;
        }
    };
    while (!next.empty()) {
        const size_t index = next.top().second;
        Reader& r = readers[index];
        next.pop();
        // A run is read on while it stays first (one thread's runs mostly are, whole).
        for (;;) {
            take(r.current);
            if (r.left == 0) break;
            r.read();
            if (!next.empty() && next.top() < Next{r.current.start, index}) {
                next.push({r.current.start, index});
                break;
            }
        }
    }
    if (last) out.push_back(*last);
    out.shrinkToFit();
    IntervalRuns().swap(*this);
    return out;
}

void PackedIntervals::swap(PackedIntervals& other) noexcept {
    blocks_.swap(other.blocks_);
    bytes_.swap(other.bytes_);
    std::swap(size_, other.size_);
}

PackedIntervals::Cursor PackedIntervals::firstEndingAfter(int64_t t) const {
    // Ends grow with the list: the first block whose last end is after t holds it.
    const auto block = std::partition_point(blocks_.begin(), blocks_.end(),
                                            [t](const Block& b) { return b.lastEnd <= t; });
    Cursor c(*this, size_t(block - blocks_.begin()));
    while (c.valid() && c->end <= t) c.next();
    return c;
}

bool PackedIntervals::overlapsAny(int64_t from, int64_t to) const {
    const Cursor c = firstEndingAfter(from);
    return c.valid() && c->start < to;
}

PackedIntervals::Cursor::Cursor(const PackedIntervals& list, size_t block)
    : list_(&list), block_(block) {
    enterBlock();
}

void PackedIntervals::Cursor::enterBlock() {
    if (block_ >= list_->blocks_.size()) return;
    const size_t offset = list_->blocks_[block_].offset;
    reader_ =
        ByteReader(std::string_view(list_->bytes_.data() + offset, list_->bytes_.size() - offset));
    inBlock_ = 0;
    current_.end = list_->blocks_[block_].firstStart;
    decode();
}

void PackedIntervals::Cursor::decode() {
    current_.start = plus(current_.end, int64_t(reader_.varint()));
    current_.end = current_.start + int64_t(reader_.varint());
}

void PackedIntervals::Cursor::next() {
    const size_t index = block_ * kBlock + inBlock_ + 1;
    if (index >= list_->size_) {
        block_ = list_->blocks_.size();
        return;
    }
    if (++inBlock_ == kBlock) {
        ++block_;
        enterBlock();
        return;
    }
    decode();
}

PackedCalls::PackedCalls(const std::vector<RuntimeCall>& sorted) : size_(sorted.size()) {
    blocks_.reserve(sorted.size() / kBlock + 1);
    for (size_t i = 0; i < sorted.size(); ++i) {
        const RuntimeCall& c = sorted[i];
        if (i % kBlock == 0) blocks_.push_back({c.end, c.end, bytes_.size()});
        char* at = putVarint(bytes_.tail(20), uint64_t(difference(c.end, blocks_.back().lastEnd)));
        bytes_.advance(putZigzag(at, difference(c.end, c.start)));
        blocks_.back().lastEnd = c.end;
    }
    bytes_.shrinkToFit();
    blocks_.shrink_to_fit();
}

void PackedCalls::seekBlock(size_t block) {
    block_ = block;
    if (block_ >= blocks_.size()) return;
    const Block& b = blocks_[block_];
    inBlock_ = 0;
    at_ = bytes_.data() + b.offset;
    previousEnd_ = block_ == 0 ? INT64_MIN : blocks_[block_ - 1].lastEnd;
    current_.end = b.firstEnd;
    current_.end = plus(current_.end, int64_t(readVarint(at_)));
    current_.start = difference(current_.end, readZigzag(at_));
}

void PackedCalls::step() {
    if (block_ >= blocks_.size()) return;
    if (block_ * kBlock + inBlock_ + 1 >= size_) {
        previousEnd_ = current_.end;
        block_ = blocks_.size();
        return;
    }
    if (++inBlock_ == kBlock) {
        seekBlock(block_ + 1);
        return;
    }
    previousEnd_ = current_.end;
    current_.end = plus(current_.end, int64_t(readVarint(at_)));
    current_.start = difference(current_.end, readZigzag(at_));
}

std::optional<int64_t> PackedCalls::startOfCallEndingAt(int64_t end) {
    if (size_ == 0) return std::nullopt;
    const bool atEnd = block_ >= blocks_.size();
    if (block_ == SIZE_MAX || end <= previousEnd_ ||
        (!atEnd && end > current_.end && block_ + 1 < blocks_.size() &&
         blocks_[block_ + 1].firstEnd < end)) {
        // Backwards, or past this block: the block holding the first call ending at or after
        // `end` is the last one starting before it (or the first).
        const auto next = std::partition_point(blocks_.begin(), blocks_.end(),
                                               [end](const Block& b) { return b.firstEnd < end; });
        seekBlock(next == blocks_.begin() ? 0 : size_t(next - blocks_.begin()) - 1);
    }
    while (block_ < blocks_.size() && current_.end < end) step();
    if (block_ < blocks_.size() && current_.end == end) return current_.start;
    return std::nullopt;
}

}  // namespace stallscope::trace::steps
