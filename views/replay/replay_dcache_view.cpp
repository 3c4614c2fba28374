#include "views/replay/replay_dcache_view.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>

#include "views/common/format.h"
#include "views/common/time_navigation.h"
#include "views/replay/replay_tracks.h"

namespace stallscope {
namespace {

// Perceptually ordered stops (viridis), dark = empty, yellow = full.
const QColor kStops[] = {QColor(68, 1, 84), QColor(59, 82, 139), QColor(33, 145, 140),
                         QColor(94, 201, 98), QColor(253, 231, 37)};

QColor unusedColour() {
    return QColor(31, 120, 180);
}
QColor largestColour() {
    return QColor(227, 26, 28);
}

// Lower median of values weighted by weights.
double weightedMedian(std::vector<std::pair<double, double>> valueWeight) {
    double total = 0;
    for (const auto& [v, w] : valueWeight) total += w;
    if (total <= 0) return 0;
    std::sort(valueWeight.begin(), valueWeight.end());
    double cumulative = 0;
    for (const auto& [v, w] : valueWeight) {
        cumulative += w;
        if (2 * cumulative >= total) return v;
    }
    return valueWeight.back().first;
}

}  // namespace

DcacheView::DcacheView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(400, 300);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QColor DcacheView::colorFor(double fraction) {
    const double f = std::clamp(fraction, 0.0, 1.0) * 4;
    const int i = std::min(3, static_cast<int>(f));
    const double t = f - i;
    const QColor& a = kStops[i];
    const QColor& b = kStops[i + 1];
    return QColor(static_cast<int>(std::lround(a.red() + (b.red() - a.red()) * t)),
                  static_cast<int>(std::lround(a.green() + (b.green() - a.green()) * t)),
                  static_cast<int>(std::lround(a.blue() + (b.blue() - a.blue()) * t)));
}

double DcacheView::scalePosition(double usedFraction) {
    return std::sqrt(std::clamp(usedFraction, 0.0, 1.0));
}

void DcacheView::setDocument(ReplayDocumentPtr doc) {
    doc_ = std::move(doc);
    rebuildImage();
    window_ = {0, std::max(1.0, doc_ ? doc_->totalCycles() : 1.0)};
    selection_.reset();
    update();
}

void DcacheView::rebuildImage() {
    heat_ = QImage();
    wasted_ = QImage();
    if (!doc_ || !doc_->analysis.dcache.present) return;
    const auto& dc = doc_->analysis.dcache;
    heat_ = QImage(static_cast<int>(dc.bins), static_cast<int>(dc.buckets), QImage::Format_RGB32);
    wasted_ = QImage(heat_.size(), QImage::Format_ARGB32_Premultiplied);
    wasted_.fill(Qt::transparent);
    for (uint32_t bin = 0; bin < dc.bins; ++bin)
        for (uint32_t bucket = 0; bucket < dc.buckets; ++bucket) {
            const double used = dc.bucketUsed[size_t(bin) * dc.buckets + bucket];
            const int y = static_cast<int>(dc.buckets - 1 - bucket);
            heat_.setPixelColor(static_cast<int>(bin), y,
                                colorFor(scalePosition(used / dc.bucketPages)));
            const size_t cell = size_t(bin) * dc.buckets + bucket;
            if (cell < doc_->wastedPages.size() && doc_->wastedPages[cell] > 0)
                wasted_.setPixelColor(static_cast<int>(bin), y, QColor(255, 40, 40, 190));
        }
}

void DcacheView::setWindow(TimeRange window) {
    const double total = doc_ ? std::max(1.0, doc_->totalCycles()) : 1.0;
    double length = std::clamp(window.length(), 4.0, total * 1.2);
    const double start = std::clamp(window.start, -length * 0.1, total - length * 0.9);
    const TimeRange next{start, start + length};
    if (next == window_) return;
    window_ = next;
    update();
    emit windowChanged(window_);
}

void DcacheView::setCursorTime(std::optional<double> time) {
    if (cursor_ == time) return;
    cursor_ = time;
    update();
}

void DcacheView::setSelection(std::optional<TimeRange> range) {
    selection_ = range;
    update();
    emit selectionChanged();
}

void DcacheView::setWastedOverlay(bool on) {
    wastedOverlay_ = on;
    update();
}

DcacheView::Stats DcacheView::stats() const {
    Stats s;
    if (!doc_ || !doc_->analysis.dcache.present) return s;
    const auto& dc = doc_->analysis.dcache;
    if (!selection_ || selection_->length() <= 0) {
        s.medianUnusedPct = dc.medianUnusedPct;
        s.medianLargestFreePct = dc.medianLargestFreePct;
        double sum = 0;
        for (double v : dc.unusedPct) sum += v;
        s.meanUnusedPct = dc.unusedPct.empty() ? 0 : sum / dc.unusedPct.size();
        s.wastedPages = static_cast<double>(dc.wastedPages);
        return s;
    }
    s.wholeTrace = false;
    std::vector<std::pair<double, double>> unused, largest;
    double weighted = 0, weights = 0;
    const double bc = static_cast<double>(dc.binCycles);
    for (uint32_t bin = 0; bin < dc.bins; ++bin) {
        const double a = bin * bc, b = std::min((bin + 1) * bc, doc_->totalCycles());
        const double overlap = std::min(b, selection_->end) - std::max(a, selection_->start);
        if (overlap <= 0) continue;
        unused.emplace_back(dc.unusedPct[bin], overlap);
        largest.emplace_back(dc.largestFreePct[bin], overlap);
        weighted += dc.unusedPct[bin] * overlap;
        weights += overlap;
        for (uint32_t bucket = 0; bucket < dc.buckets; ++bucket)
            s.wastedPages += doc_->wastedPages.empty()
                                 ? 0
                                 : doc_->wastedPages[size_t(bin) * dc.buckets + bucket];
    }
    s.medianUnusedPct = weightedMedian(unused);
    s.medianLargestFreePct = weightedMedian(largest);
    s.meanUnusedPct = weights > 0 ? weighted / weights : 0;
    return s;
}

void DcacheView::setCompact(int left, int right) {
    compact_ = true;
    left_ = left;
    right_ = right;
    statsHeight_ = 64;
    update();
}

DcacheView::Layout DcacheView::layoutFor(QSize size) const {
    Layout l;
    l.header = QRect(0, 0, size.width(), kHeaderHeight);
    l.stats = QRect(left_, kHeaderHeight + 6, size.width() - left_ - right_, statsHeight_);
    const int heatTop = l.stats.bottom() + 12;
    l.heatmap =
        QRect(left_, heatTop, l.stats.width(), std::max(20, size.height() - heatTop - kAxisHeight));
    l.axis = QRect(left_, l.heatmap.bottom() + 1, l.stats.width(), kAxisHeight);
    if (compact_) return l;
    // The scale's title sits above it, inside the right margin, clear of the statistics chart.
    l.scale = QRect(size.width() - right_ + 14, heatTop + 18, 14, l.heatmap.height() - 18);
    return l;
}

TimeMapping DcacheView::mappingFor(QSize size) const {
    const Layout l = layoutFor(size);
    return TimeMapping{window_, double(l.heatmap.left()), double(l.heatmap.width())};
}

std::optional<std::pair<uint32_t, uint32_t>> DcacheView::cellAt(const QPoint& pos,
                                                                QSize size) const {
    if (!doc_ || !doc_->analysis.dcache.present) return std::nullopt;
    const Layout l = layoutFor(size);
    if (!l.heatmap.contains(pos)) return std::nullopt;
    const auto& dc = doc_->analysis.dcache;
    const double t = mappingFor(size).time(pos.x());
    if (t < 0 || t >= doc_->totalCycles()) return std::nullopt;
    const uint32_t bin = std::min<uint32_t>(dc.bins - 1, static_cast<uint32_t>(t / dc.binCycles));
    const double rowHeight = double(l.heatmap.height()) / dc.buckets;
    const uint32_t fromTop = static_cast<uint32_t>((pos.y() - l.heatmap.top()) / rowHeight);
    const uint32_t bucket = dc.buckets - 1 - std::min(dc.buckets - 1, fromTop);
    return std::pair{bin, bucket};
}

QString DcacheView::hoverText(const QPoint& pos, QSize size) const {
    const auto cell = cellAt(pos, size);
    if (!cell) return {};
    const auto& dc = doc_->analysis.dcache;
    const auto [bin, bucket] = *cell;
    const double used = dc.bucketUsed[size_t(bin) * dc.buckets + bucket];
    const double wasted =
        doc_->wastedPages.empty() ? 0 : doc_->wastedPages[size_t(bin) * dc.buckets + bucket];
    const double a = double(bin) * dc.binCycles;
    const double b = std::min(a + dc.binCycles, doc_->totalCycles());
    QString text = tr("bucket %1 (pages %2–%3)\ncycles %4 – %5 (%6 – %7 µs)\nused pages %8 of %9 "
                      "(time average)\nunused %10%, largest contiguous unused %11%")
                       .arg(bucket)
                       .arg(bucket * dc.bucketPages)
                       .arg((bucket + 1) * dc.bucketPages - 1)
                       .arg(format::cycles(a), format::cycles(b))
                       .arg(doc_->microseconds(a), 0, 'f', 2)
                       .arg(doc_->microseconds(b), 0, 'f', 2)
                       .arg(used, 0, 'f', 1)
                       .arg(dc.bucketPages)
                       .arg(dc.unusedPct[bin], 0, 'f', 1)
                       .arg(dc.largestFreePct[bin], 0, 'f', 1);
    if (wasted > 0) text += tr("\n%1 page-writes never read").arg(wasted, 0, 'f', 0);
    return text;
}

QImage DcacheView::renderImage(QSize size) const {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(palette().color(QPalette::Base));
    QPainter painter(&image);
    paintContent(painter, size);
    return image;
}

void DcacheView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paintContent(painter, size());
}

