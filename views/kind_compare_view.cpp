#include "kind_compare_view.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFutureWatcher>
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

#include "absorption_view.h"
#include "compare_table.h"
#include "cpi_chart.h"
#include "errors.h"
#include "percent.h"

namespace stallscope {

using namespace comparetable;

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

// A widget that paints with a function (the same one the headless renders use).
class PaintedWidget : public QWidget {
  public:
    explicit PaintedWidget(std::function<void(QPainter&, const QRectF&)> paint,
                           QWidget* parent = nullptr)
        : QWidget(parent), paint_(std::move(paint)) {
        setMinimumSize(320, 220);
    }

  protected:
    void paintEvent(QPaintEvent*) override {
        QPainter painter(this);
        paint_(painter, QRectF(rect()));
    }

  private:
    std::function<void(QPainter&, const QRectF&)> paint_;
};

QLabel* summaryLabel(QWidget* parent) {
    auto* label = new QLabel(QObject::tr("Comparing…"), parent);
    QFont bold = label->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    label->setFont(bold);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setWordWrap(true);
    return label;
}

bool writeText(const QString& path, const QString& text) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) return false;
    return file.write(text.toUtf8()) >= 0;
}

QString shortSigned(double v) {
    const QString magnitude = charts::shortNumber(std::abs(v));
    if (magnitude == QLatin1String("0")) return magnitude;
    return (v < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + magnitude;
}

// Summary on top, then `paint` below, as one image.
QImage withSummary(QSize size, const QString& summary,
                   const std::function<void(QPainter&, const QRectF&)>& paint) {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    QFont font = painter.font();
    font.setBold(true);
    font.setPointSizeF(11);
    painter.setFont(font);
    painter.setPen(Qt::black);
    painter.drawText(QRect(10, 4, size.width() - 20, 26), Qt::AlignLeft | Qt::AlignVCenter,
                     summary);
    font.setBold(false);
    font.setPointSizeF(9);
    painter.setFont(font);
    paint(painter, QRectF(0, 34, size.width(), size.height() - 34));
    return image;
}

}  // namespace

// ---- CPI --------------------------------------------------------------------------------------

CpiCompareData compareCpiData(cpi::CpiData a, cpi::CpiData b) {
    CpiCompareData data;
    data.raw = compareCpiStacks(a, b);
    data.classes = compareCpiStacks(cpi::toGsiClasses(a), cpi::toGsiClasses(b));
    data.a = std::move(a);
    data.b = std::move(b);
    return data;
}

CpiCompareData loadCpiCompare(const Workspace& workspace, int64_t a, int64_t b) {
    return compareCpiData(cpi::loadCpiData(workspace, a), cpi::loadCpiData(workspace, b));
}

cpi::CpiData sideBySideStacks(const CpiComparison& c) {
    std::vector<cpi::KernelStack> stacks;
    for (const CpiStackDelta& d : c.stacks) {
        stacks.push_back({d.kernel, "A·" + d.source, d.group, d.a});
        stacks.push_back({d.kernel, "B·" + d.source, d.group, d.b});
    }
    cpi::CpiData data = cpi::buildCpiData(std::move(stacks));
    // A's bar left of B's for each source, sources in the comparison's order ("hw" first).
    data.sources.clear();
    for (const CpiSourceTotals& s : c.sources) {
        data.sources.push_back("A·" + s.source);
        data.sources.push_back("B·" + s.source);
    }
    return data;
}

