#pragma once

// Transfers in the trace view (core/transfers: copies and collectives under the DMA model):
// headline cards over the overview, a track per link above the trace's tracks, the overview's
// Transfers section, and the edits (re-simulated) in the suggestions dock, listed first.

#include <memory>
#include <vector>

#include "core/transfers/transfers.h"
#include "views/common/cards.h"
#include "views/trace/trace_panel.h"

namespace stallscope {

class TransfersTracePanel : public TracePanel {
    Q_OBJECT
  public:
    explicit TransfersTracePanel(TracePanelHost& host);
    ~TransfersTracePanel() override;

    std::string_view analysis() const override { return "transfers"; }
    QWidget* overviewHeader() override { return cards_; }
    QString overviewHtml() const override;
    int overviewOrder() const override { return 2; }
    void setResult(const analysis::Result& result) override;
    void clear() override;
    std::vector<std::shared_ptr<TimelineTrack>> leadingTracks() const override;
    QList<SuggestionItem> suggestions() const override;
    int suggestionOrder() const override { return -1; }  // re-simulated: before the bounds
    void showSuggestion(int index) override;

    void setAnalysis(std::shared_ptr<const transfers::Analysis> analysis);
    // The analysis when it found transfers (null otherwise).
    const std::shared_ptr<const transfers::Analysis>& result() const { return transfers_; }
    CardStrip* cards() const { return cards_; }
    // As a replay's: total, stalled at waits, base vs transfer, slack, the busiest link.
    static std::vector<Card> cardsOf(const transfers::Analysis& analysis);
    // Zooms to a transfer's lifetime (issue to the end of its wait) and selects it.
    void showTransfer(uint32_t id);

  private:
    std::shared_ptr<const transfers::Analysis> transfers_;
    // What could not be made into transfers ("done without start 2, ..."), kept when none
    // were found: the overview says why there are none.
    QString unmatched_;
    CardStrip* cards_ = nullptr;
};

}  // namespace stallscope
