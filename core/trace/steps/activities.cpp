#include <algorithm>
#include <stdexcept>

#include "core/trace/steps/internal.h"

namespace stallscope::trace::steps {

namespace {

// The record's first byte (a one-byte varint): the class, and whether a launch follows.
constexpr uint8_t kHasLaunch = 0x40;
static_assert(kDeviceClassCount < kHasLaunch);

}  // namespace

void PackedActivities::push_back(const Activity& a) {
    if (a.start < lastStart_)
        throw std::logic_error("device activities appended out of start order");
    if (size_ % kBlock == 0) {
        // A block never straddles two pieces; the first piece grows as needed (most devices
        // hold few activities), later ones are whole pieces.
        if (pieces_.empty() || pieces_.back().size() + kBlock * kMaxRecordBytes > kPieceBytes) {
            pieces_.emplace_back();
            if (pieces_.size() > 1) pieces_.back().reserve(kPieceBytes);
        }
        blocks_.push_back({a.start, uint32_t(pieces_.size() - 1), uint32_t(pieces_.back().size())});
    }
    const bool hasLaunch = a.launch != INT64_MIN;
    if (a.cls >= kHasLaunch) throw std::logic_error("device activity of an unknown class");
    ByteSpool& out = pieces_.back();
    char* at = out.tail(kMaxRecordBytes);
    *at++ = char(a.cls | (hasLaunch ? kHasLaunch : 0));
    if (size_ % kBlock != 0) at = putVarint(at, uint64_t(a.start) - uint64_t(lastStart_));
    at = putZigzag(at, difference(a.end, a.start));
    if (hasLaunch) at = putZigzag(at, difference(a.start, a.launch));
    at = putZigzag(at, a.launchTrack);
    out.advance(at);
    lastStart_ = a.start;
    ++size_;
}

void PackedActivities::clear() {
    PackedActivities().swap(*this);
}

void PackedActivities::swap(PackedActivities& other) noexcept {
    blocks_.swap(other.blocks_);
    pieces_.swap(other.pieces_);
    std::swap(size_, other.size_);
    std::swap(lastStart_, other.lastStart_);
}

void PackedActivities::shrinkToFit() {
    blocks_.shrink_to_fit();
    if (!pieces_.empty()) pieces_.back().shrinkToFit();
}

PackedActivities::Cursor PackedActivities::firstStartingFrom(int64_t t) const {
    // Every block before the first one starting at or after t starts before t: the answer is
    // in the block before it (at its end) or is that block's first.
    const auto block = std::partition_point(blocks_.begin(), blocks_.end(),
                                            [t](const Block& b) { return b.firstStart < t; });
    const size_t from = block == blocks_.begin() ? 0 : size_t(block - blocks_.begin()) - 1;
    Cursor c(*this, from);
    while (c.valid() && c->start < t) c.next();
    return c;
}

PackedActivities::Cursor::Cursor(const PackedActivities& list, size_t block)
    : list_(&list), index_(block * kBlock) {
    if (!valid()) return;
    const Block& b = list.blocks_[block];
    at_ = list.pieces_[b.piece].data() + b.offset;
    current_.start = b.firstStart;
    decode(true);
}

void PackedActivities::Cursor::decode(bool first) {
    const auto header = uint8_t(*at_++);
    current_.cls = uint8_t(header & ~kHasLaunch);
    if (!first) current_.start = plus(current_.start, int64_t(readVarint(at_)));
    current_.end = plus(current_.start, readZigzag(at_));
    current_.launch =
        (header & kHasLaunch) != 0 ? difference(current_.start, readZigzag(at_)) : INT64_MIN;
    current_.launchTrack = int32_t(readZigzag(at_));
}

void PackedActivities::Cursor::next() {
    if (++index_ >= list_->size_) return;
    if (index_ % kBlock == 0) {
        *this = Cursor(*list_, index_ / kBlock);
        return;
    }
    decode(false);
}

}  // namespace stallscope::trace::steps