std::vector<CategoryDeltaBar> paintCategoryDeltas(QPainter& p, const QRectF& area,
                                                  const CpiComparison& c, int stack) {
    std::vector<CategoryDeltaBar> bars;
    p.save();
    p.fillRect(area, Qt::white);
    QFont font = p.font();
    font.setPointSizeF(9);
    p.setFont(font);
    const QFontMetricsF fm(font);
    QString title;
    std::map<std::string, std::pair<double, double>> sums;
    if (stack >= 0 && size_t(stack) < c.stacks.size()) {
        const CpiStackDelta& d = c.stacks[size_t(stack)];
        title =
            QObject::tr("Δ cycles per category (B − A): %1 [%2]").arg(qs(d.kernel), qs(d.source));
        for (const std::string& category : c.categories) {
            const auto ia = d.a.find(category);
            const auto ib = d.b.find(category);
            sums[category] = {ia == d.a.end() ? 0.0 : ia->second,
                              ib == d.b.end() ? 0.0 : ib->second};
        }
    } else {
        const CpiSourceTotals* primary = c.primary();
        title = primary ? QObject::tr("Δ cycles per category (B − A): %1 kernels [%2]")
                              .arg(primary->kernels)
                              .arg(qs(primary->source))
                        : QObject::tr("Δ cycles per category (B − A)");
        for (const CpiStackDelta& d : c.stacks) {
            if (d.source != c.primarySource) continue;
            for (const auto& [category, v] : d.a) sums[category].first += v;
            for (const auto& [category, v] : d.b) sums[category].second += v;
        }
    }
    QFont bold = font;
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(QColor(30, 30, 30));
    p.drawText(QRectF(area.left() + 8, area.top() + 4, area.width() - 16, 20),
               Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetricsF(bold).elidedText(title, Qt::ElideMiddle, area.width() - 16));
    p.setFont(font);
    for (const std::string& category : c.categories) {
        const auto it = sums.find(category);
        if (it == sums.end() || (it->second.first == 0 && it->second.second == 0)) continue;
        bars.push_back({category, it->second.first, it->second.second, {}});
    }
    if (bars.empty()) {
        charts::paintMessage(p, area, QObject::tr("No matched kernel stacks."));
        p.restore();
        return bars;
    }
    double labelWidth = 0, maxAbs = 0;
    for (const CategoryDeltaBar& b : bars) {
        labelWidth = std::max(labelWidth, fm.horizontalAdvance(qs(b.category)));
        maxAbs = std::max(maxAbs, std::abs(b.b - b.a));
    }
    labelWidth = std::min(labelWidth + 12, area.width() * 0.35);
    const double valueRoom = fm.horizontalAdvance(QStringLiteral("−999.9M (−100%)")) + 8;
    const QRectF plot(area.left() + labelWidth, area.top() + 30, area.width() - labelWidth - 12,
                      area.height() - 30 - 10);
    const double rowHeight = std::min(22.0, plot.height() / double(bars.size()));
    const double zero = plot.left() + plot.width() / 2;
    const double half = plot.width() / 2 - valueRoom;
    p.setPen(QColor(200, 200, 200));
    p.drawLine(QPointF(zero, plot.top()), QPointF(zero, plot.top() + rowHeight * bars.size()));
    for (size_t i = 0; i < bars.size(); ++i) {
        CategoryDeltaBar& b = bars[i];
        const double y = plot.top() + double(i) * rowHeight;
        const double delta = b.b - b.a;
        p.setPen(QColor(40, 40, 40));
        p.drawText(QRectF(area.left() + 4, y, labelWidth - 8, rowHeight),
                   Qt::AlignRight | Qt::AlignVCenter,
                   fm.elidedText(qs(b.category), Qt::ElideRight, labelWidth - 8));
        const double w = maxAbs > 0 ? std::abs(delta) / maxAbs * half : 0;
        if (w > 0) {
            b.rect = delta < 0 ? QRectF(zero - w, y + 3, w, rowHeight - 6)
                               : QRectF(zero, y + 3, w, rowHeight - 6);
            p.fillRect(b.rect, charts::categoryColor(b.category));
        }
        const QString text =
            shortSigned(delta) +
            QStringLiteral(" (%1)").arg(qs(signedPercentText(percentChange(b.a, b.b), 0)));
        const double tw = fm.horizontalAdvance(text) + 4;
        p.setPen(delta < 0   ? QColor(20, 120, 40)
                 : delta > 0 ? QColor(180, 40, 30)
                             : QColor(90, 90, 90));
        p.drawText(delta < 0 ? QRectF(zero - w - tw - 2, y, tw, rowHeight)
                             : QRectF(zero + w + 2, y, tw, rowHeight),
                   (delta < 0 ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter, text);
    }
    p.restore();
    return bars;
}

CpiCompareView::CpiCompareView(const ProfileInfo& a, const ProfileInfo& b,
                               const QString& workspacePath, QWidget* parent)
    : QWidget(parent) {
    build();
    auto* watcher = new QFutureWatcher<CpiCompareData>(this);
    connect(watcher, &QFutureWatcher<CpiCompareData>::finished, this, [this, watcher] {
        watcher->deleteLater();
        CpiCompareData data = watcher->result();
        if (!data.error.isEmpty()) {
            summary_->setText(tr("Could not compare: %1").arg(data.error));
            return;
        }
        showData(std::move(data));
    });
    const int64_t ida = a.id, idb = b.id;
    watcher->setFuture(QtConcurrent::run([workspacePath, ida, idb] {
        try {
            auto ws = Workspace::open(workspacePath.toStdString(), Workspace::Mode::ReadOnly);
            return loadCpiCompare(*ws, ida, idb);
        } catch (const std::exception& e) {
            CpiCompareData failed;
            failed.error = QString::fromUtf8(e.what());
            return failed;
        }
    }));
}

CpiCompareView::CpiCompareView(CpiCompareData data, QWidget* parent) : QWidget(parent) {
    build();
    showData(std::move(data));
}

void CpiCompareView::build() {
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    summary_ = summaryLabel(this);
    top->addWidget(summary_, 1);
    mode_ = new QComboBox(this);
    mode_->addItems({tr("Raw categories"), tr("GSI classes")});
    top->addWidget(mode_);
    auto* exportButton = new QPushButton(tr("Export CSV…"), this);
    exportButton->setToolTip(tr("Writes the table of the current tab as CSV"));
    top->addWidget(exportButton);
    layout->addLayout(top);
    unmatched_ = new QLabel(this);
    unmatched_->setWordWrap(true);
    layout->addWidget(unmatched_);
    auto* split = new QSplitter(Qt::Vertical, this);
    charts_ = new PaintedWidget(
        [this](QPainter& painter, const QRectF& area) { paintCharts(painter, area); }, split);
    tabs_ = new QTabWidget(split);
    kernels_ = new QTableWidget(0, 9, tabs_);
    kernels_->setHorizontalHeaderLabels({tr("kernel"), tr("source"), tr("A cycles"), tr("B cycles"),
                                         tr("Δ cycles"), tr("Δ %"), tr("A stall"), tr("B stall"),
                                         tr("Δ stall %")});
    categories_ = new QTableWidget(0, 8, tabs_);
    categories_->setHorizontalHeaderLabels({tr("kernel"), tr("source"), tr("category"),
                                            tr("GSI class"), tr("A cycles"), tr("B cycles"),
                                            tr("Δ cycles"), tr("Δ %")});
    sources_ = new QTableWidget(0, 8, tabs_);
    sources_->setHorizontalHeaderLabels({tr("source"), tr("kernels"), tr("A cycles"),
                                         tr("B cycles"), tr("Δ %"), tr("A stall"), tr("B stall"),
                                         tr("Δ stall %")});
    for (QTableWidget* t : {kernels_, categories_, sources_}) setUpTable(t);
    tabs_->addTab(kernels_, tr("Per kernel"));
    tabs_->addTab(categories_, tr("Per category"));
    tabs_->addTab(sources_, tr("Per source"));
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);
    connect(mode_, &QComboBox::activated, this, [this](int index) { setClasses(index == 1); });
    connect(kernels_, &QTableWidget::currentCellChanged, this, [this](int row) {
        const QTableWidgetItem* item = row >= 0 ? kernels_->item(row, 0) : nullptr;
        if (item) setDeltaStack(item->data(kRowRole).toInt());
    });
    connect(exportButton, &QPushButton::clicked, this, [this] {
        const Table table = static_cast<Table>(tabs_->currentIndex());
        const char* names[] = {"cpi-kernel-deltas.csv", "cpi-category-deltas.csv",
                               "cpi-source-deltas.csv"};
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export CSV"), QString::fromUtf8(names[int(table)]), "CSV (*.csv)");
        if (!path.isEmpty()) exportCsv(table, path);
    });
}

