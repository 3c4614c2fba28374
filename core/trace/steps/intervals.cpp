// Interval lists of the step analysis: merging, lookups, and the packed form the host's lists
// are kept in (varint deltas in blocks).

#include <algorithm>

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

PackedIntervals::PackedIntervals(const std::vector<Interval>& merged) : size_(merged.size()) {
    ByteWriter out;
    for (size_t i = 0; i < merged.size(); ++i) {
        const Interval& v = merged[i];
        if (i % kBlock == 0) blocks_.push_back({v.start, v.end, out.size()});
        // From the previous end (the block's first: from its own start, 0).
        const int64_t from = i % kBlock == 0 ? v.start : merged[i - 1].end;
        out.varint(uint64_t(v.start - from));
        out.varint(uint64_t(v.end - v.start));
        blocks_.back().lastEnd = v.end;
    }
    bytes_ = out.release();
    bytes_.shrink_to_fit();
    blocks_.shrink_to_fit();
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
    reader_ = ByteReader(std::string_view(list_->bytes_).substr(list_->blocks_[block_].offset));
    inBlock_ = 0;
    current_.end = list_->blocks_[block_].firstStart;
    decode();
}

void PackedIntervals::Cursor::decode() {
    current_.start = current_.end + int64_t(reader_.varint());
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

}  // namespace stallscope::trace::steps
