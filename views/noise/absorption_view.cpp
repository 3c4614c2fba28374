#include "views/noise/absorption_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/common/export.h"
#include "views/noise/absorption_parts.h"

// The absorption tab: curves, the comparison table and the sweep, each exported as shown. The
// charts are absorption_charts.cpp, the table and the headless render absorption_report.cpp.

namespace stallscope {

using absorption_parts::kTableHeader;
using absorption_parts::qs;
using absorption_parts::rowCells;
using noise::AbsorptionReport;

QList<SuggestionItem> absorptionSuggestionItems(const AbsorptionReport& report) {
    QList<SuggestionItem> items;
    for (const noise::NoiseSuggestion& s : noise::noiseSuggestions(report)) {
        // The dock shows "kind — text": the text's own leading "kind: " would say it twice.
        QString text = qs(s.text);
        if (const QString prefix = qs(s.kind) + QStringLiteral(": "); text.startsWith(prefix))
            text.remove(0, prefix.size());
        items.append({qs(s.kind), text, 0.0});
    }
    return items;
}

QWidget* createNoiseView(const ProfileInfo& profile, const QString& workspacePath) {
    return new AbsorptionView(profile, workspacePath);
}

AbsorptionView::AbsorptionView(const ProfileInfo& profile, const QString& workspacePath,
                               QWidget* parent)
    : QWidget(parent),
      status_(new QLabel(tr("Fitting absorption curves…"), this)),
      tabs_(new QTabWidget(this)),
      groupBox_(new QComboBox(this)),
      curvesHolder_(new QWidget(this)),
      table_(new QTableWidget(this)),
      sweepBox_(new QComboBox(this)),
      sweepHolder_(new QWidget(this)) {
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    bar->addWidget(status_, 1);
    for (const QString& format :
         {QStringLiteral("PNG"), QStringLiteral("SVG"), QStringLiteral("CSV")}) {
        auto* button = new QPushButton(tr("Export %1…").arg(format), this);
        connect(button, &QPushButton::clicked, this, [this, format] { exportCurrent(format); });
        bar->addWidget(button);
    }
    layout->addLayout(bar);
    layout->addWidget(tabs_, 1);

    auto* curvesPage = new QWidget(this);
    auto* curvesLayout = new QVBoxLayout(curvesPage);
    curvesLayout->addWidget(groupBox_);
    curvesHolder_->setLayout(new QVBoxLayout);
    curvesHolder_->layout()->setContentsMargins(0, 0, 0, 0);
    curvesLayout->addWidget(curvesHolder_, 1);
    tabs_->addTab(curvesPage, tr("Curves"));
    tabs_->addTab(table_, tr("Machines and kernels"));
    auto* sweepPage = new QWidget(this);
    auto* sweepLayout = new QVBoxLayout(sweepPage);
    sweepLayout->addWidget(sweepBox_);
    sweepHolder_->setLayout(new QVBoxLayout);
    sweepHolder_->layout()->setContentsMargins(0, 0, 0, 0);
    sweepLayout->addWidget(sweepHolder_, 1);
    tabs_->addTab(sweepPage, tr("Sweep"));
    tabs_->setEnabled(false);

    connect(groupBox_, &QComboBox::currentIndexChanged, this, &AbsorptionView::showCurves);
    connect(sweepBox_, &QComboBox::currentIndexChanged, this, &AbsorptionView::showSweep);

    if (workspacePath.isEmpty()) return;
    // SQL and fitting run on a worker with its own read-only connection.
    const std::string path = workspacePath.toStdString();
    const int64_t id = profile.id;
    loadJob_.start(
        [path, id] {
            auto workspace = Workspace::open(path, Workspace::Mode::ReadOnly);
            return noise::analyzeProfile(*workspace, id);
        },
        [this](AbsorptionReport report) { setReport(report); });
}

void AbsorptionView::setReport(const AbsorptionReport& report) {
    report_ = report;
    groups_ = curveGroups(report_);
    sweeps_ = sweepGroups(report_);
    status_->setText(tr("%1 runs, %2 curves, %3 classified regions")
                         .arg(report_.runs)
                         .arg(report_.curves.size())
                         .arg(report_.classifications.size()));
    tabs_->setEnabled(true);
    groupBox_->blockSignals(true);
    groupBox_->clear();
    for (const CurveGroup& g : groups_) groupBox_->addItem(g.label());
    groupBox_->blockSignals(false);
    sweepBox_->blockSignals(true);
    sweepBox_->clear();
    for (const SweepGroup& s : sweeps_) sweepBox_->addItem(s.label());
    sweepBox_->blockSignals(false);
    tabs_->setTabEnabled(2, !sweeps_.empty());

    const std::vector<ComparisonRow> rows = comparisonRows(report_);
    table_->clear();
    table_->setColumnCount(int(kTableHeader.size()));
    table_->setHorizontalHeaderLabels(kTableHeader);
    table_->setRowCount(int(rows.size()));
    for (int r = 0; r < int(rows.size()); ++r) {
        const QStringList cells = rowCells(rows[size_t(r)]);
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setFlags(item->flags() & ~Qt::ItemIsEditable);
            item->setToolTip(cells[c]);
            table_->setItem(r, c, item);
        }
    }
    table_->resizeColumnsToContents();
    table_->horizontalHeader()->setStretchLastSection(true);
    showCurves(0);
    if (!sweeps_.empty()) showSweep(0);
    emit suggestionsReady(absorptionSuggestionItems(report_));
}