void DcacheView::paintContent(QPainter& painter, QSize size) const {
    painter.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Base));
    const Layout layout = layoutFor(size);
    if (!doc_ || !doc_->analysis.dcache.present) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter,
                         doc_ ? tr("This machine has no data-cache") : tr("Loading…"));
        return;
    }
    const TimeMapping mapping = mappingFor(size);
    const auto& dc = doc_->analysis.dcache;
    const Stats s = stats();
    painter.setPen(palette().color(QPalette::Text));
    QFont bold = painter.font();
    bold.setBold(true);
    painter.setFont(bold);
    const QString scope =
        s.wholeTrace ? tr("whole trace")
                     : tr("selection %1 – %2 cycles")
                           .arg(format::cycles(selection_->start), format::cycles(selection_->end));
    painter.drawText(layout.header.adjusted(8, 0, -8, 0), Qt::AlignVCenter | Qt::AlignLeft,
                     tr("Data-cache: %1 pages of %2 B, %3 buckets of %4 pages — %5: median unused "
                        "%6%, median largest contiguous unused %7%, wasted page-writes %8")
                         .arg(dc.pages)
                         .arg(dc.pageBytes)
                         .arg(dc.buckets)
                         .arg(dc.bucketPages)
                         .arg(scope)
                         .arg(s.medianUnusedPct, 0, 'f', 1)
                         .arg(s.medianLargestFreePct, 0, 'f', 1)
                         .arg(QLocale().toString(s.wastedPages, 'f', 0)));
    painter.setFont(QFont());
    paintStats(painter, layout, mapping);
    paintHeatmap(painter, layout, mapping);
    paintAxis(painter, layout, mapping);
    if (!compact_) paintScale(painter, layout);
}

