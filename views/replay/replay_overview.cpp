#include "views/replay/replay_overview.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>

#include "views/common/format.h"
#include "views/replay/replay_tracks.h"

namespace stallscope {
namespace {

constexpr int kMargin = 16;
constexpr int kTitleHeight = 26;

QString num(double v) {
    return format::localCount(v);
}
QString pct(double part, double whole) {
    return format::percentOf(part, whole);
}

int textWidth(const QFont& font, const QString& text, const QPaintDevice* device) {
    return device ? QFontMetrics(font, device).horizontalAdvance(text)
                  : QFontMetrics(font).horizontalAdvance(text);
}

void sectionTitle(QPainter& p, const QRect& r, const QString& title) {
    QFont f = p.font();
    f.setBold(true);
    f.setPointSizeF(f.pointSizeF() * 1.05);
    p.setFont(f);
    p.setPen(QColor(40, 40, 40));
    p.drawText(QRect(r.left(), r.top(), r.width() - 6, kTitleHeight),
               Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(title, Qt::ElideRight, r.width() - 6));
    p.setFont(QFont());
}

constexpr int kLinkColumn = 1;
constexpr int kCellGap = 6;

// Left edges of the DMA table's columns over `width` (one more entry: the right end). Each figure
// column gets the width of its widest text; when they do not all fit, the least telling columns
// get none (base, transfer, bytes, backtail, in that order) rather than cut figures. The link's
// name takes what is left and elides.
std::vector<int> dmaColumns(const QStringList& headers, const std::vector<QStringList>& rows,
                            int width, const QPaintDevice* device) {
    QFont bold;
    bold.setBold(true);
    const int n = static_cast<int>(headers.size());
    std::vector<int> need(size_t(n), 0);
    for (int c = 0; c < n; ++c) {
        need[size_t(c)] = textWidth(bold, headers[c], device);
        for (const QStringList& row : rows)
            if (c < row.size())
                need[size_t(c)] = std::max(need[size_t(c)], textWidth(QFont(), row[c], device));
        need[size_t(c)] += kCellGap;
    }
    const int linkMinimum = std::min(need[kLinkColumn], textWidth(QFont(), "hbm->…", device));
    constexpr int kKeepFirst[] = {0, 3, kLinkColumn, 6, 2, 4, 5};
    std::vector<int> widths(size_t(n), 0);
    int used = 0;
    for (int c : kKeepFirst) {
        const int w = c == kLinkColumn ? linkMinimum : need[size_t(c)];
        if (used + w > width) continue;
        widths[size_t(c)] = w;
        used += w;
    }
    // Room left: the link's full name first, then evenly over the shown columns.
    if (widths[kLinkColumn] > 0) {
        const int more = std::min(width - used, need[kLinkColumn] - widths[kLinkColumn]);
        widths[kLinkColumn] += more;
        used += more;
    }
    const int shown = int(std::count_if(widths.begin(), widths.end(), [](int w) { return w > 0; }));
    const int spare = shown > 0 ? (width - used) / shown : 0;
    std::vector<int> x{0};
    for (int w : widths) x.push_back(x.back() + (w > 0 ? w + spare : 0));
    return x;
}
}  // namespace

ReplayOverview::ReplayOverview(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(kMinimumWidth, kMinimumHeight);
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

ReplayOverview::Areas ReplayOverview::areasFor(QSize size, const QPaintDevice* device) const {
    Areas a;
    const int w = size.width() - 2 * kMargin;
    int cardsHeight = cards::kHeight;
    if (doc_) {
        cardsHeight = cards::heightFor(cardContents(), w, device);
    }
    a.cards = QRect(kMargin, kMargin, w, cardsHeight);
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
    const Areas a = areasFor(size, this);
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

std::vector<ReplayOverview::Card> ReplayOverview::cardContents() const {
    const auto& sim = doc_->analysis.sim;
    const double total = static_cast<double>(sim.totalCycles);
    uint64_t slack = 0;
    size_t dmasWithSlack = 0;
    for (const auto& t : sim.dmas) {
        slack += t.slack;
        if (t.slack > 0) ++dmasWithSlack;
    }
    return {{tr("Total"), tr("%1 cycles").arg(num(total)),
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
}

std::vector<ReplayOverview::Card> ReplayOverview::cardsFor(QSize size,
                                                           const QPaintDevice* device) const {
    if (!doc_) return {};
    std::vector<Card> cards = cardContents();
    const QRect area = areasFor(size, device).cards;
    cards::place(cards, area, device);
    return cards;
}

void ReplayOverview::paintContent(QPainter& p, QSize size) const {
    p.fillRect(QRect(QPoint(0, 0), size), QColor(246, 247, 249));
    if (!doc_) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter, tr("Loading and analysing…"));
        return;
    }
    const auto& sim = doc_->analysis.sim;
    const Areas a = areasFor(size, p.device());
    const double total = static_cast<double>(sim.totalCycles);

    cards::paint(p, cardsFor(size, p.device()));
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
    // The figure keeps its width; a narrow panel elides the name before it instead.
    const auto line = [&](const QString& k, const QString& v) {
        const int valueWidth = p.fontMetrics().horizontalAdvance(v);
        const int valueLeft =
            std::max(a.dcache.left() + 10,
                     std::min(a.dcache.left() + 270, a.dcache.right() - 10 - valueWidth));
        const int keyWidth = std::max(0, valueLeft - 10 - (a.dcache.left() + 10));
        p.setPen(QColor(90, 90, 90));
        p.drawText(QRect(a.dcache.left() + 10, y, keyWidth, 18), Qt::AlignLeft | Qt::AlignVCenter,
                   p.fontMetrics().elidedText(k, Qt::ElideRight, keyWidth));
        p.setPen(QColor(20, 20, 20));
        p.drawText(QRect(valueLeft, y, std::max(valueWidth, a.dcache.right() - 10 - valueLeft), 18),
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
    const std::vector<Row> rows = rowsFor(size);
    std::vector<QStringList> cells(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].suggestion) continue;
        const size_t d = rows[i].index;
        const auto& t = sim.dmas[d];
        const auto& dep = doc_->analysis.deps.dmas;
        const double backtail =
            d < dep.size() ? double(t.issueCycle) - double(dep[d].backtailCycle) : 0.0;
        cells[i] = {QString::number(doc_->trace.dmas[d].id),
                    QString::fromStdString(doc_->trace.machine.linkName(doc_->trace.dmas[d].link)),
                    num(double(doc_->trace.dmas[d].bytes())),
                    num(double(t.baseStall + t.transferStall)),
                    num(double(t.baseStall)),
                    num(double(t.transferStall)),
                    num(backtail)};
    }
    const std::vector<int> columnX = dmaColumns(headers, cells, a.dmas.width() - 20, p.device());
    const auto drawRow = [&](const QRect& r, const QStringList& row, bool header) {
        QFont f;
        f.setBold(header);
        p.setFont(f);
        for (int c = 0; c < row.size(); ++c) {
            const int width = columnX[size_t(c) + 1] - columnX[size_t(c)] - kCellGap;
            if (width <= 0) continue;  // left out at this width
            const QRect cell(r.left() + 10 + columnX[size_t(c)], r.top(), width, r.height());
            // Only the link's name elides: figures got the room they need.
            p.drawText(cell, (c >= 2 ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter,
                       c == kLinkColumn ? p.fontMetrics().elidedText(row[c], Qt::ElideRight, width)
                                        : row[c]);
        }
        p.setFont(QFont());
    };
    p.setPen(QColor(90, 90, 90));
    drawRow(QRect(a.dmas.left(), a.dmas.top() + kTitleHeight, a.dmas.width(), kRowHeight), headers,
            true);
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& row = rows[i];
        if (int(i) == hoverRow_) p.fillRect(row.rect, QColor(232, 240, 254));
        if (row.suggestion) continue;
        p.setPen(QColor(20, 20, 20));
        drawRow(row.rect, cells[i], false);
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
