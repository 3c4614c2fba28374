#include "views/trace/trace_compare_view.h"

#include <QApplication>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <cmath>

#include "core/compare/step_compare.h"
#include "core/errors.h"
#include "core/trace/step_registration.h"
#include "core/trace/trace_store.h"
#include "views/common/export.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"
#include "views/common/time_navigation.h"
#include "views/common/timeline_view.h"
#include "views/trace/trace_view.h"

namespace stallscope {

using tablekit::kSortRole;
using tablekit::standardCell;

// --- CDF chart ---------------------------------------------------------------------------------

const QColor CdfChart::kColorA(40, 90, 190);
const QColor CdfChart::kColorB(230, 120, 30);

CdfChart::CdfChart(QWidget* parent) : QWidget(parent) {
    setMinimumSize(240, 160);
}

QString CdfChart::xTitle() const {
    if (op_ == QLatin1String(trace::kAllOps)) return tr("duration / median of its op in A");
    return op_.isEmpty() ? tr("duration / median in A")
                         : tr("%1 duration / its median in A").arg(op_);
}

void CdfChart::setCurves(std::vector<trace::CdfPoint> a, std::vector<trace::CdfPoint> b,
                         const QString& op) {
    a_ = std::move(a);
    b_ = std::move(b);
    op_ = op;
    double low = 1, high = 1;
    for (const auto* curve : {&a_, &b_})
        for (const trace::CdfPoint& p : *curve) {
            low = std::min(low, p.value);
            high = std::max(high, p.value);
        }
    log_ = low > 0 && high / low > 10;
    low_ = log_ ? low / 1.2 : 0;
    high_ = high * 1.1;
    update();
}

QRect CdfChart::plotArea(const QRect& rect) const {
    return rect.adjusted(48, 28, -16, -54);
}

double CdfChart::xOf(double value, const QRect& plot) const {
    const double f = log_ ? (std::log(std::max(value, low_)) - std::log(low_)) /
                                (std::log(high_) - std::log(low_))
                          : (value - low_) / (high_ - low_);
    return plot.left() + f * plot.width();
}

void CdfChart::paintChart(QPainter& painter, const QRect& rect) const {
    painter.save();
    painter.fillRect(rect, Qt::white);
    const QRect plot = plotArea(rect);
    const QFontMetrics fm(painter.font());
    painter.setPen(QColor(60, 60, 60));
    const QString title = op_.isEmpty() || op_ == QLatin1String(trace::kAllOps)
                              ? tr("CDF of op durations, normalized to the median in A")
                              : tr("CDF of %1 durations, normalized to its median in A").arg(op_);
    painter.drawText(rect.adjusted(8, 4, -8, 0), Qt::AlignTop | Qt::AlignLeft,
                     fm.elidedText(title, Qt::ElideMiddle, rect.width() - 16));
    painter.setPen(QColor(220, 220, 220));
    for (int i = 0; i <= 4; ++i) {
        const int y = plot.bottom() - i * plot.height() / 4;
        painter.drawLine(plot.left(), y, plot.right(), y);
        painter.setPen(QColor(90, 90, 90));
        painter.drawText(QRect(rect.left(), y - 8, 44, 16), Qt::AlignRight | Qt::AlignVCenter,
                         QString::number(i * 0.25, 'f', 2));
        painter.setPen(QColor(220, 220, 220));
    }
    // x ticks: decades on a log axis, round steps on a linear one.
    std::vector<double> ticks;
    if (log_) {
        for (double t = std::pow(10.0, std::floor(std::log10(low_))); t <= high_; t *= 10)
            if (t >= low_) ticks.push_back(t);
    } else {
        const double step = format::tickStep(high_ - low_, 5);
        for (double t = std::ceil(low_ / step) * step; t <= high_ + 1e-9; t += step)
            ticks.push_back(t);
    }
    for (double t : ticks) {
        const double x = xOf(t, plot);
        painter.setPen(QColor(220, 220, 220));
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
        painter.setPen(QColor(90, 90, 90));
        painter.drawText(QRectF(x - 30, plot.bottom() + 2, 60, 16), Qt::AlignCenter,
                         QString::number(t, 'g', 3));
    }
    painter.setPen(QColor(60, 60, 60));
    painter.drawText(QRect(plot.left(), plot.bottom() + 18, plot.width(), 16), Qt::AlignCenter,
                     fm.elidedText(xTitle(), Qt::ElideMiddle, plot.width()));
    painter.drawRect(plot);
    painter.setRenderHint(QPainter::Antialiasing, true);
    auto drawCurve = [&](const std::vector<trace::CdfPoint>& curve, const QPen& pen) {
        if (curve.empty()) return;
        QPainterPath path(QPointF(plot.left(), plot.bottom()));
        double y = plot.bottom();
        for (const trace::CdfPoint& p : curve) {
            const double x = xOf(p.value, plot);
            path.lineTo(x, y);
            y = plot.bottom() - p.fraction * plot.height();
            path.lineTo(x, y);
        }
        path.lineTo(plot.right(), y);
        painter.setPen(pen);
        painter.drawPath(path);
    };
    // B solid and wide, A dashed and narrower on top: identical curves show both colours.
    drawCurve(b_, QPen(kColorB, 3.2));
    QPen dashed(kColorA, 2.0, Qt::CustomDashLine);
    dashed.setDashPattern({3, 2.5});
    drawCurve(a_, dashed);
    painter.setRenderHint(QPainter::Antialiasing, false);
    // A's median (1.0) over the curves, labelled, so it never hides under them.
    const double mx = xOf(1.0, plot);
    painter.setPen(QPen(QColor(40, 40, 40), 1, Qt::DashLine));
    painter.drawLine(QPointF(mx, plot.top()), QPointF(mx, plot.bottom()));
    painter.save();
    QFont small = painter.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter.setFont(small);
    const QString medianText = tr("A median");
    const int tw = QFontMetrics(small).horizontalAdvance(medianText) + 6;
    const QRectF tag(std::min(mx + 3, double(plot.right() - tw)), plot.top() + 2, tw, 14);
    painter.fillRect(tag, QColor(255, 255, 255, 220));
    painter.setPen(QColor(40, 40, 40));
    painter.drawText(tag, Qt::AlignCenter, medianText);
    painter.restore();
    // Legend: A's dashed line, B's solid one.
    const int ly = rect.bottom() - 6;
    painter.setPen(QPen(kColorA, 2, Qt::DashLine));
    painter.drawLine(plot.left(), ly - 4, plot.left() + 18, ly - 4);
    painter.setPen(QColor(40, 40, 40));
    painter.drawText(QPoint(plot.left() + 24, ly), tr("A (before)"));
    painter.fillRect(QRect(plot.left() + 120, ly - 5, 18, 3), kColorB);
    painter.drawText(QPoint(plot.left() + 144, ly), tr("B (after)"));
    painter.restore();
}

void CdfChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paintChart(painter, rect());
}

