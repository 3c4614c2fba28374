#include "views/cpi/cpi_compare_view.h"

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

#include "views/common/export.h"
#include "views/common/format.h"
#include "views/common/view_widgets.h"
#include "views/cpi/cpi_charts.h"

namespace stallscope {

using namespace tablekit;

namespace {
QString qs(const std::string& s) {
    return QString::fromStdString(s);
}
}  // namespace

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
            format::shortSigned(delta) +
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
    const int64_t ida = a.id, idb = b.id;
    loadJob_.start(
        [workspacePath, ida, idb] {
            auto ws = Workspace::open(workspacePath.toStdString(), Workspace::Mode::ReadOnly);
            return loadCpiCompare(*ws, ida, idb);
        },
        [this](CpiCompareData data) { showData(std::move(data)); });
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
        exporting::runExport(this, {tr("Deltas as CSV…"), exporting::Format::Csv,
                                    QString::fromUtf8(names[int(table)]),
                                    [this, table](const QString& path, QString* error) {
                                        return exportCsv(table, path, error);
                                    }});
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
                     .arg(qs(s.source), format::count(s.totalA), format::count(s.totalB),
                          format::signedPercent(percentChange(s.totalA, s.totalB)),
                          format::count(s.stallA), format::count(s.stallB),
                          format::signedPercent(percentChange(s.stallA, s.stallB)))
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

bool CpiCompareView::exportCsv(Table table, const QString& path, QString* error) const {
    return exporting::writeTextFile(path, csv(table), error);
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
    return imageWithSummary(
        options.size, view.summary(),
        [&](QPainter& painter, const QRectF& area) { view.paintCharts(painter, area); });
}

void CpiCompareView::showLoadError(const QString& error) {
    summary_->setText(tr("Could not compare: %1").arg(error));
}

}  // namespace stallscope
