#pragma once

#include <QImage>
#include <QWidget>
#include <vector>

#include "views/common/cards.h"
#include "views/replay/replay_document.h"

namespace stallscope {

// The overview page of a replay profile (XProf-overview-like): headline figures (total cycles,
// stall cycles and share, base-latency vs transfer stall, slack), unit utilization, data-cache
// medians, the most stalled DMAs and the suggestions with their re-simulated savings. Rows are
// clickable: dmaActivated / suggestionActivated.
class ReplayOverview : public QWidget {
    Q_OBJECT
  public:
    static constexpr int kTopDmas = 60;  // as many as the panel's height shows
    static constexpr int kTopSuggestions = 40;
    static constexpr int kRowHeight = 22;

    explicit ReplayOverview(QWidget* parent = nullptr);
    void setDocument(ReplayDocumentPtr doc);
    // DMA indices by stall, largest first (at most kTopDmas).
    std::vector<size_t> topStalledDmas() const { return topDmas_; }

    void paintContent(QPainter& painter, QSize size) const;
    QImage renderImage(QSize size) const;
    // Clickable rows for a size: DMA rows then suggestion rows.
    struct Row {
        QRect rect;
        bool suggestion = false;
        size_t index = 0;  // DMA index or suggestion index
    };
    std::vector<Row> rowsFor(QSize size) const;

    // The headline cards as drawn at a size (views/common/cards.h).
    using Card = stallscope::Card;
    std::vector<Card> cardsFor(QSize size, const QPaintDevice* device = nullptr) const;
    QSize sizeHint() const override { return {1100, 760}; }
    QSize minimumSizeHint() const override { return {kMinimumWidth, kMinimumHeight}; }
    // Small enough for the window's central area at 1280×800 with both side docks open.
    static constexpr int kMinimumWidth = 520;
    static constexpr int kMinimumHeight = 400;

  signals:
    void dmaActivated(size_t dma);
    void suggestionActivated(int suggestion);

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

  private:
    struct Areas {
        QRect cards, units, dcache, dmas, suggestions;
    };
    Areas areasFor(QSize size, const QPaintDevice* device = nullptr) const;
    std::vector<Card> cardContents() const;
    ReplayDocumentPtr doc_;
    std::vector<size_t> topDmas_;
    int hoverRow_ = -1;
};

}  // namespace stallscope