// --- compare view ------------------------------------------------------------------------------

TraceComparisonData loadTraceComparison(const std::string& workspacePath, int64_t a, int64_t b) {
    TraceComparisonData data;
    data.a = std::make_shared<TraceSource>(workspacePath, a);
    data.b = std::make_shared<TraceSource>(workspacePath, b);
    auto durations = [](const TraceSourcePtr& s) {
        return s->query(
            [](const trace::TraceStore& store) { return trace::collectDurations(store); });
    };
    data.comparison = trace::compareTraces(durations(data.a), durations(data.b));
    const std::unique_ptr<Workspace> workspace = openForAnalyses(workspacePath);
    data.stepsA =
        std::make_shared<const trace::StepAnalysis>(trace::loadOrAnalyzeSteps(*workspace, a));
    data.stepsB =
        std::make_shared<const trace::StepAnalysis>(trace::loadOrAnalyzeSteps(*workspace, b));
    data.transfers = loadTransferComparison(*workspace, a, b);
    return data;
}

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel(tr("Comparing…"));
    summary_->setWordWrap(true);  // a long summary must not widen the window
    QFont bold = summary_->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    summary_->setFont(bold);
    layout->addWidget(summary_);
    auto* vertical = new QSplitter(Qt::Vertical);
    auto side = [vertical](QLabel*& label, TimelineView*& view) {
        auto* box = new QWidget;
        auto* v = new QVBoxLayout(box);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(1);
        label = new QLabel;
        label->setStyleSheet(QStringLiteral("QLabel { font-weight: bold; padding-left: 4px; }"));
        v->addWidget(label);
        view = new TimelineView;
        // Two timelines and the tabs stack in the central area of a 1280x800 window with its
        // docks (about 640x650): each timeline may shrink below a lone timeline's minimum.
        view->setMinimumHeight(110);
        v->addWidget(view, 1);
        vertical->addWidget(box);
    };
    side(labelA_, timelineA_);
    side(labelB_, timelineB_);
    auto* bottom = new QWidget;
    auto* bottomLayout = new QHBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    auto* tablePane = new QWidget;
    auto* tableLayout = new QVBoxLayout(tablePane);
    tableLayout->setContentsMargins(0, 0, 0, 0);
    auto* tools = new QHBoxLayout;
    filter_ = new QLineEdit;
    filter_->setPlaceholderText(tr("Filter ops"));
    auto* csv = new QPushButton(tr("Export CSV…"));
    tools->addWidget(filter_, 1);
    tools->addWidget(csv);
    tableLayout->addLayout(tools);
    model_ = new QStandardItemModel(this);
    model_->setHorizontalHeaderLabels({tr("Op"), tr("Count A"), tr("Count B"), tr("Total A"),
                                       tr("Total B"), tr("Mean A"), tr("Mean B"), tr("p50 A"),
                                       tr("p50 B"), tr("p95 A"), tr("p95 B"), tr("Δ total"),
                                       tr("Δ %")});
    proxy_ = tablekit::sortingProxy(model_, this);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy_->setFilterKeyColumn(0);
    table_ = new QTableView;
    table_->setModel(proxy_);
    // No sort column until the user clicks a header: rows keep the comparison's order (largest
    // |Δ total| first). QHeaderView starts at column 0 descending otherwise.
    table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    table_->setSortingEnabled(true);
    table_->verticalHeader()->hide();
    // The change next to the op's name: after every A/B pair it was off-screen at 1280x800. Only
    // the shown order moves; the model (and the CSV) keep theirs.
    table_->horizontalHeader()->moveSection(kDeltaTotalColumn, 1);
    table_->horizontalHeader()->moveSection(kDeltaPctColumn, 2);
    tableLayout->addWidget(table_);
    auto* chartPane = new QWidget;
    auto* chartLayout = new QVBoxLayout(chartPane);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    auto* opRow = new QHBoxLayout;
    opRow->addWidget(new QLabel(tr("CDF of:")));
    cdfOp_ = new QComboBox;
    cdfOp_->setToolTip(
        tr("The op whose durations the CDFs show, normalized to its median in A "
           "(SnR Fig. 6); default: the op with the largest total time in A"));
    opRow->addWidget(cdfOp_, 1);
    chartLayout->addLayout(opRow);
    chart_ = new CdfChart;
    chartLayout->addWidget(chart_, 1);
    bottomLayout->addWidget(tablePane, 3);
    bottomLayout->addWidget(chartPane, 2);
    auto* pages = new QTabWidget;
    pages->addTab(bottom, tr("Ops"));
    pages->addTab(buildStepsPane(), tr("Steps"));
    transferPane_ = new TransferComparePane;
    pages->addTab(transferPane_, tr("Transfers"));
    vertical->addWidget(pages);
    layout->addWidget(vertical, 1);
    connect(filter_, &QLineEdit::textChanged, this, &CompareView::setOpFilter);
    connect(cdfOp_, &QComboBox::activated, this,
            [this](int index) { setCdfOp(cdfOp_->itemData(index).toString().toStdString()); });
    connect(csv, &QPushButton::clicked, this, [this] {
        exporting::runExport(
            this, {tr("Op deltas as CSV…"), exporting::Format::Csv, QStringLiteral("op-deltas.csv"),
                   [this](const QString& path, QString* error) { return exportCsv(path, error); }});
    });
    linkWindows();
}