namespace {

void replaceChart(QWidget* holder, const charts::ChartSpec& spec) {
    QLayout* layout = holder->layout();
    while (QLayoutItem* item = layout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    layout->addWidget(charts::createChartWidget(spec, holder));
}

}  // namespace

void AbsorptionView::showCurves(int index) {
    if (index < 0 || index >= int(groups_.size())) return;
    currentGroup_ = index;
    replaceChart(curvesHolder_, curvesChart(report_, groups_[size_t(index)]));
}

void AbsorptionView::showSweep(int index) {
    if (index < 0 || index >= int(sweeps_.size())) return;
    currentSweep_ = index;
    replaceChart(sweepHolder_, sweepChart(report_, sweeps_[size_t(index)]));
}

charts::ChartSpec AbsorptionView::currentSpec() const {
    if (tabs_->currentIndex() == 2 && !sweeps_.empty())
        return sweepChart(report_, sweeps_[size_t(currentSweep_)]);
    if (groups_.empty()) return {};
    return curvesChart(report_, groups_[size_t(currentGroup_)]);
}

bool AbsorptionView::exportTo(const QString& format, const QString& path) {
    const int tab = tabs_->currentIndex();
    const bool table = tab == 1;
    const bool sweep = tab == 2 && !sweeps_.empty();
    if (groups_.empty() && !table) return false;
    if (format == QLatin1String("CSV")) {
        const QString text = table   ? comparisonCsv(report_)
                             : sweep ? sweepCsv(report_, sweeps_[size_t(currentSweep_)])
                                     : curvesCsv(report_, groups_[size_t(currentGroup_)]);
        return exporting::writeTextFile(path, text);
    }
    if (format == QLatin1String("SVG"))
        return table ? writeComparisonTableSvg(report_, path)
                     : charts::writeChartSvg(currentSpec(), QSize(1200, 800), path);
    return (table ? renderComparisonTable(report_)
                  : charts::renderChart(currentSpec(), QSize(1200, 800)).image)
        .save(path, "PNG");
}

void AbsorptionView::exportCurrent(const QString& format) {
    const exporting::Format kind = format == QLatin1String("CSV")   ? exporting::Format::Csv
                                   : format == QLatin1String("SVG") ? exporting::Format::Svg
                                                                    : exporting::Format::Png;
    exporting::runExport(
        this,
        {tr("Export %1").arg(format), kind, QStringLiteral("absorption.%1").arg(format.toLower()),
         [this, format](const QString& path, QString*) { return exportTo(format, path); }},
        [this](const QString& message, bool) { status_->setText(message); });
}

void AbsorptionView::showLoadError(const QString& error) {
    status_->setText(tr("Cannot load: %1").arg(error));
    emit loadFailed(status_->text());
}

}  // namespace stallscope
