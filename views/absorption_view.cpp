#include "absorption_view.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSaveFile>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>
#include <set>

#include "errors.h"

namespace stallscope {

using noise::AbsorptionReport;
using noise::Curve;

namespace {

QString number(double v) {
    return QString::number(v, 'g', 4);
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

bool inGroup(const Curve& c, const CurveGroup& g) {
    return c.machine == g.machine && c.region == g.region && c.params == g.params;
}

QString absorptionCell(const AbsorptionReport& report, const Curve* curve) {
    (void)report;
    if (!curve) return QStringLiteral("–");
    return (curve->fit.degraded ? QString() : QStringLiteral("≥")) + number(curve->fit.k1);
}

}  // namespace

QString CurveGroup::label() const {
    QString text = qs(region);
    if (!machine.empty()) text += QStringLiteral(" — ") + qs(machine);
    if (!params.empty()) text += QStringLiteral(" (%1)").arg(qs(noise::paramsLabel(params)));
    return text;
}

QString SweepGroup::label() const {
    QString text = qs(region) + QStringLiteral(" vs ") + qs(param);
    if (!machine.empty()) text += QStringLiteral(" — ") + qs(machine);
    return text;
}

QColor modeColor(const std::string& mode) {
    if (mode == "fp_add64") return QColor(31, 119, 180);
    if (mode == "int64_add") return QColor(255, 127, 14);
    if (mode == "l1_ld64") return QColor(44, 160, 44);
    if (mode == "memory_ld64") return QColor(214, 39, 40);
    // Other modes: a stable colour from the name.
    return QColor::fromHsv(int(qHash(qs(mode)) % 360), 160, 170);
}

std::vector<CurveGroup> curveGroups(const AbsorptionReport& report) {
    std::vector<CurveGroup> groups;
    for (const Curve& c : report.curves) {
        if (!groups.empty() && inGroup(c, groups.back())) continue;
        groups.push_back({c.machine, c.region, c.params});
    }
    return groups;
}

std::vector<SweepGroup> sweepGroups(const AbsorptionReport& report) {
    std::map<std::tuple<std::string, std::string, std::string>, std::set<double>> values;
    for (const Curve& c : report.curves)
        for (const auto& [name, value] : c.params) {
            bool numeric = false;
            const double v = qs(value).toDouble(&numeric);
            if (numeric) values[{c.machine, c.region, name}].insert(v);
        }
    std::vector<SweepGroup> out;
    for (const auto& [key, set] : values)
        if (set.size() >= 2) out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key)});
    return out;
}

charts::ChartSpec curvesChart(const AbsorptionReport& report, const CurveGroup& group,
                              double yClip) {
    charts::ChartSpec spec;
    spec.title = group.label();
    spec.xLabel = QStringLiteral("noise patterns per iteration (k)");
    spec.yLabel = QStringLiteral("runtime / t0 (clipped at %1×)").arg(number(yClip));
    double maxY = 1.0, maxK = 1.0;
    for (const Curve& c : report.curves) {
        if (!inGroup(c, group)) continue;
        const QColor color = modeColor(c.mode);
        const double t0 = c.fit.t0 > 0 ? c.fit.t0 : 1.0;
        charts::ChartSeries band{{}, color, charts::ChartSeries::Style::Band, {}, {}, false};
        QString legend =
            qs(c.mode) + QStringLiteral(": k1 ") +
            (c.fit.degraded ? number(c.fit.k1) : QStringLiteral("≥ %1").arg(number(c.fit.k1)));
        legend += c.fit.k2 ? QStringLiteral(", k2 %1").arg(number(*c.fit.k2))
                           : QStringLiteral(", no saturation");
        charts::ChartSeries medians{legend, color, charts::ChartSeries::Style::LineWithPoints,
                                    {},     {},    false};
        charts::ChartSeries model{
            {}, color.darker(140), charts::ChartSeries::Style::Dashed, {}, {}, false};
        for (const noise::CurvePoint& p : c.fit.points) {
            band.points.append({p.k, std::min(p.q1 / t0, yClip)});
            band.upper.append({p.k, std::min(p.q3 / t0, yClip)});
            medians.points.append({p.k, p.median / t0});
            maxY = std::max(maxY, p.q3 / t0);
            maxK = std::max(maxK, p.k);
        }
        // The model sampled at the points and at the knees, so its corners are exact.
        std::set<double> ks;
        for (const noise::CurvePoint& p : c.fit.points) ks.insert(p.k);
        ks.insert(c.fit.k1);
        if (c.fit.k2) ks.insert(*c.fit.k2);
        for (double k : ks) model.points.append({k, c.fit.model(k) / t0});
        spec.series.push_back(band);
        spec.series.push_back(medians);
        spec.series.push_back(model);
        // k1 dashed, k2 dotted; the legend entry of the mode gives their values.
        if (c.fit.degraded) spec.markers.push_back({c.fit.k1, color, false, {}});
        if (c.fit.k2) spec.markers.push_back({*c.fit.k2, color, true, {}});
    }
    spec.xMin = 0;
    spec.xMax = maxK;
    spec.yMin = 0.8;
    spec.yMax = std::min(std::max(maxY * 1.05, 1.2), yClip);
    return spec;
}

