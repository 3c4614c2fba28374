#include "compare_view.h"

#include <QFile>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <cmath>

#include "errors.h"
#include "timeline_view.h"
#include "trace_store.h"

namespace stallscope {

namespace {
constexpr int kSortRole = Qt::UserRole + 2;
const QColor kColorA(70, 110, 170);
const QColor kColorB(230, 120, 30);

QStandardItem* cell(const QString& text, const QVariant& sortValue) {
    auto* item = new QStandardItem(text);
    item->setData(sortValue, kSortRole);
    item->setEditable(false);
    if (sortValue.typeId() == QMetaType::Double)
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}
}  // namespace

// --- CDF chart ---------------------------------------------------------------------------------

CdfChart::CdfChart(QWidget* parent) : QWidget(parent) {
    setMinimumSize(240, 160);
}

void CdfChart::setCurves(std::vector<trace::CdfPoint> a, std::vector<trace::CdfPoint> b) {
    a_ = std::move(a);
    b_ = std::move(b);
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
    return rect.adjusted(48, 28, -16, -36);
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
    painter.setPen(QColor(60, 60, 60));
    painter.drawText(rect.adjusted(8, 4, -8, 0), Qt::AlignTop | Qt::AlignLeft,
                     tr("CDF of op durations / median in A"));
    painter.setPen(QColor(220, 220, 220));
    for (int i = 0; i <= 4; ++i) {
        const int y = plot.bottom() - i * plot.height() / 4;
        painter.drawLine(plot.left(), y, plot.right(), y);
        painter.setPen(QColor(90, 90, 90));
        painter.drawText(QRect(rect.left(), y - 8, 44, 16), Qt::AlignRight | Qt::AlignVCenter,
                         QString::number(i * 0.25, 'f', 2));
        painter.setPen(QColor(220, 220, 220));
    }
    // x ticks: decades on a log axis, five steps on a linear one; 1.0 (A's median) dashed.
    std::vector<double> ticks;
    if (log_) {
        for (double t = std::pow(10.0, std::floor(std::log10(low_))); t <= high_; t *= 10)
            if (t >= low_) ticks.push_back(t);
    } else {
        for (int i = 0; i <= 5; ++i) ticks.push_back(low_ + (high_ - low_) * i / 5);
    }
    for (double t : ticks) {
        const double x = xOf(t, plot);
        painter.setPen(QColor(220, 220, 220));
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
        painter.setPen(QColor(90, 90, 90));
        painter.drawText(QRectF(x - 30, plot.bottom() + 2, 60, 16), Qt::AlignCenter,
                         QString::number(t, 'g', 3));
    }
    painter.setPen(QPen(QColor(120, 120, 120), 1, Qt::DashLine));
    painter.drawLine(QPointF(xOf(1.0, plot), plot.top()), QPointF(xOf(1.0, plot), plot.bottom()));
    painter.setPen(QColor(60, 60, 60));
    painter.drawRect(plot);
    painter.setRenderHint(QPainter::Antialiasing, true);
    auto drawCurve = [&](const std::vector<trace::CdfPoint>& curve, const QColor& color) {
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
        painter.setPen(QPen(color, 2.2));
        painter.drawPath(path);
    };
    drawCurve(a_, kColorA);
    drawCurve(b_, kColorB);
    painter.setRenderHint(QPainter::Antialiasing, false);
    const int ly = rect.bottom() - 12;
    painter.fillRect(QRect(plot.left(), ly - 4, 18, 4), kColorA);
    painter.setPen(QColor(40, 40, 40));
    painter.drawText(QPoint(plot.left() + 24, ly), tr("A (before)"));
    painter.fillRect(QRect(plot.left() + 110, ly - 4, 18, 4), kColorB);
    painter.drawText(QPoint(plot.left() + 134, ly), tr("B (after)"));
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
    return data;
}

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel(tr("Comparing…"));
    QFont bold = summary_->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    summary_->setFont(bold);
    layout->addWidget(summary_);
    auto* vertical = new QSplitter(Qt::Vertical);
    timelineA_ = new TimelineView;
    timelineB_ = new TimelineView;
    vertical->addWidget(timelineA_);
    vertical->addWidget(timelineB_);
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
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(kSortRole);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy_->setFilterKeyColumn(0);
    table_ = new QTableView;
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->verticalHeader()->hide();
    tableLayout->addWidget(table_);
    chart_ = new CdfChart;
    bottomLayout->addWidget(tablePane, 3);
    bottomLayout->addWidget(chart_, 2);
    vertical->addWidget(bottom);
    layout->addWidget(vertical, 1);
    connect(filter_, &QLineEdit::textChanged, this, &CompareView::setOpFilter);
    connect(csv, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export op deltas"),
                                                          "op-deltas.csv", "CSV (*.csv)");
        if (!path.isEmpty()) exportCsv(path);
    });
    linkWindows();
}

