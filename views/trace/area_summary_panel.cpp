#include "views/trace/area_summary_panel.h"

#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "views/common/format.h"
#include "views/common/table_kit.h"

namespace stallscope {

using namespace tablekit;

AreaSummaryPanel::AreaSummaryPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    heading_ =
        new QLabel(tr("Shift-drag (or right-drag) across tracks to sum the slices of an "
                      "area by name; click a process's header for its summary."));
    heading_->setWordWrap(true);
    heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    table_ = new QTableWidget(0, 6);
    table_->setHorizontalHeaderLabels(
        {tr("Name"), tr("Count"), tr("Self"), tr("In range"), tr("Total"), tr("Mean")});
    table_->horizontalHeaderItem(2)->setToolTip(
        tr("Time inside the range not covered by a nested slice: sums to the busy time"));
    table_->horizontalHeaderItem(3)->setToolTip(tr("The slices' time inside the range"));
    table_->horizontalHeaderItem(4)->setToolTip(
        tr("The slices' whole durations, also outside the range"));
    setUpTable(table_);
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    layout->addWidget(heading_);
    layout->addWidget(table_, 1);
    connect(table_, &QTableWidget::cellActivated, this, [this](int row, int) {
        if (const QTableWidgetItem* name = table_->item(row, 0)) emit opActivated(name->text());
    });
}

void AreaSummaryPanel::summarize(TraceSourcePtr source, std::vector<int64_t> tracks, double from,
                                 double to, const QString& what) {
    heading_->setText(tr("Summing %1…").arg(what));
    table_->setRowCount(0);
    const int64_t origin = source->origin();
    const int64_t first = origin + int64_t(std::floor(from));
    const int64_t last = origin + int64_t(std::ceil(to));
    const size_t trackCount = tracks.size();
    // A newer summary stops the one still reading (a click on another process).
    if (cancel_) cancel_->store(true);
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    job_.start(
        [source, tracks = std::move(tracks), first, last, cancel = cancel_] {
            return source->query([&](const trace::TraceStore& store) {
                return trace::summarizeArea(store, tracks, first, last, cancel.get());
            });
        },
        [this, span = to - from, trackCount, what](trace::AreaSummary summary) {
            show(summary, span, trackCount, what);
            emit ready();
        });
}

void AreaSummaryPanel::show(const trace::AreaSummary& summary, double span, size_t trackCount,
                            const QString& what) {
    // Busy: the share of the area's track time some slice covers.
    const double capacity = span * double(std::max<size_t>(summary.tracks, 1));
    QString text = tr("%1: %2 on %3 %4 — %5 %6 of %7 %8")
                       .arg(what, format::nanoseconds(span), format::count(double(trackCount)),
                            trackCount == 1 ? tr("track") : tr("tracks"),
                            format::count(double(summary.slices)),
                            summary.slices == 1 ? tr("slice") : tr("slices"),
                            format::count(double(summary.ops.size())),
                            summary.ops.size() == 1 ? tr("name") : tr("names"));
    if (summary.slices > 0)
        text +=
            tr("; busy %1 (%2 of the time of the %3 %4 with slices)")
                .arg(format::nanoseconds(summary.busy), format::percentOf(summary.busy, capacity),
                     format::count(double(summary.tracks)),
                     summary.tracks == 1 ? tr("track") : tr("tracks"));
    heading_->setText(text);
    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (const trace::AreaOp& op : summary.ops) {
        auto* name = textCell(QString::fromStdString(op.name));
        name->setForeground(traceNameColor(op.name).darker(170));
        rows.push_back({name, numberCell(double(op.count)),
                        numberCell(op.self, format::nanoseconds(op.self)),
                        numberCell(op.inRange, format::nanoseconds(op.inRange)),
                        numberCell(op.total, format::nanoseconds(op.total)),
                        numberCell(op.mean(), format::nanoseconds(op.mean()))});
    }
    fillTable(table_, rows);
}

QString AreaSummaryPanel::headingText() const {
    return heading_->text();
}

QString AreaSummaryPanel::csv() const {
    return tableCsv(table_, QStringLiteral("name,count,self_ns,in_range_ns,total_ns,mean_ns"));
}

}  // namespace stallscope
