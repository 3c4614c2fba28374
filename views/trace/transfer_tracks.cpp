#include "views/trace/transfer_tracks.h"

#include <QPainter>
#include <algorithm>

#include "core/lanes.h"
#include "views/common/format.h"

namespace stallscope {

namespace {

const QColor kBaseColor(250, 205, 110);      // issue -> ready: the link's base latency
const QColor kQueueColor(200, 200, 200);     // ready -> transfer start: behind others
const QColor kTransferColor(60, 120, 190);   // on the link
const QColor kStallColor(215, 60, 50);       // the wait blocked
const QColor kBacktailColor(120, 120, 120);  // how early it could go

QString bytesText(uint64_t bytes) {
    return format::dataSize(int64_t(bytes));
}

}  // namespace

TransferLinkTrack::TransferLinkTrack(TransferAnalysisPtr analysis, uint32_t link, int64_t origin)
    : analysis_(std::move(analysis)), link_(link), origin_(origin) {
    for (const transfers::Transfer& t : analysis_->transfers)
        if (t.link == link_) transfers_.push_back(t.id);
    std::sort(transfers_.begin(), transfers_.end(), [this](uint32_t a, uint32_t b) {
        return analysis_->transfers[a].issue < analysis_->transfers[b].issue;
    });
    // A lane per transfer in flight at once, from its issue to its completion or wait's end.
    lanes::LaneAssigner<int64_t> assigner(lanes::Touching::SameLane);
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (uint32_t id : transfers_) {
        const transfers::Transfer& t = analysis_->transfers[id];
        const int64_t end = std::max({t.complete, t.waitEnd, t.issue});
        rows_.push_back(int(assigner.place(t.issue, end)));
        first = std::min({first, t.issue, t.backtail});
        longestAfterIssue_ = std::max(longestAfterIssue_, end - t.issue);
        longestBeforeIssue_ =
            std::max(longestBeforeIssue_, t.issue - std::min(t.issue, t.backtail));
        last = std::max(last, end);
    }
    lanes_ = std::max<int>(1, int(assigner.size()));
    if (!transfers_.empty()) extent_ = {double(first - origin_), double(last - origin_)};
}

QString TransferLinkTrack::title() const {
    const transfers::Link& l = analysis_->links[link_];
    QString device = QString::fromStdString(l.device);
    device.remove(QStringLiteral("/device:"));
    return device.isEmpty()
               ? QObject::tr("Transfers · %1").arg(QString::fromStdString(l.name))
               : QObject::tr("Transfers · %1 · %2").arg(device, QString::fromStdString(l.name));
}

int TransferLinkTrack::height() const {
    return 2 * kPadding + std::min(lanes_, kMaxRowsShown) * kRowHeight;
}

int TransferLinkTrack::rowOf(uint32_t id) const {
    const auto it = std::find(transfers_.begin(), transfers_.end(), id);
    if (it == transfers_.end()) return -1;
    return std::min(rows_[size_t(it - transfers_.begin())], kMaxRowsShown - 1);
}

QRectF TransferLinkTrack::rowRect(const QRect& trackRect, int row) const {
    return QRectF(trackRect.left(), trackRect.top() + kPadding + row * kRowHeight + 2,
                  trackRect.width(), kRowHeight - 4);
}

std::shared_ptr<const TrackFrame> TransferLinkTrack::prepare(TimeRange window, double) const {
    // Transfers are few (thousands at most): paint reads them from the analysis.
    auto frame = std::make_shared<TrackFrame>();
    frame->window = window;
    return frame;
}

void TransferLinkTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                              const TrackFrame*,
                              const std::optional<TimelineItem>& selected) const {
    painter.save();
    painter.setClipRect(rect);
    const double left = mapping.window.start + double(origin_);
    const double right = mapping.window.end + double(origin_);
    auto x = [&](int64_t t) { return mapping.x(double(t - origin_)); };
    // Transfers are sorted by issue: only those issued from (left - the longest lifetime) to
    // (right + the longest backtail) can show (a link may hold hundreds of thousands).
    const auto issueOf = [this](uint32_t id) { return double(analysis_->transfers[id].issue); };
    const size_t from = size_t(
        std::lower_bound(transfers_.begin(), transfers_.end(), left - double(longestAfterIssue_),
                         [&](uint32_t id, double t) { return issueOf(id) < t; }) -
        transfers_.begin());
    for (size_t i = from; i < transfers_.size(); ++i) {
        const transfers::Transfer& t = analysis_->transfers[transfers_[i]];
        if (double(t.issue) > right + double(longestBeforeIssue_)) break;
        const int64_t end = std::max({t.complete, t.waitEnd, t.issue});
        if (double(end) < left || double(std::min(t.issue, t.backtail)) > right) continue;
        const QRectF row = rowRect(rect, std::min(rows_[i], kMaxRowsShown - 1));
        const double mid = row.center().y();
        // Backtail: a dashed line from the earliest legal issue to the issue.
        if (t.backtail < t.issue) {
            painter.setPen(QPen(kBacktailColor, 1, Qt::DashLine));
            painter.drawLine(QPointF(x(t.backtail), mid), QPointF(x(t.issue), mid));
            painter.drawLine(QPointF(x(t.backtail), row.top() + 2),
                             QPointF(x(t.backtail), row.bottom() - 2));
        }
        auto span = [&](int64_t from, int64_t to, const QColor& color, double inset) {
            if (to <= from) return;
            const double a = x(from), b = std::max(x(to), a + 1.0);
            painter.fillRect(
                QRectF(QPointF(a, row.top() + inset), QPointF(b, row.bottom() - inset)), color);
        };
        span(t.issue, t.ready, kBaseColor, 2);
        span(t.ready, t.transferStart, kQueueColor, 2);
        span(t.transferStart, t.complete, kTransferColor, 0);
        // The stall: from the wait to the end of its wait, as a red band under the bar.
        if (t.stall() > 0)
            painter.fillRect(QRectF(QPointF(x(t.wait), row.bottom() - 3),
                                    QPointF(std::max(x(t.waitEnd), x(t.wait) + 1), row.bottom())),
                             kStallColor);
        if (selected && selected->id == int64_t(t.id)) {
            painter.setPen(QPen(Qt::black, 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(QRectF(QPointF(x(t.issue), row.top()), QPointF(x(end), row.bottom())));
        }
    }
    painter.restore();
}

std::optional<TimelineItem> TransferLinkTrack::hitTest(const QPoint& pos, const QRect& rect,
                                                       const TimeMapping& mapping,
                                                       const TrackFrame*) const {
    const double t = mapping.time(pos.x()) + double(origin_);
    const double slop = 3 * mapping.unitsPerPixel();
    for (size_t i = 0; i < transfers_.size(); ++i) {
        const transfers::Transfer& tr = analysis_->transfers[transfers_[i]];
        const QRectF row = rowRect(rect, std::min(rows_[i], kMaxRowsShown - 1));
        if (pos.y() < row.top() || pos.y() > row.bottom()) continue;
        const int64_t end = std::max({tr.complete, tr.waitEnd, tr.issue});
        if (t < double(tr.issue) - slop || t > double(end) + slop) continue;
        TimelineItem item;
        item.id = tr.id;
        item.start = double(tr.issue - origin_);
        item.end = double(end - origin_);
        item.row = rows_[i];
        return item;
    }
    return std::nullopt;
}

QString TransferLinkTrack::toolTip(const TimelineItem& item) const {
    if (item.id < 0 || size_t(item.id) >= analysis_->transfers.size()) return {};
    const transfers::Transfer& t = analysis_->transfers[size_t(item.id)];
    QString text = QObject::tr("%1 → %2: %3")
                       .arg(QString::fromStdString(t.name), QString::fromStdString(t.waitName),
                            bytesText(t.bytes));
    if (t.stall() > 0)
        text += QObject::tr("\nstalled %1 at the wait (base %2, transfer %3)")
                    .arg(format::nanoseconds(double(t.stall())),
                         format::nanoseconds(double(t.baseStall)),
                         format::nanoseconds(double(t.transferStall)));
    else if (t.slack > 0)
        text += QObject::tr("\nslack %1").arg(format::nanoseconds(double(t.slack)));
    if (t.queueNs > 0)
        text += QObject::tr("\nqueued %1 behind earlier transfers")
                    .arg(format::nanoseconds(double(t.queueNs)));
    if (t.backtail < t.issue)
        text += QObject::tr("\ncould be issued %1 earlier (%2)")
                    .arg(format::nanoseconds(double(t.issue - t.backtail)),
                         QString::fromUtf8(transfers::backtailName(t.backtailKind)));
    return text;
}

DetailFields TransferLinkTrack::details(const TimelineItem& item) const {
    DetailFields f;
    if (item.id < 0 || size_t(item.id) >= analysis_->transfers.size()) return f;
    const transfers::Transfer& t = analysis_->transfers[size_t(item.id)];
    const transfers::Link& l = analysis_->links[t.link];
    auto at = [this](int64_t v) { return format::nanoseconds(double(v - origin_)); };
    auto ns = [](int64_t v) { return format::nanoseconds(double(v)); };
    f.append({QObject::tr("Transfer"), QString::fromStdString(t.name)});
    f.append({QObject::tr("Waited by"), QString::fromStdString(t.waitName)});
    f.append({QObject::tr("Op"), QString::fromStdString(t.opcode)});
    f.append({QObject::tr("Link"), QString::fromStdString(l.name)});
    f.append({QObject::tr("Bytes"), format::dataSizeWithBytes(int64_t(t.bytes))});
    f.append({QObject::tr("Issue"), at(t.issue)});
    f.append({QObject::tr("Ready"), at(t.ready)});
    f.append({QObject::tr("On the link"),
              QStringLiteral("%1 → %2").arg(at(t.transferStart), at(t.complete))});
    f.append({QObject::tr("Complete"),
              at(t.complete) +
                  (t.completeMeasured ? QObject::tr(" (measured)") : QObject::tr(" (model)"))});
    f.append({QObject::tr("Wait"), QStringLiteral("%1 → %2").arg(at(t.wait), at(t.waitEnd))});
    f.append({QObject::tr("Stall"), QObject::tr("%1 (base %2, transfer %3)")
                                        .arg(ns(t.stall()), ns(t.baseStall), ns(t.transferStall))});
    f.append({QObject::tr("Queued"), ns(t.queueNs)});
    f.append({QObject::tr("Slack"), ns(t.slack)});
    f.append({QObject::tr("Backtail"),
              QStringLiteral("%1 (%2%3)")
                  .arg(at(t.backtail), QString::fromUtf8(transfers::backtailName(t.backtailKind)),
                       t.backtailOp.empty()
                           ? QString()
                           : QStringLiteral(": ") + QString::fromStdString(t.backtailOp))});
    return f;
}

QList<LegendEntry> TransferLinkTrack::legend() const {
    return {{QObject::tr("Base latency"), kBaseColor},
            {QObject::tr("Queued"), kQueueColor},
            {QObject::tr("On the link"), kTransferColor},
            {QObject::tr("Stall at the wait"), kStallColor},
            {QObject::tr("Backtail"), kBacktailColor, LegendEntry::Style::Dashed}};
}

TimeRange TransferLinkTrack::extent() const {
    return extent_;
}

std::vector<std::shared_ptr<TimelineTrack>> makeTransferTracks(const TransferAnalysisPtr& analysis,
                                                               int64_t origin) {
    std::vector<std::shared_ptr<TimelineTrack>> tracks;
    for (uint32_t link = 0; link < analysis->links.size(); ++link)
        if (analysis->links[link].transfers > 0)
            tracks.push_back(std::make_shared<TransferLinkTrack>(analysis, link, origin));
    return tracks;
}

}  // namespace stallscope
