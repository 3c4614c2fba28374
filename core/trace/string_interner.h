#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace stallscope::trace {

// The strings of a trace (names, categories), each stored once under a dense id from 0 that never
// changes. Texts live in arena blocks (no allocation per string) and are found through an
// open-addressing table of ids: a node-based map cost more than parsing when every node has a
// unique name (Chakra).
class StringInterner {
  public:
    StringInterner();
    StringInterner(const StringInterner&) = delete;
    StringInterner& operator=(const StringInterner&) = delete;

    // The id of `text`; a new text gets the next id.
    uint32_t intern(std::string_view text);
    std::string_view text(uint32_t id) const { return strings_[id]; }
    size_t size() const { return strings_.size(); }
    // Every text, by id.
    const std::vector<std::string_view>& texts() const { return strings_; }

  private:
    std::string_view store(std::string_view text);
    void growSlots();

    std::vector<std::unique_ptr<char[]>> arena_;
    size_t arenaLeft_ = 0;
    char* arenaNext_ = nullptr;
    std::vector<std::string_view> strings_;  // by id
    std::vector<uint64_t> hashes_;           // by id
    // (upper 32 bits of the hash) << 32 | (id + 1), 0 when free; a power of two long. The hash
    // bits in the slot spare a cache miss per occupied slot probed.
    std::vector<uint64_t> slots_;
};

}  // namespace stallscope::trace
