#include "core/trace/string_interner.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace stallscope::trace {

namespace {
// A new arena block holds at least this much: one allocation per megabyte of names.
constexpr size_t kArenaBlock = size_t(1) << 20;
}  // namespace

StringInterner::StringInterner() : slots_(1024, 0) {}

uint32_t StringInterner::intern(std::string_view text) {
    const uint64_t hash = std::hash<std::string_view>{}(text);
    const uint64_t tag = hash >> 32 << 32;
    const size_t mask = slots_.size() - 1;
    size_t slot = size_t(hash) & mask;
    while (const uint64_t entry = slots_[slot]) {
        const uint32_t id = uint32_t(entry) - 1;
        if ((entry >> 32 << 32) == tag && strings_[id] == text) return id;
        slot = (slot + 1) & mask;
    }
    const uint32_t id = uint32_t(strings_.size());
    strings_.push_back(store(text));
    hashes_.push_back(hash);
    slots_[slot] = tag | (uint64_t(id) + 1);
    if (strings_.size() * 2 > slots_.size()) growSlots();
    return id;
}

std::string_view StringInterner::store(std::string_view text) {
    if (text.empty()) return {};
    if (text.size() > arenaLeft_) {
        const size_t block = std::max(text.size(), kArenaBlock);
        arena_.push_back(std::make_unique_for_overwrite<char[]>(block));
        arenaNext_ = arena_.back().get();
        arenaLeft_ = block;
    }
    std::memcpy(arenaNext_, text.data(), text.size());
    const std::string_view stored(arenaNext_, text.size());
    arenaNext_ += text.size();
    arenaLeft_ -= text.size();
    return stored;
}

void StringInterner::growSlots() {
    std::vector<uint64_t> slots(slots_.size() * 2, 0);
    const size_t mask = slots.size() - 1;
    for (uint32_t id = 0; id < strings_.size(); ++id) {
        size_t slot = size_t(hashes_[id]) & mask;
        while (slots[slot]) slot = (slot + 1) & mask;
        slots[slot] = (hashes_[id] >> 32 << 32) | (uint64_t(id) + 1);
    }
    slots_.swap(slots);
}

}  // namespace stallscope::trace