void DcacheView::paintStats(QPainter& painter, const Layout& layout,
                            const TimeMapping& mapping) const {
    const auto& dc = doc_->analysis.dcache;
    const QRect r = layout.stats;
    painter.fillRect(r, QColor(250, 250, 250));
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(r.adjusted(0, 0, -1, -1));
    const auto y = [&](double pct) { return r.bottom() - pct / 100.0 * (r.height() - 1); };
    painter.setPen(palette().color(QPalette::Text));
    for (int pct : {0, 50, 100}) {
        painter.drawText(QRect(left_ - 44, int(y(pct)) - 8, 38, 16),
                         Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("%1%").arg(pct));
        painter.setPen(QPen(palette().color(QPalette::Midlight), 1, Qt::DotLine));
        painter.drawLine(QPointF(r.left(), y(pct)), QPointF(r.right(), y(pct)));
        painter.setPen(palette().color(QPalette::Text));
    }
    painter.save();
    painter.setClipRect(r);
    painter.setRenderHint(QPainter::Antialiasing, true);
    const double bc = double(dc.binCycles);
    const auto series = [&](const std::vector<double>& values, const QColor& colour) {
        QPolygonF line;
        for (uint32_t bin = 0; bin < dc.bins; ++bin) {
            const double t = (bin + 0.5) * bc;
            const double x = mapping.x(t);
            if (x < r.left() - 50 || x > r.right() + 50) continue;
            line << QPointF(x, y(values[bin]));
        }
        painter.setPen(QPen(colour, 1.6));
        painter.drawPolyline(line);
    };
    series(dc.unusedPct, unusedColour());
    series(dc.largestFreePct, largestColour());
    painter.setRenderHint(QPainter::Antialiasing, false);
    const Stats s = stats();
    painter.setPen(QPen(unusedColour(), 1.2, Qt::DashLine));
    painter.drawLine(QPointF(r.left(), y(s.medianUnusedPct)),
                     QPointF(r.right(), y(s.medianUnusedPct)));
    painter.setPen(QPen(largestColour(), 1.2, Qt::DashLine));
    painter.drawLine(QPointF(r.left(), y(s.medianLargestFreePct)),
                     QPointF(r.right(), y(s.medianLargestFreePct)));
    if (selection_) {
        const double x0 = mapping.x(selection_->start), x1 = mapping.x(selection_->end);
        painter.fillRect(QRectF(x0, r.top(), x1 - x0, r.height()), QColor(255, 170, 0, 45));
    }
    if (cursor_) {
        painter.setPen(QPen(QColor(200, 40, 40), 1));
        painter.drawLine(QPointF(mapping.x(*cursor_), r.top()),
                         QPointF(mapping.x(*cursor_), r.bottom()));
    }
    painter.restore();
    // Labels: the medians at the left, the legend top-right.
    QFont small = painter.font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    painter.setFont(small);
    const QFontMetrics metrics(small);
    if (compact_) {
        // The strip's chart is short: the legend goes in the gutter, clear of the lines.
        int y = r.top();
        for (const auto& [label, colour] :
             {std::pair{tr("unused, med. %1%").arg(s.medianUnusedPct, 0, 'f', 1), unusedColour()},
              std::pair{tr("largest free, %1%").arg(s.medianLargestFreePct, 0, 'f', 1),
                        largestColour()}}) {
            // Clear of the axis labels at the gutter's right end.
            const QRect line(6, y, left_ - 56, metrics.height() + 2);
            painter.setPen(QPen(colour, 2));
            painter.drawLine(line.left(), line.center().y(), line.left() + 14, line.center().y());
            painter.setPen(palette().color(QPalette::Text));
            painter.drawText(line.adjusted(18, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft,
                             metrics.elidedText(label, Qt::ElideRight, line.width() - 18));
            y += line.height() + 2;
        }
        painter.setFont(QFont());
        return;
    }
    const QString unusedLabel = tr("unused %  (median %1%)").arg(s.medianUnusedPct, 0, 'f', 1);
    const QString largestLabel =
        tr("largest contiguous unused %  (median %1%)").arg(s.medianLargestFreePct, 0, 'f', 1);
    int x = r.right() - 8 - metrics.horizontalAdvance(largestLabel) - 30 -
            metrics.horizontalAdvance(unusedLabel) - 30;
    for (const auto& [label, colour] :
         {std::pair{unusedLabel, unusedColour()}, std::pair{largestLabel, largestColour()}}) {
        // At the bottom when the cache is mostly free: the lines then run along the top.
        const int legendTop =
            s.medianUnusedPct > 60 ? r.bottom() - metrics.height() - 6 : r.top() + 4;
        const QRect box(x, legendTop, metrics.horizontalAdvance(label) + 26, metrics.height() + 2);
        painter.fillRect(box, QColor(255, 255, 255, 220));
        painter.setPen(QPen(colour, 2));
        painter.drawLine(box.left() + 2, box.center().y(), box.left() + 18, box.center().y());
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(box.adjusted(22, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
        x += box.width() + 8;
    }
    painter.drawText(QRect(6, r.top(), left_ - 54, r.height()),
                     Qt::AlignVCenter | Qt::AlignLeft | Qt::TextWordWrap, tr("free space"));
    painter.setFont(QFont());
}

void DcacheView::paintHeatmap(QPainter& painter, const Layout& layout,
                              const TimeMapping& mapping) const {
    const auto& dc = doc_->analysis.dcache;
    const QRect r = layout.heatmap;
    painter.fillRect(r, QColor(40, 40, 40));
    // The visible bins as a source rect of the one-pixel-per-cell image, scaled without smoothing.
    const double bc = double(dc.binCycles);
    const double firstBin = std::max(0.0, window_.start / bc);
    const double lastBin = std::min<double>(dc.bins, window_.end / bc);
    if (lastBin > firstBin) {
        const QRectF target(mapping.x(firstBin * bc), r.top(),
                            mapping.x(lastBin * bc) - mapping.x(firstBin * bc), r.height());
        const QRectF source(firstBin, 0, lastBin - firstBin, dc.buckets);
        painter.save();
        painter.setClipRect(r);
        painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
        painter.drawImage(target, heat_, source);
        if (wastedOverlay_) painter.drawImage(target, wasted_, source);
        if (selection_) {
            const double x0 = mapping.x(selection_->start), x1 = mapping.x(selection_->end);
            painter.setPen(QPen(QColor(255, 170, 0), 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(QRectF(x0, r.top(), x1 - x0, r.height() - 1));
        }
        if (cursor_) {
            painter.setPen(QPen(QColor(255, 255, 255), 1));
            painter.drawLine(QPointF(mapping.x(*cursor_), r.top()),
                             QPointF(mapping.x(*cursor_), r.bottom()));
        }
        painter.restore();
    }
    painter.setPen(palette().color(QPalette::Text));
    // Bucket labels on the left every few buckets.
    const double rowHeight = double(r.height()) / dc.buckets;
    const int every = std::max(1, static_cast<int>(std::ceil(18 / rowHeight)));
    QFont small = painter.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter.setFont(small);
    for (uint32_t bucket = 0; bucket < dc.buckets; bucket += every) {
        const double y = r.bottom() - (bucket + 0.5) * rowHeight;
        painter.drawText(QRectF(left_ - 48, y - 8, 42, 16), Qt::AlignRight | Qt::AlignVCenter,
                         QString::number(bucket));
    }
    painter.save();
    painter.translate(14, r.center().y());
    painter.rotate(-90);
    painter.drawText(QRect(-r.height() / 2, -10, r.height(), 20), Qt::AlignCenter,
                     tr("bucket (%1 pages)").arg(dc.bucketPages));
    painter.restore();
    painter.setFont(QFont());
}

void DcacheView::paintAxis(QPainter& painter, const Layout& layout,
                           const TimeMapping& mapping) const {
    const QRect r = layout.axis;
    painter.setPen(palette().color(QPalette::Text));
    const double step = format::nearestWholeStep(mapping.unitsPerPixel() * 110);
    QFont small = painter.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter.setFont(small);
    painter.drawText(QRect(6, r.top(), left_ - 12, r.height() / 2),
                     Qt::AlignLeft | Qt::AlignVCenter, tr("cycles"));
    for (double t = std::ceil(window_.start / step) * step; t <= window_.end; t += step) {
        const int x = static_cast<int>(std::lround(mapping.x(t)));
        if (x < r.left() || x > r.right()) continue;
        painter.setPen(palette().color(QPalette::Mid));
        painter.drawLine(x, r.top(), x, r.top() + 5);
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QRect(x + 3, r.top() + 2, 110, r.height() / 2 - 2),
                         Qt::AlignLeft | Qt::AlignVCenter, format::cycles(t));
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(
            QRect(x + 3, r.top() + r.height() / 2, 110, r.height() / 2 - 2),
            Qt::AlignLeft | Qt::AlignVCenter,
            QStringLiteral("%1 µs").arg(QString::number(doc_->microseconds(t), 'g', 4)));
    }
    painter.setFont(QFont());
}

void DcacheView::paintScale(QPainter& painter, const Layout& layout) const {
    const auto& dc = doc_->analysis.dcache;
    const QRect r = layout.scale;
    for (int y = 0; y < r.height(); ++y)
        painter.fillRect(QRect(r.left(), r.bottom() - y, r.width(), 1),
                         colorFor(double(y) / std::max(1, r.height() - 1)));
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(r.adjusted(0, 0, -1, -1));
    painter.setPen(palette().color(QPalette::Text));
    QFont small = painter.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter.setFont(small);
    // Labels at pages that are round on the square-root scale: 0, 1/16, 1/4 and all.
    for (double pages : {0.0, 1.0 / 16, 0.25, 1.0}) {
        const double f = scalePosition(pages);
        const int y = std::max(r.top() + 7, static_cast<int>(r.bottom() - f * (r.height() - 1)));
        painter.drawText(QRect(r.right() + 3, y - 8, 40, 16), Qt::AlignLeft | Qt::AlignVCenter,
                         QString::number(static_cast<int>(std::lround(pages * dc.bucketPages))));
    }
    painter.drawText(QRect(r.left() - 8, r.top() - 18, right_ - 8, 14), Qt::AlignLeft,
                     tr("used pages"));
    if (wastedOverlay_) {
        painter.fillRect(QRect(r.left(), r.bottom() + 8, 14, 10), QColor(255, 40, 40));
        painter.drawText(QRect(r.left() + 18, r.bottom() + 6, 60, 14), Qt::AlignLeft, tr("wasted"));
    }
    painter.setFont(QFont());
}

QString DcacheView::heatmapCsv() const {
    QString out = QStringLiteral("bin,start_cycle,end_cycle,bucket,used_pages,wasted_pages\n");
    if (!doc_ || !doc_->analysis.dcache.present) return out;
    const auto& dc = doc_->analysis.dcache;
    for (uint32_t bin = 0; bin < dc.bins; ++bin) {
        const uint64_t a = uint64_t(bin) * dc.binCycles;
        const uint64_t b = std::min<uint64_t>(a + dc.binCycles, dc.totalCycles);
        for (uint32_t bucket = 0; bucket < dc.buckets; ++bucket) {
            const size_t cell = size_t(bin) * dc.buckets + bucket;
            out += QStringLiteral("%1,%2,%3,%4,%5,%6\n")
                       .arg(bin)
                       .arg(a)
                       .arg(b)
                       .arg(bucket)
                       .arg(dc.bucketUsed[cell], 0, 'f', 3)
                       .arg(doc_->wastedPages.empty() ? 0.0 : doc_->wastedPages[cell], 0, 'f', 0);
        }
    }
    return out;
}

// ---- interaction ----------------------------------------------------------------------------

void DcacheView::wheelEvent(QWheelEvent* event) {
    const double anchor = mappingFor(size()).time(event->position().x());
    setWindow(TimeNavigation::zoomed(
        window_, TimeNavigation::wheelZoomFactor(event->angleDelta().y()), anchor));
    event->accept();
}

void DcacheView::mousePressEvent(QMouseEvent* event) {
    pressPos_ = event->position().toPoint();
    pressWindow_ = window_;
    const bool select =
        event->button() == Qt::RightButton || (event->modifiers() & Qt::ShiftModifier);
    drag_ = select ? Drag::Select : Drag::Pan;
    if (drag_ == Drag::Select) {
        const double t = mappingFor(size()).time(pressPos_.x());
        setSelection(TimeRange{t, t});
    }
}

void DcacheView::mouseMoveEvent(QMouseEvent* event) {
    const QPoint pos = event->position().toPoint();
    const TimeMapping mapping = mappingFor(size());
    if (drag_ == Drag::Pan) {
        const double shift = (pressPos_.x() - pos.x()) * mapping.unitsPerPixel();
        setWindow({pressWindow_.start + shift, pressWindow_.end + shift});
    } else if (drag_ == Drag::Select) {
        const double a = mapping.time(pressPos_.x()), b = mapping.time(pos.x());
        setSelection(TimeRange{std::min(a, b), std::max(a, b)});
    }
    if (pos.x() >= left_) {
        const double t = mapping.time(pos.x());
        setCursorTime(t);
        emit cursorMoved(t);
    }
}

void DcacheView::mouseReleaseEvent(QMouseEvent*) {
    if (drag_ == Drag::Select && selection_ && selection_->length() <= 0)
        setSelection(std::nullopt);
    if (drag_ == Drag::Pan && (pressWindow_ == window_)) setSelection(std::nullopt);
    drag_ = Drag::None;
}

void DcacheView::keyPressEvent(QKeyEvent* event) {
    const double c =
        cursor_ && window_.contains(*cursor_) ? *cursor_ : (window_.start + window_.end) / 2;
    const TimeRange all{0, doc_ ? doc_->totalCycles() : 1.0};
    if (const auto w = TimeNavigation::windowForKey(event->key(), window_, c, all)) {
        setWindow(*w);
        event->accept();
        return;
    }
    switch (event->key()) {
        case Qt::Key_Escape:
            setSelection(std::nullopt);
            break;
        default:
            QWidget::keyPressEvent(event);
            return;
    }
    event->accept();
}

bool DcacheView::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = hoverText(help->pos(), size());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

}  // namespace stallscope