charts::ChartSpec sweepChart(const AbsorptionReport& report, const SweepGroup& sweep) {
    charts::ChartSpec spec;
    spec.title = QStringLiteral("Absorption vs %1 — %2").arg(qs(sweep.param), qs(sweep.region));
    spec.xLabel = qs(sweep.param);
    spec.yLabel = QStringLiteral("absorption k1 (patterns)");
    // Curves that differ from the first only in the swept parameter.
    std::map<std::string, std::string> others;
    bool haveOthers = false;
    std::map<std::string, std::map<double, double>> absorption;
    std::map<double, std::vector<double>> perf;
    QString perfUnit;
    for (const Curve& c : report.curves) {
        if (c.machine != sweep.machine || c.region != sweep.region) continue;
        auto it = c.params.find(sweep.param);
        if (it == c.params.end()) continue;
        auto rest = c.params;
        rest.erase(sweep.param);
        if (!haveOthers) others = rest, haveOthers = true;
        if (rest != others) continue;
        bool numeric = false;
        const double x = qs(it->second).toDouble(&numeric);
        if (!numeric) continue;
        absorption[c.mode][x] = c.fit.k1;
        if (c.perf) perf[x].push_back(*c.perf);
        if (perfUnit.isEmpty()) perfUnit = qs(c.perfUnit);
    }
    for (const auto& [mode, points] : absorption) {
        charts::ChartSeries s{
            qs(mode), modeColor(mode), charts::ChartSeries::Style::LineWithPoints, {}, {}, false};
        for (const auto& [x, k1] : points) s.points.append({x, k1});
        spec.series.push_back(s);
    }
    if (!perf.empty()) {
        charts::ChartSeries s{QStringLiteral("performance"),
                              QColor(90, 90, 90),
                              charts::ChartSeries::Style::Dashed,
                              {},
                              {},
                              true};
        for (auto& [x, values] : perf) {
            std::sort(values.begin(), values.end());
            s.points.append({x, values[values.size() / 2]});
        }
        spec.series.push_back(s);
        spec.y2Label = perfUnit.isEmpty() ? QStringLiteral("performance")
                                          : QStringLiteral("performance (%1)").arg(perfUnit);
        spec.y2Min = 0;
    }
    spec.yMin = 0;
    return spec;
}

std::vector<ComparisonRow> comparisonRows(const AbsorptionReport& report) {
    std::vector<ComparisonRow> rows;
    for (const CurveGroup& g : curveGroups(report)) {
        const Curve* byMode[4] = {};
        const Curve* any = nullptr;
        static const char* kModes[4] = {"fp_add64", "l1_ld64", "memory_ld64", "int64_add"};
        for (const Curve& c : report.curves) {
            if (!inGroup(c, g)) continue;
            if (!any || (!any->perf && c.perf)) any = &c;
            for (int m = 0; m < 4; ++m)
                if (c.mode == kModes[m]) byMode[m] = &c;
        }
        ComparisonRow row;
        row.machine = qs(g.machine);
        row.region = qs(g.region);
        row.params = qs(noise::paramsLabel(g.params));
        row.cores = any && any->cores ? QString::number(*any->cores) : QString();
        if (any && any->perf)
            row.performance =
                number(*any->perf) +
                (any->perfUnit.empty() ? QString() : QStringLiteral(" ") + qs(any->perfUnit));
        else if (any)
            row.performance =
                QStringLiteral("t0 %1 %2").arg(number(any->fit.t0), qs(any->timeUnit));
        row.fp = absorptionCell(report, byMode[0]);
        row.l1 = absorptionCell(report, byMode[1]);
        row.memory = absorptionCell(report, byMode[2]);
        row.integer = absorptionCell(report, byMode[3]);
        for (const noise::Classification& cl : report.classifications)
            if (cl.machine == g.machine && cl.region == g.region && cl.params == g.params) {
                row.cls = noise::className(cl.cls);
                row.evidence = qs(cl.reason);
            }
        rows.push_back(row);
    }
    return rows;
}

