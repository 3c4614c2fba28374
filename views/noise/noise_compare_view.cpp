#include "views/noise/noise_compare_view.h"
#include "views/common/format.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>
#include <functional>
#include <set>

#include "core/compare/percent.h"
#include "core/errors.h"
#include "views/common/table_kit.h"

#include "views/common/chart_kit.h"
#include "views/common/export.h"
#include "views/common/view_widgets.h"
#include "views/noise/absorption_view.h"

namespace stallscope {

using namespace tablekit;

namespace {
QString qs(const std::string& s) {
    return QString::fromStdString(s);
}
}  // namespace

QString NoiseCompareGroup::label() const {
    QString text = qs(machine.empty() ? region : machine + " · " + region);
    if (!params.empty()) text += QStringLiteral(" (%1)").arg(qs(noise::paramsLabel(params)));
    return text;
}

std::vector<NoiseCompareGroup> noiseCompareGroups(const NoiseComparison& c) {
    std::vector<NoiseCompareGroup> groups;
    for (const NoiseCurveDelta& d : c.curves) {
        const bool known = std::any_of(groups.begin(), groups.end(), [&](const auto& g) {
            return g.machine == d.a.machine && g.region == d.a.region && g.params == d.a.params;
        });
        if (!known) groups.push_back({d.a.machine, d.a.region, d.a.params});
    }
    return groups;
}

charts::ChartSpec noiseOverlayChart(const NoiseComparison& c, const NoiseCompareGroup& group,
                                    double yClip) {
    charts::ChartSpec spec;
    spec.title = QObject::tr("%1: A solid, B dashed").arg(group.label());
    spec.xLabel = QObject::tr("noise patterns per iteration (k)");
    spec.yLabel = QObject::tr("runtime / t0 of A (clipped at %1×)").arg(yClip);
    double maxK = 1, maxY = 1, minY = 1;
    for (const NoiseCurveDelta& d : c.curves) {
        if (d.a.machine != group.machine || d.a.region != group.region ||
            d.a.params != group.params)
            continue;
        const double t0 = d.a.fit.t0 > 0 ? d.a.fit.t0 : 1.0;
        const QColor color = modeColor(d.a.mode);
        auto k1Text = [](const noise::Curve& cv) {
            return cv.fit.degraded ? QString::number(cv.fit.k1, 'g', 4)
                                   : QStringLiteral("≥ %1").arg(cv.fit.k1, 0, 'g', 4);
        };
        charts::ChartSeries a{QObject::tr("A %1: k1 %2").arg(qs(d.a.mode), k1Text(d.a)),
                              color,
                              charts::ChartSeries::Style::LineWithPoints,
                              {},
                              {},
                              false};
        charts::ChartSeries b{QObject::tr("B %1: k1 %2").arg(qs(d.b.mode), k1Text(d.b)),
                              color.darker(125),
                              charts::ChartSeries::Style::Dashed,
                              {},
                              {},
                              false};
        for (const noise::CurvePoint& p : d.a.fit.points) {
            a.points.append({p.k, std::min(p.median / t0, yClip)});
            maxK = std::max(maxK, p.k);
            maxY = std::max(maxY, p.median / t0);
            minY = std::min(minY, p.median / t0);
        }
        for (const noise::CurvePoint& p : d.b.fit.points) {
            b.points.append({p.k, std::min(p.median / t0, yClip)});
            maxK = std::max(maxK, p.k);
            maxY = std::max(maxY, p.median / t0);
            minY = std::min(minY, p.median / t0);
        }
        spec.series.push_back(a);
        spec.series.push_back(b);
        if (d.a.fit.degraded) spec.markers.push_back({d.a.fit.k1, color, false, {}});
        if (d.b.fit.degraded) spec.markers.push_back({d.b.fit.k1, color.darker(125), true, {}});
    }
    spec.xMin = 0;
    spec.xMax = maxK;
    spec.yMin = std::max(0.0, std::min(0.8, minY * 0.95));
    spec.yMax = std::min(std::max(maxY * 1.05, 1.2), yClip);
    return spec;
}

QString noiseComparisonCsv(const NoiseComparison& c) {
    QString out = QStringLiteral(
        "machine,region,params,mode,abs_raw_a,abs_raw_b,abs_raw_delta,abs_rel_a,abs_rel_b,"
        "k2_a,k2_b,t0_a,t0_b,t0_delta_pct\n");
    auto num = [](const std::optional<double>& v) {
        return v ? QString::number(*v, 'g', 12) : QString();
    };
    for (const NoiseCurveDelta& d : c.curves) {
        QStringList f{exporting::csvField(qs(d.a.machine)),
                      exporting::csvField(qs(d.a.region)),
                      exporting::csvField(qs(noise::paramsLabel(d.a.params))),
                      exporting::csvField(qs(d.a.mode)),
                      num(d.a.fit.k1),
                      num(d.b.fit.k1),
                      num(d.b.fit.k1 - d.a.fit.k1),
                      num(d.a.absRel()),
                      num(d.b.absRel()),
                      num(d.a.fit.k2),
                      num(d.b.fit.k2),
                      num(d.a.fit.t0),
                      num(d.b.fit.t0),
                      num(percentChange(d.a.fit.t0, d.b.fit.t0))};
        out += f.join(',') + '\n';
    }
    return out;
}

NoiseCompareView::NoiseCompareView(const ProfileInfo& a, const ProfileInfo& b,
                                   const QString& workspacePath, QWidget* parent)
    : QWidget(parent) {
    build();
    const int64_t ida = a.id, idb = b.id;
    loadJob_.start(
        [workspacePath, ida, idb] {
            auto ws = Workspace::open(workspacePath.toStdString(), Workspace::Mode::ReadOnly);
            return compareNoise(noise::analyzeProfile(*ws, ida), noise::analyzeProfile(*ws, idb));
        },
        [this](NoiseComparison comparison) { showData(std::move(comparison)); });
}

NoiseCompareView::NoiseCompareView(NoiseComparison comparison, QWidget* parent) : QWidget(parent) {
    build();
    showData(std::move(comparison));
}

void NoiseCompareView::build() {
    auto* layout = new QVBoxLayout(this);
    summary_ = summaryLabel(this);
    auto* top = new QHBoxLayout;
    top->addWidget(summary_, 1);
    group_ = new QComboBox(this);
    top->addWidget(group_);
    auto* exportButton = new QPushButton(tr("Export CSV…"), this);
    top->addWidget(exportButton);
    layout->addLayout(top);
    auto* split = new QSplitter(Qt::Vertical, this);
    chartHolder_ = new QWidget(split);
    auto* holderLayout = new QVBoxLayout(chartHolder_);
    holderLayout->setContentsMargins(0, 0, 0, 0);
    table_ = new QTableWidget(0, 15, split);
    table_->setHorizontalHeaderLabels({tr("machine"), tr("region"), tr("params"), tr("mode"),
                                       tr("Abs_raw A"), tr("Abs_raw B"), tr("Δ Abs_raw"),
                                       tr("Abs_rel A"), tr("Abs_rel B"), tr("k2 A"), tr("k2 B"),
                                       tr("t0 A"), tr("t0 B"), tr("Δ t0 %"), tr("class A → B")});
    setUpTable(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);
    connect(group_, &QComboBox::activated, this, &NoiseCompareView::showGroup);
    connect(exportButton, &QPushButton::clicked, this, [this] {
        exporting::runExport(
            this, {tr("Absorption deltas as CSV…"), exporting::Format::Csv,
                   QStringLiteral("absorption-deltas.csv"),
                   [this](const QString& path, QString* error) { return exportCsv(path, error); }});
    });
}

void NoiseCompareView::showData(NoiseComparison comparison) {
    c_ = std::move(comparison);
    loaded_ = true;
    summary_->setText(qs(c_.summary));
    groups_ = noiseCompareGroups(c_);
    group_->clear();
    for (const NoiseCompareGroup& g : groups_) group_->addItem(g.label());
    auto classOf = [](const std::vector<noise::Classification>& list, const noise::Curve& cv) {
        for (const auto& cl : list)
            if (cl.machine == cv.machine && cl.region == cv.region && cl.params == cv.params)
                return QString::fromUtf8(noise::className(cl.cls));
        return QStringLiteral("—");
    };
    auto optionalCell = [](const std::optional<double>& v) {
        return v ? numberCell(*v, QString::number(*v, 'g', 4)) : missingCell();
    };
    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (const NoiseCurveDelta& d : c_.curves) {
        const QString classes =
            classOf(c_.classesA, d.a) + QStringLiteral(" → ") + classOf(c_.classesB, d.b);
        rows.push_back(
            {textCell(qs(d.a.machine)), textCell(qs(d.a.region)),
             textCell(qs(noise::paramsLabel(d.a.params))), textCell(qs(d.a.mode)),
             numberCell(d.a.fit.k1, QString::number(d.a.fit.k1, 'g', 4)),
             numberCell(d.b.fit.k1, QString::number(d.b.fit.k1, 'g', 4)),
             numberCell(d.b.fit.k1 - d.a.fit.k1, format::signedCount(d.b.fit.k1 - d.a.fit.k1, 1)),
             optionalCell(d.a.absRel()), optionalCell(d.b.absRel()), optionalCell(d.a.fit.k2),
             optionalCell(d.b.fit.k2), numberCell(d.a.fit.t0, QString::number(d.a.fit.t0, 'g', 5)),
             numberCell(d.b.fit.t0, QString::number(d.b.fit.t0, 'g', 5)),
             pctCell(percentChange(d.a.fit.t0, d.b.fit.t0)), textCell(classes)});
    }
    fillTable(table_, rows);
    showGroup(0);
    emit loaded();
}

void NoiseCompareView::showGroup(int index) {
    auto* layout = chartHolder_->layout();
    while (QLayoutItem* item = layout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    if (index < 0 || size_t(index) >= groups_.size()) {
        layout->addWidget(new QLabel(tr("No absorption curve is in both profiles."), chartHolder_));
        return;
    }
    if (group_->currentIndex() != index) group_->setCurrentIndex(index);
    layout->addWidget(
        charts::createChartWidget(noiseOverlayChart(c_, groups_[size_t(index)]), chartHolder_));
}

QString NoiseCompareView::summary() const {
    return summary_->text();
}

bool NoiseCompareView::exportCsv(const QString& path, QString* error) const {
    return exporting::writeTextFile(path, csv(), error);
}

QImage renderNoiseComparison(const NoiseComparison& c, QSize size) {
    return imageWithSummary(size, qs(c.summary), [&](QPainter& painter, const QRectF& area) {
        const auto groups = noiseCompareGroups(c);
        if (groups.empty()) {
            charts::paintMessage(painter, area,
                                 QObject::tr("No absorption curve is in both profiles."));
            return;
        }
        // One line per matched curve at the bottom, the charts above.
        const QFontMetricsF fm(painter.font());
        const double lineHeight = fm.height() + 3;
        const double textHeight =
            std::min(area.height() / 3, lineHeight * double(c.curves.size()) + 8);
        double y = area.bottom() - textHeight + 4;
        painter.setPen(QColor(40, 40, 40));
        for (const NoiseCurveDelta& d : c.curves) {
            if (y + lineHeight > area.bottom()) break;
            const QString k2 = QStringLiteral("%1 → %2").arg(
                d.a.fit.k2 ? QString::number(*d.a.fit.k2, 'g', 4) : "—",
                d.b.fit.k2 ? QString::number(*d.b.fit.k2, 'g', 4) : "—");
            painter.drawText(
                QRectF(area.left() + 10, y, area.width() - 20, lineHeight),
                Qt::AlignLeft | Qt::AlignVCenter,
                QObject::tr("%1:  Abs_raw %2 → %3 (%4)   k2 %5   t0 %6 → %7 (%8)")
                    .arg(d.label(), QString::number(d.a.fit.k1, 'g', 4),
                         QString::number(d.b.fit.k1, 'g', 4),
                         format::signedCount(d.b.fit.k1 - d.a.fit.k1, 1), k2,
                         QString::number(d.a.fit.t0, 'g', 5), QString::number(d.b.fit.t0, 'g', 5),
                         format::signedPercent(percentChange(d.a.fit.t0, d.b.fit.t0))));
            y += lineHeight;
        }
        const QRectF charts(area.left(), area.top(), area.width(), area.height() - textHeight);
        const int n = int(groups.size());
        const int columns = n == 1 ? 1 : 2;
        const int rows = (n + columns - 1) / columns;
        const QSize cell(int(charts.width()) / columns, int(charts.height()) / rows);
        for (int i = 0; i < n; ++i) {
            const auto chart = charts::renderChart(noiseOverlayChart(c, groups[size_t(i)]), cell);
            painter.drawImage(QPointF(area.left() + (i % columns) * cell.width(),
                                      area.top() + (i / columns) * cell.height()),
                              chart.image);
        }
    });
}

QImage renderNoiseCompare(const Workspace& workspace, const ProfileInfo& profile,
                          const RenderOptions& options) {
    if (!options.against)
        throw InputError("render compare: name the second profile with --against B");
    if (options.against->kind != "noise")
        throw InputError("render compare: '" + options.against->name + "' is not a noise profile");
    if (!options.op.empty() || !options.alignOp.empty())
        throw InputError("render compare: --op and --align-op do not apply to noise profiles");
    return renderNoiseComparison(
        compareNoise(noise::analyzeProfile(workspace, profile.id),
                     noise::analyzeProfile(workspace, options.against->id)),
        options.size);
}

void NoiseCompareView::showLoadError(const QString& error) {
    summary_->setText(tr("Could not compare: %1").arg(error));
}

}  // namespace stallscope
