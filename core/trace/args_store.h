#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace/trace_format.h"

namespace stallscope::trace {

// One member's value of a packed argument object: written as JSON text only when read.
struct ArgValue {
    enum class Kind : uint8_t { Unsigned = 1, Signed = 2, Double = 3, String = 4 };
    Kind kind = Kind::Unsigned;
    uint64_t number = 0;    // Unsigned, Signed (two's complement), Double (its bits)
    std::string_view text;  // String, unescaped
};
// A value as JSON: integers in decimal, doubles with 17 digits (null when not finite), strings
// quoted and escaped.
void appendArgValue(std::string& out, const ArgValue& value);
// The member keys of packed argument objects (each `"name":` as JSON text), by layout id.
using ArgsLayouts = std::vector<std::vector<std::string>>;
// A packed entry (kArgsPacked, the base's id, the layout's id, then each value: its kind and
// its bytes) as its base's id and its own members as a JSON object; throws Failure when it
// does not decode.
std::string expandPackedArgs(std::string_view entry, const ArgsLayouts& layouts, uint64_t& base);
// Values under a layout's keys as a JSON object.
std::string packedArgsText(const std::vector<std::string>& keys, const ArgValue* values,
                           size_t count);
void encodeArgsLayout(const std::vector<std::string>& keys, ByteWriter& out);
void decodeArgsLayouts(std::string_view raw, ArgsLayouts& out);

// The argument objects of a trace's slices and instants (JSON text), numbered from 1 as they
// are added, stored kArgsPerChunk to a zstd-compressed chunk: entry after entry, each a varint
// length and its bytes. An overlay entry is kArgsOverlay, the base's id as a varint, then the
// overlay's own JSON object; it reads back (TraceStore::args) as its own members followed by
// the base's members it does not have.
//
// Chunks are compressed on a worker thread while the importer goes on parsing (compression was
// an eighth of an XProf import) and handed to `store(seq, packed)` in order on the thread that
// adds, which owns the SQLite connection.
class ArgsStore {
  public:
    using StoreChunk = std::function<void(int64_t seq, const std::string& packed)>;
    explicit ArgsStore(StoreChunk store);
    ~ArgsStore();
    ArgsStore(const ArgsStore&) = delete;
    ArgsStore& operator=(const ArgsStore&) = delete;

    // Stores an argument object; returns its id. Several slices may share one id.
    uint64_t add(std::string_view json);
    // Stores `own` (a JSON object) as an overlay on the stored object `base` (0: none, then it
    // is a plain entry). Per-event stats over shared per-op stats (XProf event metadata) cost
    // only the event's own bytes.
    uint64_t addOver(uint64_t base, std::string_view own);
    // Stores an overlay on `base` whose own members are `values` under the keys of `layout`
    // (its id among the layouts the owner keeps): it reads back as addOver would with those
    // members as JSON text, but the text is made only when read (most XProf events carry a
    // few numbers: written as text they were most of an import's bytes and time).
    uint64_t addPacked(uint64_t base, uint32_t layout, const ArgValue* values, size_t count);
    // Stores every chunk, the last one partial.
    void finish();
    uint64_t count() const { return count_; }

  private:
    class Compressor;
    void entryAdded();
    void submitChunk();

    StoreChunk store_;
    uint64_t count_ = 0;
    ByteWriter chunk_;
    std::string packed_;                      // the entry addPacked is making
    std::unique_ptr<Compressor> compressor_;  // started with the first chunk
};

}  // namespace stallscope::trace
