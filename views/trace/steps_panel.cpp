#include "views/trace/steps_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QListWidget>
#include <QMouseEvent>
#include <QPainter>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>

#include "views/common/export.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"
#include "views/shell/elided_label.h"
#include "views/trace/trace_panel.h"

namespace stallscope {

using namespace tablekit;

namespace {

int64_t percentile(std::vector<int64_t> values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t index = size_t(std::clamp(q, 0.0, 1.0) * double(values.size() - 1) + 0.5);
    return values[std::min(index, values.size() - 1)];
}

QString sourceText(const trace::StepAnalysis& a) {
    switch (a.source) {
        case trace::StepSource::StepOp:
            return QObject::tr("each %1").arg(QString::fromStdString(a.stepOp));
        case trace::StepSource::ProfilerStep:
            return QStringLiteral("ProfilerStep#N");
        case trace::StepSource::XlaSteps:
            return QObject::tr("XLA Steps line");
        case trace::StepSource::XlaModules:
            return QObject::tr("runs of %1").arg(QString::fromStdString(a.stepOp));
        case trace::StepSource::IterationMarker:
            return QObject::tr("iteration markers");
        case trace::StepSource::WholeTrace:
            return QObject::tr("no step markers: the whole trace");
    }
    return {};
}

}  // namespace

QString stepOverviewText(const trace::StepAnalysis& a) {
    std::vector<int64_t> durations;
    for (const trace::Step& s : a.steps) durations.push_back(a.stepTime(s.index));
    QString text = QObject::tr("%n step(s) (%1)", nullptr, int(a.steps.size())).arg(sourceText(a));
    if (!durations.empty())
        text += QObject::tr(" · median %1 · p95 %2 · min %3 · max %4")
                    .arg(format::nanoseconds(double(percentile(durations, 0.5))),
                         format::nanoseconds(double(percentile(durations, 0.95))),
                         format::nanoseconds(
                             double(*std::min_element(durations.begin(), durations.end()))),
                         format::nanoseconds(
                             double(*std::max_element(durations.begin(), durations.end()))));
    // A host-only trace's breakdown is no device's: its idle is not the user's GPU sitting idle.
    if (!a.note.empty()) return text + QStringLiteral(" · ") + QString::fromStdString(a.note);
    QStringList shares;
    for (size_t c = 0; c < trace::kStepCategoryCount; ++c) {
        const double pct = a.sharePct(trace::StepCategory(c));
        if (pct >= 0.5)
            shares << QStringLiteral("%1 %2 %")
                          .arg(QString::fromUtf8(trace::kCategoryNames[c]))
                          .arg(pct, 0, 'f', pct < 10 ? 1 : 0);
    }
    if (!shares.isEmpty()) text += QStringLiteral(" · ") + shares.join(QStringLiteral(", "));
    return text;
}

// ---- chart widget ------------------------------------------------------------------------------

StepChartWidget::StepChartWidget(QWidget* parent) : QWidget(parent) {
    setMinimumSize(320, 180);
    setMouseTracking(true);
}

void StepChartWidget::setAnalysis(std::shared_ptr<const trace::StepAnalysis> analysis) {
    analysis_ = std::move(analysis);
    update();
}

void StepChartWidget::setOptions(const steps::ChartOptions& options) {
    options_ = options;
    update();
}

void StepChartWidget::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    if (!analysis_) {
        painter.fillRect(rect(), Qt::white);
        return;
    }
    layout_ = steps::paintStepChart(painter, QRectF(rect()), *analysis_, options_);
}

int StepChartWidget::stepAt(const QPointF& pos) const {
    for (size_t i = 0; i < layout_.bars.size(); ++i) {
        const QRectF& column = layout_.bars[i];
        // The whole slot is clickable, not only the drawn bar (thin bars are hard to hit).
        const double slot = layout_.plot.width() / double(layout_.bars.size());
        const double cx = column.center().x();
        if (pos.x() >= cx - slot / 2 && pos.x() < cx + slot / 2 && pos.y() >= layout_.plot.top() &&
            pos.y() <= layout_.plot.bottom())
            return int(i);
    }
    return -1;
}