const CpiComparison& CpiCompareView::current() const {
    return classes_ ? data_.classes : data_.raw;
}

void CpiCompareView::showData(CpiCompareData data) {
    data_ = std::move(data);
    loaded_ = true;
    refresh();
    emit loaded();
}

void CpiCompareView::setClasses(bool classes) {
    classes_ = classes;
    if (mode_->currentIndex() != int(classes)) mode_->setCurrentIndex(int(classes));
    if (loaded_) refresh();
}

void CpiCompareView::setDeltaStack(int stack) {
    deltaStack_ = stack;
    charts_->update();
}

void CpiCompareView::refresh() {
    const CpiComparison& c = current();
    summary_->setText(qs(c.summary));
    sideBySide_ = sideBySideStacks(c);
    deltaStack_ = -1;
    QStringList unmatched;
    auto list = [](const std::vector<std::pair<std::string, std::string>>& pairs) {
        QStringList out;
        for (const auto& [kernel, source] : pairs)
            out << QStringLiteral("%1 [%2]").arg(qs(kernel), qs(source));
        return out.join(QStringLiteral(", "));
    };
    if (!c.onlyInA.empty()) unmatched << tr("Only in A: %1").arg(list(c.onlyInA));
    if (!c.onlyInB.empty()) unmatched << tr("Only in B: %1").arg(list(c.onlyInB));
    unmatched_->setText(unmatched.join(QStringLiteral("   ·   ")));
    unmatched_->setVisible(!unmatched.isEmpty());

    // Rows: largest |Δ| first.
    std::vector<size_t> order(c.stacks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        return std::abs(c.stacks[x].totalB - c.stacks[x].totalA) >
               std::abs(c.stacks[y].totalB - c.stacks[y].totalA);
    });
    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (size_t i : order) {
        const CpiStackDelta& d = c.stacks[i];
        rows.push_back({textCell(qs(d.kernel)), textCell(qs(d.source)), numberCell(d.totalA),
                        numberCell(d.totalB), deltaCell(d.totalB - d.totalA),
                        pctCell(percentChange(d.totalA, d.totalB)), numberCell(d.stallA),
                        numberCell(d.stallB), pctCell(percentChange(d.stallA, d.stallB))});
        rows.back()[0]->setData(kRowRole, int(i));
    }
    fillTable(kernels_, rows);

    struct CategoryRow {
        const CpiStackDelta* d;
        std::string category;
        double a, b;
    };
    std::vector<CategoryRow> cats;
    for (const CpiStackDelta& d : c.stacks)
        for (const std::string& category : c.categories) {
            const auto ia = d.a.find(category);
            const auto ib = d.b.find(category);
            if (ia == d.a.end() && ib == d.b.end()) continue;
            cats.push_back({&d, category, ia == d.a.end() ? 0.0 : ia->second,
                            ib == d.b.end() ? 0.0 : ib->second});
        }
    std::stable_sort(cats.begin(), cats.end(), [](const CategoryRow& x, const CategoryRow& y) {
        return std::abs(x.b - x.a) > std::abs(y.b - y.a);
    });
    rows.clear();
    for (const CategoryRow& r : cats)
        rows.push_back({textCell(qs(r.d->kernel)), textCell(qs(r.d->source)),
                        textCell(qs(r.category)), textCell(qs(cpi::gsiClassOf(r.category))),
                        numberCell(r.a), numberCell(r.b), deltaCell(r.b - r.a),
                        pctCell(percentChange(r.a, r.b))});
    fillTable(categories_, rows);

    rows.clear();
    for (const CpiSourceTotals& s : c.sources)
        rows.push_back({textCell(qs(s.source)), numberCell(double(s.kernels)), numberCell(s.totalA),
                        numberCell(s.totalB), pctCell(percentChange(s.totalA, s.totalB)),
                        numberCell(s.stallA), numberCell(s.stallB),
                        pctCell(percentChange(s.stallA, s.stallB))});
    fillTable(sources_, rows);
    charts_->update();
}

