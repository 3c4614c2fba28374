#pragma once

#include <QFuture>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "core/replay/instruction_stream.h"
#include "core/replay/suggest.h"
#include "core/workspace.h"
#include "views/common/timeline_lod.h"

namespace stallscope {

// A replay profile ready to draw: the trace, its full analysis and the level-of-detail structures
// the views query per frame. Built once on a worker and immutable afterwards, so views and the
// main window share one instance (shared_ptr<const>) across threads.
struct ReplayDocument {
    std::optional<ProfileInfo> profile;
    replay::InstructionStream trace;
    replay::Analysis analysis;

    // DMAs of one link packed into rows of non-overlapping lifetimes [issue, max(complete, wait)].
    struct DmaRow {
        std::vector<uint32_t> dmas;  // InstructionStream::dmas indices, by issue cycle
        std::vector<double> starts, ends;
        std::vector<double> stallPrefix;  // cumulative stall cycles, size dmas + 1
    };
    struct Lane {
        uint32_t link = 0;
        QString name;  // "hbm->dcache"
        std::vector<DmaRow> rows;
        size_t dmaCount = 0;
    };
    std::vector<Lane> lanes;
    std::vector<uint32_t> dmaLane, dmaRow;  // per DMA

    // Consecutive instructions of one HLO op.
    struct OpRuns {
        std::vector<double> starts, ends;
        std::vector<uint32_t> hlo;         // InstructionStream::hlos index
        std::vector<uint32_t> firstInstr;  // first instruction of the run
        std::vector<uint32_t> instrCount;
    } opRuns;

    // Units other than the DMA engine, with busy time for any window: a prefix table at a fixed
    // bin width, exact per-instruction accumulation when zoomed in further.
    struct Unit {
        uint32_t unit = 0;  // InstructionStream::strings index
        QString name;
        BusyPrefix busy;
        double overall = 0;  // busy fraction over the trace
    };
    std::vector<Unit> units;
    uint32_t maxBusy = 1;              // longest busy span of an instruction
    std::vector<double> completions;   // DMA completion cycles, sorted
    std::vector<double> stallDensity;  // stall cycles per minimap bin

    // Data-cache pages written and never read, per (bin, bucket) like the heatmap: the
    // data-cache analysis's bucketWasted.
    std::vector<double> wastedPages;

    double totalCycles() const { return static_cast<double>(analysis.sim.totalCycles); }
    double clockGhz() const { return trace.machine.clockGhz > 0 ? trace.machine.clockGhz : 1.0; }
    double microseconds(double cycles) const { return cycles / (clockGhz() * 1000.0); }
    // Instructions whose issue cycle lies in [from, to).
    std::pair<uint32_t, uint32_t> instructionsIn(double from, double to) const;
    size_t memoryBytes() const;
};

using ReplayDocumentPtr = std::shared_ptr<const ReplayDocument>;

// Builds the document (analysis included) on the calling thread.
ReplayDocumentPtr buildReplayDocument(replay::InstructionStream trace,
                                      std::optional<ProfileInfo> profile,
                                      bool withSuggestions = true);
// Loads a stored replay profile and builds its document on the calling thread.
ReplayDocumentPtr loadReplayDocument(const QString& workspacePath, const ProfileInfo& profile);

// Documents being loaded or alive, keyed by workspace, profile id and import time: a profile
// opened in a tab while the suggestions dock analyses it is loaded once. Call from the GUI thread.
class ReplayDocumentCache {
  public:
    static ReplayDocumentCache& instance();
    // A future that yields the document (loading it on a worker unless it is loaded or loading).
    // Throws from result() when loading failed.
    QFuture<ReplayDocumentPtr> load(const QString& workspacePath, const ProfileInfo& profile);

  private:
    struct Entry {
        QString key;
        std::weak_ptr<const ReplayDocument> document;
        QFuture<ReplayDocumentPtr> loading;
    };
    std::vector<Entry> entries_;
};

// The re-simulated result of one suggestion: the edited trace's document and where each of the
// suggestion's DMAs issues after the edit.
struct SuggestionPreview {
    size_t suggestion = 0;
    ReplayDocumentPtr edited;
    struct Ghost {
        size_t dma = 0;  // original InstructionStream::dmas index
        double issueCycle = 0, completeCycle = 0;
    };
    std::vector<Ghost> ghosts;  // empty for pins (the DMA goes away)
    double savingCycles = 0;    // original total - edited total
};
SuggestionPreview previewSuggestion(const ReplayDocument& document, size_t suggestion,
                                    bool fullAnalysis);

// Stores the edited trace of a suggestion as a new replay profile derived from the document's
// profile (replay::writeDerivedProfile) in the workspace at `workspacePath`. Returns it.
ProfileInfo applySuggestionAsProfile(const QString& workspacePath, const ReplayDocument& document,
                                     size_t suggestion);

}  // namespace stallscope