namespace {

QString csvField(const QString& text) {
    if (!text.contains(',') && !text.contains('"') && !text.contains('\n')) return text;
    QString quoted = text;
    quoted.replace('"', QStringLiteral("\"\""));
    return '"' + quoted + '"';
}

const QStringList kTableHeader{"machine", "region",   "params",   "cores", "performance", "FP abs.",
                               "L1 abs.", "mem abs.", "int abs.", "class", "evidence"};

QStringList rowCells(const ComparisonRow& r) {
    return {r.machine, r.region, r.params,  r.cores, r.performance, r.fp,
            r.l1,      r.memory, r.integer, r.cls,   r.evidence};
}

}  // namespace

QString comparisonCsv(const AbsorptionReport& report) {
    QString out;
    QStringList header;
    for (const QString& h : kTableHeader) header << csvField(h);
    out += header.join(',') + '\n';
    for (const ComparisonRow& r : comparisonRows(report)) {
        QStringList cells;
        for (const QString& c : rowCells(r)) cells << csvField(c);
        out += cells.join(',') + '\n';
    }
    return out;
}

QString curvesCsv(const AbsorptionReport& report, const CurveGroup& group) {
    QString out = QStringLiteral(
        "machine,region,params,mode,k,median,q1,q3,runs,normalized,model,"
        "k1,k2\n");
    for (const Curve& c : report.curves) {
        if (!inGroup(c, group)) continue;
        for (const noise::CurvePoint& p : c.fit.points) {
            const double t0 = c.fit.t0 > 0 ? c.fit.t0 : 1.0;
            out += QStringList{csvField(qs(c.machine)),
                               csvField(qs(c.region)),
                               csvField(qs(noise::paramsLabel(c.params))),
                               qs(c.mode),
                               number(p.k),
                               QString::number(p.median, 'g', 8),
                               QString::number(p.q1, 'g', 8),
                               QString::number(p.q3, 'g', 8),
                               QString::number(p.runs),
                               QString::number(p.median / t0, 'g', 6),
                               QString::number(c.fit.model(p.k) / t0, 'g', 6),
                               number(c.fit.k1),
                               c.fit.k2 ? number(*c.fit.k2) : QString()}
                       .join(',') +
                   '\n';
        }
    }
    return out;
}

QList<SuggestionItem> absorptionSuggestionItems(const AbsorptionReport& report) {
    QList<SuggestionItem> items;
    for (const noise::NoiseSuggestion& s : noise::noiseSuggestions(report))
        items.append({qs(s.kind), qs(s.text), 0.0});
    return items;
}

namespace {

// The comparison table drawn for the headless render (the widget uses a QTableWidget).
void paintTable(QPainter& painter, const QRect& area, const std::vector<ComparisonRow>& rows) {
    painter.save();
    QFont font = painter.font();
    font.setPointSizeF(8.5);
    painter.setFont(font);
    const int rowHeight = painter.fontMetrics().height() + 6;
    // Evidence takes what is left.
    const std::vector<int> widths{150, 110, 90, 40, 110, 80, 80, 80, 80, 110};
    int used = 0;
    for (int w : widths) used += w;
    std::vector<int> columns = widths;
    columns.push_back(std::max(100, area.width() - used));
    auto drawRow = [&](int y, const QStringList& cells, bool header) {
        int x = area.left();
        QFont f = font;
        f.setBold(header);
        painter.setFont(f);
        for (int i = 0; i < cells.size(); ++i) {
            const QRect cell(x + 4, y, columns[size_t(i)] - 8, rowHeight);
            painter.drawText(
                cell, Qt::AlignVCenter | Qt::AlignLeft,
                painter.fontMetrics().elidedText(cells[i], Qt::ElideRight, cell.width()));
            x += columns[size_t(i)];
        }
    };
    int y = area.top();
    painter.fillRect(QRect(area.left(), y, area.width(), rowHeight), QColor(235, 238, 242));
    painter.setPen(Qt::black);
    drawRow(y, kTableHeader, true);
    y += rowHeight;
    for (size_t r = 0; r < rows.size() && y + rowHeight <= area.bottom(); ++r, y += rowHeight) {
        if (r % 2)
            painter.fillRect(QRect(area.left(), y, area.width(), rowHeight), QColor(248, 248, 248));
        drawRow(y, rowCells(rows[r]), false);
    }
    painter.restore();
}

}  // namespace