void CpiCompareView::paintCharts(QPainter& painter, const QRectF& area) const {
    if (!loaded_) return;
    const double split = area.width() * 0.6;
    charts::StackChartOptions options;
    options.title = tr("CPI stacks, A and B side by side per kernel (%1)")
                        .arg(classes_ ? tr("GSI classes") : tr("raw categories"));
    charts::paintStackChart(painter, QRectF(area.left(), area.top(), split, area.height()),
                            sideBySide_, options);
    const CpiComparison& c = current();
    const QRectF right(area.left() + split, area.top(), area.width() - split, area.height());
    const auto bars = paintCategoryDeltas(painter, right, c, deltaStack_);
    // Below the bars: each source's totals over its matched kernels, and what is unmatched.
    QStringList lines;
    for (const CpiSourceTotals& s : c.sources)
        lines << tr("%1: %2 → %3 cycles (%4), stall %5 → %6 (%7), %8 matched kernel(s)")
                     .arg(qs(s.source), count(s.totalA), count(s.totalB),
                          signedPct(percentChange(s.totalA, s.totalB)), count(s.stallA),
                          count(s.stallB), signedPct(percentChange(s.stallA, s.stallB)))
                     .arg(s.kernels);
    auto pairs = [](const std::vector<std::pair<std::string, std::string>>& list) {
        QStringList out;
        for (const auto& [kernel, source] : list)
            out << QStringLiteral("%1 [%2]").arg(qs(kernel), qs(source));
        return out.join(QStringLiteral(", "));
    };
    if (!c.onlyInA.empty()) lines << tr("only in A: %1").arg(pairs(c.onlyInA));
    if (!c.onlyInB.empty()) lines << tr("only in B: %1").arg(pairs(c.onlyInB));
    double y = right.top() + 30 + 22.0 * double(std::max<size_t>(bars.size(), 1)) + 24;
    painter.save();
    QFont font = painter.font();
    font.setPointSizeF(9);
    painter.setFont(font);
    const QFontMetricsF fm(font);
    painter.setPen(QColor(40, 40, 40));
    for (const QString& line : lines) {
        if (y + 18 > right.bottom()) break;
        painter.drawText(QRectF(right.left() + 8, y, right.width() - 16, 18),
                         Qt::AlignLeft | Qt::AlignVCenter,
                         fm.elidedText(line, Qt::ElideRight, right.width() - 16));
        y += 18;
    }
    painter.restore();
}