QWidget* CompareView::buildStepsPane() {
    auto* pane = new QWidget;
    auto* layout = new QVBoxLayout(pane);
    layout->setContentsMargins(0, 0, 0, 0);
    stepRecommendations_ = new QLabel;
    stepRecommendations_->setWordWrap(true);
    layout->addWidget(stepRecommendations_);
    auto* split = new QSplitter(Qt::Horizontal);
    stepTable_ = new QTableWidget;
    tablekit::setUpTable(stepTable_);
    stepTable_->setColumnCount(6);
    stepTable_->setHorizontalHeaderLabels({tr("Category"), tr("Share A"), tr("Share B"),
                                           tr("Δ share"), tr("Per step A"), tr("Per step B")});
    split->addWidget(stepTable_);
    stepChartA_ = new StepChartWidget;
    stepChartB_ = new StepChartWidget;
    for (StepChartWidget* chart : {stepChartA_, stepChartB_}) chart->setMinimumWidth(180);
    split->addWidget(stepChartA_);
    split->addWidget(stepChartB_);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 2);
    layout->addWidget(split, 1);
    return pane;
}

void CompareView::showSteps() {
    if (!data_.stepsA || !data_.stepsB) return;
    const trace::StepAnalysis &a = *data_.stepsA, &b = *data_.stepsB;
    const compare::StepComparison c = compare::compareSteps(a, b);
    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (const compare::StepCategoryDelta& d : c.categories) {
        const auto share = [](double pct) {
            return tablekit::numberCell(pct, QStringLiteral("%1 %").arg(pct, 0, 'f', 1));
        };
        const auto ns = [](double value) {
            return tablekit::numberCell(value, format::nanoseconds(value));
        };
        rows.push_back({tablekit::textCell(trace::kCategoryNames[size_t(d.category)]),
                        share(d.aSharePct), share(d.bSharePct),
                        tablekit::deltaCell(d.deltaSharePct(), 1), ns(d.aMeanNs), ns(d.bMeanNs)});
    }
    tablekit::fillTable(stepTable_, rows);
    const auto kinds = [](const std::vector<std::string>& list) {
        QStringList out;
        for (const std::string& k : list) out << QString::fromStdString(k);
        return out.isEmpty() ? tr("none") : out.join(QStringLiteral(", "));
    };
    stepRecommendations_->setText(
        tr("Mean step %1 → %2 · recommendations gone: %3 · new: %4 · still: %5")
            .arg(format::nanoseconds(c.aMeanStepNs), format::nanoseconds(c.bMeanStepNs),
                 kinds(c.recommendationsGone), kinds(c.recommendationsNew),
                 kinds(c.recommendationsKept)));
    // One scale for both, so a longer step looks longer.
    int64_t longest = 1;
    for (const trace::StepAnalysis* s : {&a, &b})  // device 0's own steps, as the charts draw
        for (size_t i = 0; i < s->steps.size(); ++i)
            longest = std::max(longest, steps::durationOf(*s, int(i), 0));
    stepChartA_->setAnalysis(data_.stepsA);
    stepChartB_->setAnalysis(data_.stepsB);
    stepChartA_->setOptions({0, false, tr("A (before): step time"), double(longest) * 1.08});
    stepChartB_->setOptions({0, false, tr("B (after): step time"), double(longest) * 1.08});
}