QImage renderAbsorptionReport(const AbsorptionReport& report, QSize size) {
    QImage image(size, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    const std::vector<ComparisonRow> rows = comparisonRows(report);
    const int tableHeight = std::min(size.height() * 35 / 100, int(rows.size() + 1) * 21 + 8);
    std::vector<charts::ChartSpec> specs;
    for (const CurveGroup& g : curveGroups(report)) specs.push_back(curvesChart(report, g));
    for (const SweepGroup& s : sweepGroups(report)) specs.push_back(sweepChart(report, s));
    const size_t shown = std::min<size_t>(specs.size(), 6);
    if (shown == 0) {
        painter.drawText(QRect(QPoint(0, 0), size), Qt::AlignCenter,
                         QStringLiteral("No noise runs in this profile"));
        return image;
    }
    const int cols = shown <= 1 ? 1 : shown <= 4 ? 2 : 3;
    const int gridRows = int((shown + size_t(cols) - 1) / size_t(cols));
    const int chartWidth = size.width() / cols;
    const int chartHeight = (size.height() - tableHeight) / gridRows;
    for (size_t i = 0; i < shown; ++i) {
        const charts::RenderedChart chart =
            charts::renderChart(specs[i], QSize(chartWidth, chartHeight));
        painter.drawImage(
            QPoint(int(i % size_t(cols)) * chartWidth, int(i / size_t(cols)) * chartHeight),
            chart.image);
    }
    paintTable(painter, QRect(0, size.height() - tableHeight, size.width(), tableHeight), rows);
    return image;
}

QImage renderAbsorption(const Workspace& workspace, const ProfileInfo& profile,
                        const RenderOptions& options) {
    return renderAbsorptionReport(noise::analyzeProfile(workspace, profile.id), options.size);
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
    auto* watcher = new QFutureWatcher<AbsorptionReport>(this);
    connect(watcher, &QFutureWatcher<AbsorptionReport>::finished, this, [this, watcher] {
        watcher->deleteLater();
        try {
            setReport(watcher->result());
        } catch (const std::exception& e) {
            status_->setText(tr("Cannot load: %1").arg(QString::fromUtf8(e.what())));
            emit loadFailed(status_->text());
        }
    });
    const std::string path = workspacePath.toStdString();
    const int64_t id = profile.id;
    watcher->setFuture(QtConcurrent::run([path, id] {
        auto workspace = Workspace::open(path, Workspace::Mode::ReadOnly);
        return noise::analyzeProfile(*workspace, id);
    }));
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

void AbsorptionView::exportCurrent(const QString& format) {
    const QString suffix = format.toLower();
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export %1").arg(format), QStringLiteral("absorption.%1").arg(suffix),
        QStringLiteral("%1 (*.%2)").arg(format, suffix));
    if (path.isEmpty()) return;
    bool ok = false;
    if (format == QLatin1String("CSV")) {
        const QString text = tabs_->currentIndex() == 1 || groups_.empty()
                                 ? comparisonCsv(report_)
                                 : curvesCsv(report_, groups_[size_t(currentGroup_)]);
        QSaveFile file(path);
        ok = file.open(QIODevice::WriteOnly) && file.write(text.toUtf8()) >= 0 && file.commit();
    } else if (format == QLatin1String("SVG")) {
        ok = charts::writeChartSvg(currentSpec(), QSize(1200, 800), path);
    } else {
        ok = charts::renderChart(currentSpec(), QSize(1200, 800)).image.save(path);
    }
    status_->setText(ok ? tr("Exported %1").arg(path) : tr("Cannot write %1").arg(path));
}

}  // namespace stallscope