bool StepChartWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip && analysis_) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int step = stepAt(help->pos());
        if (step < 0) {
            QToolTip::hideText();
            return true;
        }
        QString text = steps::stepSummary(*analysis_, step, options_.device);
        for (const steps::Segment& s : layout_.segments)
            if (s.step == step && s.rect.contains(help->pos()))
                text +=
                    QStringLiteral("\n▸ %1: %2 (%3)")
                        .arg(steps::series()[size_t(s.series)].label,
                             format::nanoseconds(double(s.ns)), format::percentOf(s.share, 1.0));
        QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void StepChartWidget::mousePressEvent(QMouseEvent* event) {
    const int step = stepAt(event->position());
    if (step >= 0) emit stepClicked(step);
}

// ---- panel -------------------------------------------------------------------------------------

StepsPanel::StepsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Device:")));
    device_ = new QComboBox;
    device_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    bar->addWidget(device_);
    normalized_ = new QCheckBox(tr("100 %"));
    normalized_->setToolTip(tr("Each step's bar as 100 % of the step; the line keeps step time"));
    bar->addWidget(normalized_);
    summary_ = new ElidedLabel;
    bar->addWidget(summary_, 1);
    bar->addWidget(exporting::exportButton(
        this, {{tr("Steps as CSV…"), exporting::Format::Csv, QStringLiteral("steps.csv"),
                [this](const QString& path, QString* error) {
                    return analysis_ && exporting::writeTextFile(
                                            path, steps::breakdownCsv(*analysis_, device()), error);
                }},
               {tr("Chart as PNG…"), exporting::Format::Png, QStringLiteral("steps.png"),
                [this](const QString& path, QString* error) {
                    return exporting::writeImageFile(path, chart_->grab().toImage(), error);
                }},
               {tr("Chart as SVG…"), exporting::Format::Svg, QStringLiteral("steps.svg"),
                [this](const QString& path, QString* error) {
                    if (!analysis_) return false;
                    steps::ChartOptions options{device(), normalized_->isChecked(), {}};
                    return exporting::writeSvgFile(
                        path, chart_->size(),
                        [this, options](QPainter& p, const QRectF& area) {
                            steps::paintStepChart(p, area, *analysis_, options);
                        },
                        tr("Step time"), error);
                }}}));
    layout->addLayout(bar);

    auto* split = new QSplitter(Qt::Horizontal);
    chart_ = new StepChartWidget;
    split->addWidget(chart_);
    tables_ = new QTabWidget;
    stepTable_ = new QTableWidget;
    setUpTable(stepTable_);
    gapTable_ = new QTableWidget;
    setUpTable(gapTable_);
    gapTable_->setColumnCount(5);
    gapTable_->setHorizontalHeaderLabels(
        {tr("Step"), tr("Start"), tr("Idle for"), tr("Cause"), tr("Host was in")});
    recommendations_ = new QListWidget;
    recommendations_->setWordWrap(true);
    recommendations_->setAlternatingRowColors(true);
    tables_->addTab(recommendations_, tr("Recommendations"));
    tables_->addTab(stepTable_, tr("Steps"));
    tables_->addTab(gapTable_, tr("Idle gaps"));
    split->addWidget(tables_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    connect(device_, &QComboBox::activated, this, [this] {
        refresh();
        emit deviceChanged(device());
    });
    connect(normalized_, &QCheckBox::toggled, this, [this] { refresh(); });
    connect(chart_, &StepChartWidget::stepClicked, this, &StepsPanel::stepActivated);
    connect(stepTable_, &QTableWidget::cellClicked, this, [this](int row) {
        if (const auto* item = stepTable_->item(row, 0))
            emit stepActivated(item->data(kRowRole).toInt());
    });
    connect(gapTable_, &QTableWidget::cellClicked, this, [this](int row) {
        const auto* item = gapTable_->item(row, 0);
        if (!item || !analysis_) return;
        const trace::IdleGap& gap = analysis_->gaps.at(size_t(item->data(kRowRole).toInt()));
        emit rangeActivated(gap.start, gap.end, gap.hostTrack);
    });
    connect(recommendations_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        emit recommendationActivated(recommendations_->row(item));
    });
    showMessage(tr("Analysing steps…"));
}