void CompareView::linkWindows() {
    // Linked time scale: both show the same span from their own start (times are relative).
    navigation_->link(timelineA_);
    navigation_->link(timelineB_);
}

void CompareView::setAsynchronous(bool on) {
    timelineA_->setAsynchronous(on);
    timelineB_->setAsynchronous(on);
}

void CompareView::open(const std::string& workspacePath, int64_t a, int64_t b) {
    loadJob_.start([workspacePath, a, b] { return loadTraceComparison(workspacePath, a, b); },
                   [this](TraceComparisonData data) { setData(std::move(data)); });
}

void CompareView::setData(TraceComparisonData data) {
    data_ = std::move(data);
    summary_->setText(data_.comparison.summary);
    bindingA_ = std::make_unique<TraceTimelineBinding>(*timelineA_, data_.a);
    bindingB_ = std::make_unique<TraceTimelineBinding>(*timelineB_, data_.b);
    // One extent for both so the linked window covers the longer profile.
    const double length = double(std::max(data_.a->store().end() - data_.a->store().start(),
                                          data_.b->store().end() - data_.b->store().start()));
    timelineA_->setExtent(TimeRange{0, std::max(length, 1.0)});
    timelineB_->setExtent(TimeRange{0, std::max(length, 1.0)});
    bindingA_->show(traceTracksInOrder(data_.a->store()));
    bindingB_->show(traceTracksInOrder(data_.b->store()));
    // Minimaps: each profile's busy time over the shared extent.
    auto minimap = [](const trace::TraceDurations& d) {
        return densityOverview(d.busyDensity, TimeRange{0, std::max(1.0, double(d.span))});
    };
    timelineA_->setOverviewPainter(minimap(data_.comparison.a));
    timelineB_->setOverviewPainter(minimap(data_.comparison.b));
    timelineA_->fitAll();
    timelineB_->setWindow(timelineA_->window());
    auto sideText = [](const char* which, const trace::TraceDurations& d) {
        return QStringLiteral("%1 · %2 slices over %3, %4 idle")
            .arg(QString::fromUtf8(which))
            .arg(d.slices)
            .arg(format::nanoseconds(double(d.span)), format::nanoseconds(double(d.idle())));
    };
    showSteps();
    transferPane_->setData(data_.transfers);
    labelA_->setText(sideText("A (before)", data_.comparison.a));
    labelB_->setText(sideText("B (after)", data_.comparison.b));
    proxy_->sort(-1);
    table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    model_->removeRows(0, model_->rowCount());
    for (const trace::OpDelta& op : data_.comparison.ops) {
        const auto ns = [](double v) { return standardCell(format::nanoseconds(v), v); };
        const auto signedNs = [](double v) {
            const QString sign = v < 0 ? QStringLiteral("\u2212") : v > 0 ? "+" : "";
            return standardCell(sign + format::nanoseconds(std::abs(v)), v);
        };
        model_->appendRow(
            {standardCell(QString::fromStdString(op.name), QString::fromStdString(op.name)),
             standardCell(QString::number(op.a.count), double(op.a.count)),
             standardCell(QString::number(op.b.count), double(op.b.count)), ns(double(op.a.total)),
             ns(double(op.b.total)), ns(op.a.mean), ns(op.b.mean), ns(double(op.a.p50)),
             ns(double(op.b.p50)), ns(double(op.a.p95)), ns(double(op.b.p95)),
             signedNs(double(op.deltaTotal())),
             standardCell(trace::signedPercent(op.deltaPct()), op.deltaPct())});
        QStandardItem* pct = model_->item(model_->rowCount() - 1, kDeltaPctColumn);
        if (op.deltaPct() <= -1) pct->setForeground(QColor(20, 130, 40));
        if (op.deltaPct() >= 1) pct->setForeground(QColor(190, 40, 30));
    }
    table_->resizeColumnsToContents();
    // CDF op chooser: A's ops by total time (the default first), then all ops at once.
    std::vector<const trace::OpDelta*> inA;
    for (const trace::OpDelta& op : data_.comparison.ops)
        if (op.a.count > 0) inA.push_back(&op);
    std::stable_sort(inA.begin(), inA.end(), [](const trace::OpDelta* x, const trace::OpDelta* y) {
        return x->a.total > y->a.total;
    });
    cdfOp_->clear();
    for (const trace::OpDelta* op : inA)
        cdfOp_->addItem(
            tr("%1 (%2 in A)")
                .arg(QString::fromStdString(op->name), format::nanoseconds(double(op->a.total))),
            QString::fromStdString(op->name));
    cdfOp_->addItem(tr("all ops, each ÷ its own median in A"), QString(trace::kAllOps));
    setCdfOp(data_.comparison.cdfOp);
    emit loaded();
}

