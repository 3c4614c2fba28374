#include "views/trace/step_tracks.h"

#include <QPainter>

#include "views/common/format.h"
#include "views/trace/step_chart.h"

namespace stallscope {

StepStripTrack::StepStripTrack(StepAnalysisPtr analysis, int64_t origin, int device)
    : analysis_(std::move(analysis)), origin_(origin), device_(device) {}

QString StepStripTrack::title() const {
    if (analysis_->devices.empty()) return QObject::tr("Steps");
    return QObject::tr("Steps · %1")
        .arg(QString::fromStdString(analysis_->devices[size_t(device_)].name));
}

std::shared_ptr<const TrackFrame> StepStripTrack::prepare(TimeRange window, double) const {
    // Steps are few (one bar each): paint draws them straight from the analysis.
    auto frame = std::make_shared<TrackFrame>();
    frame->window = window;
    return frame;
}

void StepStripTrack::paint(QPainter& painter, const QRect& rect, const TimeMapping& mapping,
                           const TrackFrame*, const std::optional<TimelineItem>& selected) const {
    painter.save();
    painter.setClipRect(rect);
    const QRectF bar = QRectF(rect).adjusted(0, 2, 0, -2);
    steps::paintStepStrip(painter, bar, *analysis_, device_,
                          [&](double t) { return mapping.x(t - double(origin_)); });
    if (selected) {
        painter.setPen(QPen(QColor(20, 20, 20), 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(QRectF(QPointF(mapping.x(selected->start), bar.top()),
                                QPointF(mapping.x(selected->end), bar.bottom())));
    }
    painter.restore();
}

int StepStripTrack::stepAt(double t) const {
    const double storeTime = t + double(origin_);
    for (size_t i = 0; i < analysis_->steps.size(); ++i) {
        const auto [start, end] = steps::spanOf(*analysis_, int(i), device_);
        if (storeTime >= double(start) && storeTime < double(end)) return int(i);
    }
    return -1;
}

std::optional<TimelineItem> StepStripTrack::hitTest(const QPoint& pos, const QRect&,
                                                    const TimeMapping& mapping,
                                                    const TrackFrame*) const {
    const int step = stepAt(mapping.time(pos.x()));
    if (step < 0) return std::nullopt;
    const auto [start, end] = steps::spanOf(*analysis_, step, device_);
    TimelineItem item;
    item.id = step;
    item.start = double(start - origin_);
    item.end = double(end - origin_);
    return item;
}

QString StepStripTrack::toolTip(const TimelineItem& item) const {
    return steps::stepSummary(*analysis_, int(item.id), device_);
}

DetailFields StepStripTrack::details(const TimelineItem& item) const {
    DetailFields fields;
    if (item.id < 0 || size_t(item.id) >= analysis_->steps.size()) return fields;
    const trace::Step& s = analysis_->steps[size_t(item.id)];
    fields.append({QObject::tr("Step"), steps::stepNumber(s)});
    if (!s.name.empty()) fields.append({QObject::tr("Marker"), QString::fromStdString(s.name)});
    const int64_t own = steps::durationOf(*analysis_, int(item.id), device_);
    fields.append({QObject::tr("Duration"), format::nanoseconds(double(own))});
    if (const auto* b = steps::breakdownOf(*analysis_, int(item.id), device_)) {
        const double duration = double(std::max<int64_t>(own, 1));
        for (const steps::Series& series : steps::series())
            if (const int64_t ns = series.value(*b); ns > 0)
                fields.append({series.label, QStringLiteral("%1 (%2)").arg(
                                                 format::nanoseconds(double(ns)),
                                                 format::percentOf(double(ns), duration))});
    }
    return fields;
}

QList<LegendEntry> StepStripTrack::legend() const {
    QList<LegendEntry> entries;
    for (const steps::Series& s : steps::series()) entries.append({s.label, s.color});
    return entries;
}

TimeRange StepStripTrack::extent() const {
    if (analysis_->steps.empty()) return {};
    return {double(analysis_->steps.front().start - origin_),
            double(analysis_->steps.back().end - origin_)};
}

void StepBoundaryOverlay::paint(QPainter& painter, const QRect& dataArea,
                                const TimeMapping& mapping,
                                const std::function<QRect(const TimelineTrack*)>&) const {
    painter.save();
    painter.setClipRect(dataArea);
    painter.setPen(QPen(QColor(60, 60, 60, 110), 1, Qt::DashLine));
    double last = -1e9;
    for (const trace::Step& s : analysis_->steps) {
        for (const int64_t t : {s.start, s.end}) {
            const double x = mapping.x(double(t - origin_));
            if (x < dataArea.left() || x > dataArea.right() || std::abs(x - last) < 3) continue;
            painter.drawLine(QPointF(x, dataArea.top()), QPointF(x, dataArea.bottom()));
            last = x;
        }
    }
    painter.restore();
}

}  // namespace stallscope