QString CpiCompareView::summary() const {
    return summary_->text();
}

QString CpiCompareView::csv(Table table) const {
    switch (table) {
        case Table::Kernels:
            return tableCsv(kernels_, QStringLiteral("kernel,source,a_cycles,b_cycles,"
                                                     "delta_cycles,delta_pct,a_stall,b_stall,"
                                                     "stall_delta_pct"));
        case Table::Categories:
            return tableCsv(categories_, QStringLiteral("kernel,source,category,class,a_cycles,"
                                                        "b_cycles,delta_cycles,delta_pct"));
        case Table::Sources:
            return tableCsv(sources_, QStringLiteral("source,kernels,a_cycles,b_cycles,delta_pct,"
                                                     "a_stall,b_stall,stall_delta_pct"));
    }
    return {};
}

bool CpiCompareView::exportCsv(Table table, const QString& path) const {
    return writeText(path, csv(table));
}

QImage renderCpiCompare(const Workspace& workspace, const ProfileInfo& profile,
                        const RenderOptions& options) {
    if (!options.against)
        throw InputError("render compare: name the second profile with --against B");
    if (options.against->kind != "cpi")
        throw InputError("render compare: '" + options.against->name + "' is not a cpi profile");
    if (!options.op.empty() || !options.alignOp.empty())
        throw InputError("render compare: --op and --align-op do not apply to cpi profiles");
    CpiCompareView view(loadCpiCompare(workspace, profile.id, options.against->id));
    return withSummary(options.size, view.summary(), [&](QPainter& painter, const QRectF& area) {
        view.paintCharts(painter, area);
    });
}

// ---- noise ------------------------------------------------------------------------------------

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
        QStringList f{csvField(qs(d.a.machine)),
                      csvField(qs(d.a.region)),
                      csvField(qs(noise::paramsLabel(d.a.params))),
                      csvField(qs(d.a.mode)),
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
    struct Result {
        NoiseComparison c;
        QString error;
    };
    auto* watcher = new QFutureWatcher<Result>(this);
    connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher] {
        watcher->deleteLater();
        Result r = watcher->result();
        if (!r.error.isEmpty())
            summary_->setText(tr("Could not compare: %1").arg(r.error));
        else
            showData(std::move(r.c));
    });
    const int64_t ida = a.id, idb = b.id;
    watcher->setFuture(QtConcurrent::run([workspacePath, ida, idb] {
        try {
            auto ws = Workspace::open(workspacePath.toStdString(), Workspace::Mode::ReadOnly);
            return Result{
                compareNoise(noise::analyzeProfile(*ws, ida), noise::analyzeProfile(*ws, idb)), {}};
        } catch (const std::exception& e) {
            return Result{{}, QString::fromUtf8(e.what())};
        }
    }));
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
        const QString path = QFileDialog::getSaveFileName(this, tr("Export CSV"),
                                                          "absorption-deltas.csv", "CSV (*.csv)");
        if (!path.isEmpty()) exportCsv(path);
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
             numberCell(d.b.fit.k1 - d.a.fit.k1, signedCount(d.b.fit.k1 - d.a.fit.k1, 1)),
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

bool NoiseCompareView::exportCsv(const QString& path) const {
    return writeText(path, csv());
}

QImage renderNoiseComparison(const NoiseComparison& c, QSize size) {
    return withSummary(size, qs(c.summary), [&](QPainter& painter, const QRectF& area) {
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
                         signedCount(d.b.fit.k1 - d.a.fit.k1, 1), k2,
                         QString::number(d.a.fit.t0, 'g', 5), QString::number(d.b.fit.t0, 'g', 5),
                         signedPct(percentChange(d.a.fit.t0, d.b.fit.t0))));
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

QWidget* createKindCompareView(const ProfileInfo& a, const ProfileInfo& b,
                               const QString& workspacePath) {
    if (a.kind == "cpi") return new CpiCompareView(a, b, workspacePath);
    if (a.kind == "noise") return new NoiseCompareView(a, b, workspacePath);
    return nullptr;
}

}  // namespace stallscope