void CompareView::setCdfOp(const std::string& op) {
    if (op != data_.comparison.cdfOp) trace::setCdfOp(data_.comparison, op);
    const int index = cdfOp_->findData(QString::fromStdString(data_.comparison.cdfOp));
    if (index >= 0) cdfOp_->setCurrentIndex(index);
    chart_->setCurves(data_.comparison.cdfA, data_.comparison.cdfB,
                      QString::fromStdString(data_.comparison.cdfOp));
}

QString CompareView::summary() const {
    return summary_->text();
}

void CompareView::setOpFilter(const QString& text) {
    if (filter_->text() != text) filter_->setText(text);
    proxy_->setFilterFixedString(text);
}

QString CompareView::deltaCsv() const {
    auto quote = [](QString s) {
        if (s.contains(',') || s.contains('"')) s = '"' + s.replace('"', "\"\"") + '"';
        return s;
    };
    QString out =
        "op,count_a,count_b,total_a_ns,total_b_ns,mean_a_ns,mean_b_ns,p50_a_ns,p50_b_ns,"
        "p95_a_ns,p95_b_ns,delta_total_ns,delta_pct\n";
    for (int r = 0; r < proxy_->rowCount(); ++r) {
        QStringList fields;
        for (int c = 0; c < proxy_->columnCount(); ++c) {
            const QVariant v = proxy_->index(r, c).data(kSortRole);
            fields << (c == 0 ? quote(v.toString()) : QString::number(v.toDouble(), 'g', 12));
        }
        out += fields.join(',') + '\n';
    }
    return out;
}