int StepsPanel::device() const {
    return std::max(0, device_->currentIndex());
}

QString StepsPanel::summaryText() const {
    return summary_->text();
}

void StepsPanel::showMessage(const QString& text) {
    summary_->setText(text);
}

void StepsPanel::setAnalysis(std::shared_ptr<const trace::StepAnalysis> analysis) {
    analysis_ = std::move(analysis);
    device_->clear();
    for (const trace::StepDevice& d : analysis_->devices)
        device_->addItem(QString::fromStdString(d.name));
    chart_->setAnalysis(analysis_);
    summary_->setText(stepOverviewText(*analysis_));

    recommendations_->clear();
    for (const trace::StepRecommendation& r : analysis_->recommendations) {
        auto* item =
            new QListWidgetItem(tr("%1 — %2\n%3")
                                    .arg(QString::fromStdString(r.kind), stepShareText(r.sharePct),
                                         QString::fromStdString(r.text)),
                                recommendations_);
        item->setToolTip(tr("Click to show it on the timeline"));
    }
    if (analysis_->recommendations.empty())
        new QListWidgetItem(tr("Nothing to recommend: no category stands out."), recommendations_);

    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (size_t i = 0; i < analysis_->gaps.size(); ++i) {
        const trace::IdleGap& g = analysis_->gaps[i];
        auto* step = numberCell(double(g.step));
        step->setData(kRowRole, int(i));
        rows.push_back({step, numberCell(double(g.start), format::nanoseconds(double(g.start))),
                        numberCell(double(g.duration()), format::nanoseconds(double(g.duration()))),
                        textCell(QString::fromUtf8(trace::kCategoryNames[size_t(g.cause)])),
                        textCell(QString::fromStdString(g.hostActivity))});
    }
    fillTable(gapTable_, rows);
    refresh();
}

void StepsPanel::refresh() {
    if (!analysis_) return;
    chart_->setOptions({device(), normalized_->isChecked(), {}});
    const auto& all = steps::series();
    QStringList header{tr("Step"), tr("Marker"), tr("Duration")};
    for (const steps::Series& s : all) header << s.label;
    stepTable_->setColumnCount(int(header.size()));
    stepTable_->setHorizontalHeaderLabels(header);
    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (size_t i = 0; i < analysis_->steps.size(); ++i) {
        const trace::Step& s = analysis_->steps[i];
        const int64_t own = steps::durationOf(*analysis_, int(i), device());
        auto* index = numberCell(double(s.index));
        index->setData(kRowRole, int(i));
        std::vector<QTableWidgetItem*> row{
            index, textCell(QString::fromStdString(s.name)),
            numberCell(double(own), format::nanoseconds(double(own)))};
        const auto* b = steps::breakdownOf(*analysis_, int(i), device());
        const double duration = double(std::max<int64_t>(own, 1));
        for (const steps::Series& series : all) {
            const int64_t ns = b ? series.value(*b) : 0;
            row.push_back(numberCell(double(ns), ns ? QStringLiteral("%1 (%2)").arg(
                                                          format::nanoseconds(double(ns)),
                                                          format::percentOf(double(ns), duration))
                                                    : QStringLiteral("–")));
        }
        rows.push_back(std::move(row));
    }
    fillTable(stepTable_, rows);
}

}  // namespace stallscope
