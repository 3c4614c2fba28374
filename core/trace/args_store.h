#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/trace/trace_format.h"

namespace stallscope::trace {

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
    std::unique_ptr<Compressor> compressor_;  // started with the first chunk
};

}  // namespace stallscope::trace