bool CompareView::exportCsv(const QString& path, QString* error) const {
    return exporting::writeTextFile(path, deltaCsv(), error);
}

QWidget* createCompareView(const ProfileInfo& a, const ProfileInfo& b,
                           const QString& workspacePath) {
    auto* view = new CompareView;
    view->open(workspacePath.toStdString(), a.id, b.id);
    return view;
}

namespace {

// The comparison as the GUI shows it at options.size, with `page` of its bottom tabs shown
// (nullptr: the first, Ops).
QImage renderComparison(const Workspace& workspace, const ProfileInfo& profile,
                        const RenderOptions& options, const std::string& view,
                        const std::function<QWidget*(CompareView&)>& page);

}  // namespace

QImage renderTraceCompare(const Workspace& workspace, const ProfileInfo& profile,
                          const RenderOptions& options) {
    return renderComparison(workspace, profile, options, "compare", {});
}

QImage renderTransferCompare(const Workspace& workspace, const ProfileInfo& profile,
                             const RenderOptions& options) {
    return renderComparison(workspace, profile, options, "transfers",
                            [](CompareView& view) { return view.transferPane(); });
}

namespace {

QImage renderComparison(const Workspace& workspace, const ProfileInfo& profile,
                        const RenderOptions& options, const std::string& name,
                        const std::function<QWidget*(CompareView&)>& page) {
    if (!options.against)
        throw InputError("render " + name + ": give the second profile with --against");
    if (options.against->kind != profile.kind)
        throw InputError("render " + name + ": both profiles must be trace profiles");
    if (!options.alignOp.empty())
        throw InputError("render " + name + ": --align-op applies to replay profiles; use --op");
    CompareView view;
    view.setAsynchronous(false);
    TraceComparisonData data =
        loadTraceComparison(workspace.path(), profile.id, options.against->id);
    if (!options.op.empty() && options.op != trace::kAllOps &&
        !data.comparison.a.byOp.count(options.op))
        throw InputError("render " + name + ": --op: no op '" + options.op + "' in '" +
                         profile.name + "'");
    view.setData(std::move(data));
    if (!options.op.empty()) view.setCdfOp(options.op);
    if (page)
        if (QWidget* shown = page(view))
            if (auto* tabs = qobject_cast<QTabWidget*>(shown->parentWidget()->parentWidget()))
                tabs->setCurrentWidget(shown);
    view.resize(options.size);
    if (options.from && options.to) view.timelineA()->setWindow({*options.from, *options.to});
    view.ensurePolished();
    QImage image(options.size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    view.setAttribute(Qt::WA_DontShowOnScreen);
    view.show();
    // Lay out at this size now (nested layouts wait for the event loop otherwise).
    QApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    view.timelineA()->prepareNow(view.timelineA()->viewport()->size());
    view.timelineB()->prepareNow(view.timelineB()->viewport()->size());
    view.render(&image);
    return image;
}

}  // namespace

void CompareView::showLoadError(const QString& error) {
    summary_->setText(tr("Could not compare: %1").arg(error));
}

}  // namespace stallscope
