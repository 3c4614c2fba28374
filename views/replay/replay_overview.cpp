#include "views/replay/replay_overview.h"

#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <algorithm>

#include "views/replay/replay_tracks.h"

namespace stallscope {
namespace {

constexpr int kMargin = 16;
constexpr int kCardHeight = 84;
constexpr int kTitleHeight = 26;

QString num(double v) {
    return QLocale().toString(v, 'f', 0);
}
QString pct(double part, double whole) {
    return QStringLiteral("%1%").arg(whole > 0 ? 100.0 * part / whole : 0.0, 0, 'f', 1);
}

void sectionTitle(QPainter& p, const QRect& r, const QString& title) {
    QFont f = p.font();
    f.setBold(true);
    f.setPointSizeF(f.pointSizeF() * 1.05);
    p.setFont(f);
    p.setPen(QColor(40, 40, 40));
    p.drawText(QRect(r.left(), r.top(), r.width(), kTitleHeight), Qt::AlignLeft | Qt::AlignVCenter,
               title);
    p.setFont(QFont());
}

}  // namespace

ReplayOverview::ReplayOverview(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(700, 500);
}

void ReplayOverview::setDocument(ReplayDocumentPtr doc) {
    doc_ = std::move(doc);
    topDmas_.clear();
    if (doc_) {
        const auto& t = doc_->analysis.sim.dmas;
        std::vector<size_t> all(t.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        const size_t n = std::min<size_t>(kTopDmas, all.size());
        const auto stall = [&](size_t d) { return t[d].baseStall + t[d].transferStall; };
        std::partial_sort(
            all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
            [&](size_t a, size_t b) { return stall(a) != stall(b) ? stall(a) > stall(b) : a < b; });
        for (size_t i = 0; i < n; ++i)
            if (stall(all[i]) > 0) topDmas_.push_back(all[i]);
    }
    update();
}

ReplayOverview::Areas ReplayOverview::areasFor(QSize size) const {
    Areas a;
    const int w = size.width() - 2 * kMargin;
    a.cards = QRect(kMargin, kMargin, w, kCardHeight);
    const int midTop = a.cards.bottom() + 14;
    const int half = (w - 16) / 2;
    const int unitRows = doc_ ? static_cast<int>(doc_->units.size()) : 0;
    const int midHeight = kTitleHeight + std::max(4, unitRows) * 22 + 8;
    a.units = QRect(kMargin, midTop, half, midHeight);
    a.dcache = QRect(kMargin + half + 16, midTop, w - half - 16, midHeight);
    const int lowTop = a.units.bottom() + 14;
    const int lowHeight = size.height() - lowTop - kMargin;
    a.dmas = QRect(kMargin, lowTop, half, lowHeight);
    a.suggestions = QRect(kMargin + half + 16, lowTop, w - half - 16, lowHeight);
    return a;
}

std::vector<ReplayOverview::Row> ReplayOverview::rowsFor(QSize size) const {
    std::vector<Row> rows;
    if (!doc_) return rows;
    const Areas a = areasFor(size);
    int y = a.dmas.top() + kTitleHeight + kRowHeight;  // below the header row
    for (size_t d : topDmas_) {
        if (y + kRowHeight > a.dmas.bottom()) break;
        rows.push_back({QRect(a.dmas.left(), y, a.dmas.width(), kRowHeight), false, d});
        y += kRowHeight;
    }
    y = a.suggestions.top() + kTitleHeight;
    const auto& s = doc_->analysis.suggestions;
    for (size_t i = 0; i < s.size() && i < size_t(kTopSuggestions); ++i) {
        const int h = 2 * kRowHeight;
        if (y + h > a.suggestions.bottom()) break;
        rows.push_back({QRect(a.suggestions.left(), y, a.suggestions.width(), h), true, i});
        y += h + 2;
    }
    return rows;
}

QImage ReplayOverview::renderImage(QSize size) const {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    paintContent(painter, size);
    return image;
}

void ReplayOverview::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paintContent(painter, size());
}

void ReplayOverview::paintContent(QPainter& p, QSize size) const {
    p.fillRect(QRect(QPoint(0, 0), size), QColor(246, 247, 249));
    if (!doc_) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter, tr("Loading and analysing…"));
        return;
    }
    const auto& sim = doc_->analysis.sim;
    const Areas a = areasFor(size);
    const double total = static_cast<double>(sim.totalCycles);
    uint64_t slack = 0;
    size_t dmasWithSlack = 0;
    for (const auto& t : sim.dmas) {
        slack += t.slack;
        if (t.slack > 0) ++dmasWithSlack;
    }

    // Headline cards.
    struct Card {
        QString title, value, detail;
        QColor accent;
    };
    const std::vector<Card> cards{
        {tr("Total"), tr("%1 cycles").arg(num(total)),
         tr("%1 µs at %2 GHz").arg(doc_->microseconds(total), 0, 'f', 2).arg(doc_->clockGhz()),
         QColor(60, 60, 60)},
        {tr("Stalled at DMA WAITs"), tr("%1 cycles").arg(num(double(sim.stallCycles))),
         tr("%1 of the run").arg(pct(double(sim.stallCycles), total)),
         replaycolors::transferStall()},
        {tr("Base-latency stall"), tr("%1 cycles").arg(num(double(sim.baseStallCycles))),
         tr("%1 of stalls").arg(pct(double(sim.baseStallCycles), double(sim.stallCycles))),
         replaycolors::baseStall()},
        {tr("Transfer stall"), tr("%1 cycles").arg(num(double(sim.transferStallCycles))),
         tr("%1 of stalls").arg(pct(double(sim.transferStallCycles), double(sim.stallCycles))),
         replaycolors::transferStall()},
        {tr("Slack"), tr("%1 cycles").arg(num(double(slack))),
         dmasWithSlack == 0 ? tr("no WAIT is late")
                            : tr("late WAITs: %1 of %2 DMAs")
                                  .arg(num(double(dmasWithSlack)))
                                  .arg(num(double(sim.dmas.size()))),
         replaycolors::slack()}};
    const int cardWidth = (a.cards.width() - 12 * int(cards.size() - 1)) / int(cards.size());
    QFont big = p.font();
    big.setPointSizeF(big.pointSizeF() * 1.5);
    big.setBold(true);
    for (size_t i = 0; i < cards.size(); ++i) {
        const QRect r(a.cards.left() + int(i) * (cardWidth + 12), a.cards.top(), cardWidth,
                      a.cards.height());
        p.fillRect(r, Qt::white);
        p.fillRect(QRect(r.left(), r.top(), 4, r.height()), cards[i].accent);
        p.setPen(QColor(220, 220, 220));
        p.drawRect(r.adjusted(0, 0, -1, -1));
        p.setPen(QColor(90, 90, 90));
        p.drawText(r.adjusted(14, 8, -8, 0), Qt::AlignLeft | Qt::AlignTop, cards[i].title);
        p.setFont(big);
        p.setPen(QColor(20, 20, 20));
        p.drawText(r.adjusted(14, 26, -8, 0), Qt::AlignLeft | Qt::AlignTop, cards[i].value);
        p.setFont(QFont());
        p.setPen(QColor(90, 90, 90));
        // Narrow cards (docks open): an ellipsis rather than text cut mid-letter.
        const QRect detail = r.adjusted(14, 0, -8, -8);
        p.drawText(detail, Qt::AlignLeft | Qt::AlignBottom,
                   p.fontMetrics().elidedText(cards[i].detail, Qt::ElideRight, detail.width()));
    }
    // Stall split bar under the cards' row is implied by the cards; units next.
    p.fillRect(a.units, Qt::white);
    sectionTitle(p, a.units.adjusted(10, 0, 0, 0), tr("Unit utilization"));
    int y = a.units.top() + kTitleHeight + 2;
    for (const auto& u : doc_->units) {
        const QRect label(a.units.left() + 10, y, 80, 18);
        p.setPen(QColor(40, 40, 40));
        p.drawText(label, Qt::AlignLeft | Qt::AlignVCenter, u.name);
        const QRect bar(label.right() + 6, y + 3, a.units.width() - 170, 12);
        p.fillRect(bar, QColor(235, 235, 235));
        p.fillRect(QRect(bar.left(), bar.top(), int(bar.width() * std::clamp(u.overall, 0.0, 1.0)),
                         bar.height()),
                   replaycolors::unit(u.name));
        p.drawText(QRect(bar.right() + 8, y, 60, 18), Qt::AlignLeft | Qt::AlignVCenter,
                   QStringLiteral("%1%").arg(u.overall * 100, 0, 'f', 1));
        y += 22;
    }
    // Data cache.
    p.fillRect(a.dcache, Qt::white);
    sectionTitle(p, a.dcache.adjusted(10, 0, 0, 0), tr("Data-cache"));
    const auto& dc = doc_->analysis.dcache;
    y = a.dcache.top() + kTitleHeight + 2;
    const auto line = [&](const QString& k, const QString& v) {
        p.setPen(QColor(90, 90, 90));
        p.drawText(QRect(a.dcache.left() + 10, y, 260, 18), Qt::AlignLeft | Qt::AlignVCenter, k);
        p.setPen(QColor(20, 20, 20));
        p.drawText(QRect(a.dcache.left() + 270, y, a.dcache.width() - 280, 18),
                   Qt::AlignLeft | Qt::AlignVCenter, v);
        y += 22;
    };
    if (dc.present) {
        line(tr("median unused"), QStringLiteral("%1%").arg(dc.medianUnusedPct, 0, 'f', 1));
        line(tr("median largest contiguous unused"),
             QStringLiteral("%1%").arg(dc.medianLargestFreePct, 0, 'f', 1));
        line(tr("pages"), tr("%1 of %2 B").arg(num(dc.pages)).arg(dc.pageBytes));
        line(tr("wasted page-writes (never read)"),
             tr("%1 of %2").arg(num(double(dc.wastedPages)), num(double(dc.pageWrites))));
    } else {
        line(tr("no data-cache on this machine"), QString());
    }
    // Top stalled DMAs.
    p.fillRect(a.dmas, Qt::white);
    sectionTitle(p, a.dmas.adjusted(10, 0, 0, 0), tr("Most stalled DMAs (click to show)"));
    const QStringList headers{tr("DMA"),  tr("link"),     tr("bytes"),   tr("stall"),
                              tr("base"), tr("transfer"), tr("backtail")};
    const std::vector<double> columns{0.0, 0.1, 0.34, 0.47, 0.61, 0.74, 0.87};
    const auto drawRow = [&](const QRect& r, const QStringList& cells, bool header) {
        QFont f;
        f.setBold(header);
        p.setFont(f);
        for (int c = 0; c < cells.size(); ++c) {
            const int x0 = r.left() + 10 + int(columns[size_t(c)] * (r.width() - 20));
            const int x1 = c + 1 < cells.size()
                               ? r.left() + 10 + int(columns[size_t(c) + 1] * (r.width() - 20))
                               : r.right() - 6;
            p.drawText(QRect(x0, r.top(), x1 - x0 - 4, r.height()),
                       (c >= 2 ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter,
                       p.fontMetrics().elidedText(cells[c], Qt::ElideRight, x1 - x0 - 4));
        }
        p.setFont(QFont());
    };
    p.setPen(QColor(90, 90, 90));
    drawRow(QRect(a.dmas.left(), a.dmas.top() + kTitleHeight, a.dmas.width(), kRowHeight), headers,
            true);
    const std::vector<Row> rows = rowsFor(size);
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& row = rows[i];
        if (int(i) == hoverRow_) p.fillRect(row.rect, QColor(232, 240, 254));
        if (row.suggestion) continue;
        const size_t d = row.index;
        const auto& t = sim.dmas[d];
        const auto& dep = doc_->analysis.deps.dmas;
        const double backtail =
            d < dep.size() ? double(t.issueCycle) - double(dep[d].backtailCycle) : 0.0;
        p.setPen(QColor(20, 20, 20));
        drawRow(
            row.rect,
            {QString::number(doc_->trace.dmas[d].id),
             QString::fromStdString(doc_->trace.machine.linkName(doc_->trace.dmas[d].link)),
             num(double(doc_->trace.dmas[d].bytes())), num(double(t.baseStall + t.transferStall)),
             num(double(t.baseStall)), num(double(t.transferStall)), num(backtail)},
            false);
    }
    if (topDmas_.empty()) {
        p.setPen(QColor(120, 120, 120));
        p.drawText(a.dmas.adjusted(10, kTitleHeight + kRowHeight, 0, 0),
                   Qt::AlignLeft | Qt::AlignTop, tr("No DMA stalls."));
    }
    // Suggestions.
    p.fillRect(a.suggestions, Qt::white);
    sectionTitle(
        p, a.suggestions.adjusted(10, 0, 0, 0),
        tr("Suggestions (%1, re-simulated savings)").arg(doc_->analysis.suggestions.size()));
    for (const Row& row : rows) {
        if (!row.suggestion) continue;
        const auto& s = doc_->analysis.suggestions[row.index];
        QFont f;
        f.setBold(true);
        p.setFont(f);
        p.setPen(QColor(20, 20, 20));
        const QString head = tr("%1 · saves %2 cycles (%3)")
                                 .arg(QString::fromStdString(s.kind), num(double(s.savingCycles)),
                                      pct(double(s.savingCycles), total));
        p.drawText(row.rect.adjusted(10, 2, -6, -kRowHeight), Qt::AlignLeft | Qt::AlignVCenter,
                   head);
        p.setFont(QFont());
        p.setPen(QColor(80, 80, 80));
        p.drawText(row.rect.adjusted(10, kRowHeight - 2, -6, 0), Qt::AlignLeft | Qt::AlignVCenter,
                   p.fontMetrics().elidedText(QString::fromStdString(s.text), Qt::ElideRight,
                                              row.rect.width() - 16));
    }
    if (doc_->analysis.suggestions.empty()) {
        p.setPen(QColor(120, 120, 120));
        p.drawText(a.suggestions.adjusted(10, kTitleHeight, 0, 0), Qt::AlignLeft | Qt::AlignTop,
                   tr("Nothing to suggest: no stalled DMA can move within its backtail."));
    }
}

void ReplayOverview::mouseMoveEvent(QMouseEvent* event) {
    const auto rows = rowsFor(size());
    int hover = -1;
    for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i].rect.contains(event->position().toPoint())) hover = int(i);
    if (hover != hoverRow_) {
        hoverRow_ = hover;
        setCursor(hover >= 0 ? Qt::PointingHandCursor : Qt::ArrowCursor);
        update();
    }
}

void ReplayOverview::leaveEvent(QEvent*) {
    hoverRow_ = -1;
    update();
}

void ReplayOverview::mouseReleaseEvent(QMouseEvent* event) {
    for (const Row& row : rowsFor(size())) {
        if (!row.rect.contains(event->position().toPoint())) continue;
        if (row.suggestion)
            emit suggestionActivated(static_cast<int>(row.index));
        else
            emit dmaActivated(row.index);
        return;
    }
}

}  // namespace stallscope