void CompareView::linkWindows() {
    // Linked time scale: both show the same span from their own start (times are relative).
    auto follow = [this](TimelineView* other) {
        return [this, other](TimeRange window) {
            if (syncing_) return;
            syncing_ = true;
            other->setWindow(window);
            syncing_ = false;
        };
    };
    connect(timelineA_, &TimelineView::windowChanged, this, follow(timelineB_));
    connect(timelineB_, &TimelineView::windowChanged, this, follow(timelineA_));
}

void CompareView::setAsynchronous(bool on) {
    timelineA_->setAsynchronous(on);
    timelineB_->setAsynchronous(on);
}

void CompareView::open(const std::string& workspacePath, int64_t a, int64_t b) {
    auto* watcher = new QFutureWatcher<std::shared_ptr<TraceComparisonData>>(this);
    connect(watcher, &QFutureWatcher<std::shared_ptr<TraceComparisonData>>::finished, this,
            [this, watcher] {
                watcher->deleteLater();
                auto data = watcher->result();
                if (data)
                    setData(std::move(*data));
                else
                    summary_->setText(tr("Could not open the profiles"));
            });
    watcher->setFuture(QtConcurrent::run([workspacePath, a, b] {
        try {
            return std::make_shared<TraceComparisonData>(loadTraceComparison(workspacePath, a, b));
        } catch (const std::exception&) {
            return std::shared_ptr<TraceComparisonData>();
        }
    }));
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
    timelineA_->fitAll();
    model_->removeRows(0, model_->rowCount());
    for (const trace::OpDelta& op : data_.comparison.ops) {
        const auto ns = [](double v) { return cell(formatNanoseconds(v), v); };
        model_->appendRow({cell(QString::fromStdString(op.name), QString::fromStdString(op.name)),
                           cell(QString::number(op.a.count), double(op.a.count)),
                           cell(QString::number(op.b.count), double(op.b.count)),
                           ns(double(op.a.total)), ns(double(op.b.total)), ns(op.a.mean),
                           ns(op.b.mean), ns(double(op.a.p50)), ns(double(op.b.p50)),
                           ns(double(op.a.p95)), ns(double(op.b.p95)), ns(double(op.deltaTotal())),
                           cell(trace::signedPercent(op.deltaPct()), op.deltaPct())});
        QStandardItem* pct = model_->item(model_->rowCount() - 1, 12);
        if (op.deltaPct() <= -1) pct->setForeground(QColor(20, 130, 40));
        if (op.deltaPct() >= 1) pct->setForeground(QColor(190, 40, 30));
    }
    table_->resizeColumnsToContents();
    chart_->setCurves(data_.comparison.cdfA, data_.comparison.cdfB);
    emit loaded();
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

bool CompareView::exportCsv(const QString& path) const {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    return file.write(deltaCsv().toUtf8()) >= 0;
}

QWidget* createCompareView(const ProfileInfo& a, const ProfileInfo& b,
                           const QString& workspacePath) {
    auto* view = new CompareView;
    view->open(workspacePath.toStdString(), a.id, b.id);
    return view;
}

QImage renderTraceCompare(const Workspace& workspace, const ProfileInfo& profile,
                          const RenderOptions& options) {
    if (!options.against)
        throw InputError("render compare: give the second profile with --against");
    if (options.against->kind != profile.kind)
        throw InputError("render compare: both profiles must be trace profiles");
    CompareView view;
    view.setAsynchronous(false);
    view.setData(loadTraceComparison(workspace.path(), profile.id, options.against->id));
    view.resize(options.size);
    if (options.from && options.to) view.timelineA()->setWindow({*options.from, *options.to});
    view.ensurePolished();
    QImage image(options.size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    view.setAttribute(Qt::WA_DontShowOnScreen);
    view.show();
    view.timelineA()->prepareNow(view.timelineA()->viewport()->size());
    view.timelineB()->prepareNow(view.timelineB()->viewport()->size());
    view.render(&image);
    return image;
}

}  // namespace stallscope
