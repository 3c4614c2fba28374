#include "views/trace/hosts_panel.h"

#include <QFontMetricsF>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>

#include "core/analysis/cache.h"
#include "core/trace/hosts_registration.h"
#include "views/common/chart_kit.h"
#include "views/common/format.h"
#include "views/common/table_kit.h"

namespace stallscope {

using namespace tablekit;

namespace {

// The step's median across the hosts that ran it.
int64_t stepMedian(const trace::HostsAnalysis& a, size_t step) {
    std::vector<int64_t> times;
    for (size_t h = 0; h < a.hosts.size(); ++h) {
        const int index = a.stepOfHost[step][h];
        if (index >= 0) times.push_back(a.hosts[h].steps[size_t(index)].duration);
    }
    if (times.empty()) return 0;
    std::sort(times.begin(), times.end());
    return times[(times.size() + 1) / 2 - 1];  // nearest rank, as the analysis
}

}  // namespace

QColor stepRatioColor(double ratio) {
    if (ratio >= 1.02) {
        const double t = std::clamp((ratio - 1.02) / 0.48, 0.0, 1.0);
        return QColor::fromRgbF(1.0, 0.93 - 0.68 * t, 0.90 - 0.72 * t);
    }
    if (ratio <= 0.98) {
        const double t = std::clamp((0.98 - ratio) / 0.48, 0.0, 1.0);
        return QColor::fromRgbF(0.92 - 0.6 * t, 0.95 - 0.4 * t, 1.0);
    }
    return QColor(250, 250, 250);
}

HostHeatmapLayout paintHostHeatmap(QPainter& painter, const QRectF& area,
                                   const trace::HostsAnalysis& a) {
    HostHeatmapLayout layout;
    const QFont font = charts::beginChart(painter, area, 8.5);
    const QFontMetricsF fm(font);
    if (a.hosts.empty() || a.steps.empty()) {
        charts::paintMessage(painter, area, QObject::tr("No steps across hosts."));
        painter.restore();
        return layout;
    }
    double labelWidth = 0;
    for (const trace::HostSummary& h : a.hosts)
        labelWidth =
            std::max(labelWidth, fm.horizontalAdvance(QString::fromStdString(h.host.name)));
    labelWidth = std::min(labelWidth + 12, area.width() * 0.35);
    const double line = fm.height();
    layout.grid = QRectF(area.left() + labelWidth, area.top() + line + 8,
                         std::max(10.0, area.width() - labelWidth - 10),
                         std::max(10.0, area.height() - 2 * line - 16));
    const QRectF& grid = layout.grid;
    painter.setPen(Qt::black);
    painter.drawText(QRectF(area.left() + 6, area.top() + 2, area.width() - 12, line),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     QObject::tr("Step time per host (red: slower than the step's median "
                                 "across hosts, blue: faster)"));
    const size_t hosts = a.hosts.size(), steps = a.steps.size();
    const double cw = grid.width() / double(steps), ch = grid.height() / double(hosts);
    std::vector<int64_t> medians(steps);
    for (size_t s = 0; s < steps; ++s) medians[s] = stepMedian(a, s);
    layout.cells.assign(hosts, std::vector<QRectF>(steps));
    // Rows lower than a line of text label every n-th host (the tooltip names each).
    const size_t labelEvery = size_t(std::max(1.0, std::ceil(fm.height() / std::max(ch, 1.0))));
    for (size_t h = 0; h < hosts; ++h) {
        const QRectF label(area.left(), grid.top() + double(h) * ch + ch / 2 - line / 2,
                           labelWidth - 6, line);
        if (h % labelEvery == 0) {
            painter.setPen(QColor(40, 40, 40));
            painter.drawText(label, Qt::AlignRight | Qt::AlignVCenter,
                             fm.elidedText(QString::fromStdString(a.hosts[h].host.name),
                                           Qt::ElideMiddle, label.width()));
        }
        for (size_t s = 0; s < steps; ++s) {
            const QRectF cell(grid.left() + double(s) * cw, grid.top() + double(h) * ch, cw, ch);
            const int index = a.stepOfHost[s][h];
            if (index < 0) {
                painter.fillRect(cell, QBrush(QColor(200, 200, 200), Qt::BDiagPattern));
                continue;
            }
            layout.cells[h][s] = cell;
            const double ratio = medians[s] > 0 ? double(a.hosts[h].steps[size_t(index)].duration) /
                                                      double(medians[s])
                                                : 1.0;
            painter.fillRect(cell, stepRatioColor(ratio));
        }
    }
    // Cell borders while cells are big enough to see them; the stragglers outlined.
    if (cw >= 4 && ch >= 4) {
        painter.setPen(QColor(225, 225, 225));
        for (size_t s = 0; s <= steps; ++s)
            painter.drawLine(QPointF(grid.left() + double(s) * cw, grid.top()),
                             QPointF(grid.left() + double(s) * cw, grid.bottom()));
        for (size_t h = 0; h <= hosts; ++h)
            painter.drawLine(QPointF(grid.left(), grid.top() + double(h) * ch),
                             QPointF(grid.right(), grid.top() + double(h) * ch));
    }
    painter.setPen(QPen(QColor(150, 20, 20), 1.5));
    painter.setBrush(Qt::NoBrush);
    for (const trace::Straggler& st : a.stragglers)
        if (st.excessPct >= 5 && size_t(st.host) < hosts && size_t(st.step) < steps)
            painter.drawRect(layout.cells[size_t(st.host)][size_t(st.step)].adjusted(1, 1, -1, -1));
    const int every = std::max(1, int(std::ceil(fm.horizontalAdvance("0000") / cw)));
    painter.setPen(QColor(70, 70, 70));
    for (size_t s = 0; s < steps; s += size_t(every))
        painter.drawText(QRectF(grid.left() + double(s) * cw, grid.bottom() + 2, cw * every, line),
                         Qt::AlignLeft | Qt::AlignTop, QString::number(s));
    painter.restore();
    return layout;
}

QImage renderHosts(const Workspace& workspace, const ProfileInfo& profile, QSize size) {
    const trace::HostsAnalysis analysis =
        *analysis::read(workspace, profile.id, trace::hostsAnalysis());
    // The Hosts tab as the GUI shows it: the strip, and beside it the per-host table.
    HostsPanel panel;
    panel.setAnalysis(std::make_shared<const trace::HostsAnalysis>(analysis));
    panel.resize(size);
    panel.setAttribute(Qt::WA_DontShowOnScreen);
    panel.show();
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    panel.render(&image);
    return image;
}

// ---- widget ------------------------------------------------------------------------------------

HostHeatmapWidget::HostHeatmapWidget(QWidget* parent) : QWidget(parent) {
    setMinimumSize(300, 160);
    setMouseTracking(true);
}

void HostHeatmapWidget::setAnalysis(HostsAnalysisPtr analysis) {
    analysis_ = std::move(analysis);
    update();
}

void HostHeatmapWidget::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    if (!analysis_) return;
    layout_ = paintHostHeatmap(painter, QRectF(rect()), *analysis_);
}

std::pair<int, int> HostHeatmapWidget::cellAt(const QPointF& pos) const {
    for (size_t h = 0; h < layout_.cells.size(); ++h)
        for (size_t s = 0; s < layout_.cells[h].size(); ++s)
            if (!layout_.cells[h][s].isEmpty() && layout_.cells[h][s].contains(pos))
                return {int(h), int(s)};
    return {-1, -1};
}

bool HostHeatmapWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip && analysis_) {
        auto* help = static_cast<QHelpEvent*>(event);
        const auto [h, s] = cellAt(help->pos());
        if (h < 0) {
            QToolTip::hideText();
            return true;
        }
        const trace::HostSummary& host = analysis_->hosts[size_t(h)];
        const trace::HostStep& step =
            host.steps[size_t(analysis_->stepOfHost[size_t(s)][size_t(h)])];
        const int64_t median = stepMedian(*analysis_, size_t(s));
        QToolTip::showText(
            help->globalPos(),
            tr("%1, step %2 (%3): %4\nmedian across hosts %5 (%6)\nclick to "
               "show it on the timeline")
                .arg(QString::fromStdString(host.host.name))
                .arg(s)
                .arg(QString::fromStdString(analysis_->steps[size_t(s)]),
                     format::nanoseconds(double(step.duration)),
                     format::nanoseconds(double(median)),
                     format::signedPercent(median > 0 ? 100.0 * double(step.duration - median) /
                                                            double(median)
                                                      : 0.0)),
            this);
        return true;
    }
    return QWidget::event(event);
}

void HostHeatmapWidget::mousePressEvent(QMouseEvent* event) {
    const auto [h, s] = cellAt(event->position());
    if (h >= 0) emit cellClicked(h, s);
}

// ---- panel -------------------------------------------------------------------------------------

HostsPanel::HostsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    summary_ = new QLabel(tr("Analysing hosts…"));
    summary_->setWordWrap(true);
    layout->addWidget(summary_);
    auto* split = new QSplitter(Qt::Horizontal);
    heatmap_ = new HostHeatmapWidget;
    split->addWidget(heatmap_);
    auto* tables = new QTabWidget;
    stragglers_ = new QTableWidget;
    setUpTable(stragglers_);
    stragglers_->setColumnCount(5);
    stragglers_->setHorizontalHeaderLabels(
        {tr("Step"), tr("Slowest host"), tr("Its time"), tr("Median"), tr("Excess")});
    ops_ = new QTableWidget;
    setUpTable(ops_);
    ops_->setColumnCount(6);
    ops_->setHorizontalHeaderLabels(
        {tr("Op"), tr("Min"), tr("Median"), tr("Max"), tr("Spread"), tr("Slowest host")});
    hostTable_ = new QTableWidget;
    setUpTable(hostTable_);
    QStringList hostHeader{tr("Host"), tr("Slices"), tr("Steps"), tr("Median step"),
                           tr("Slowest step")};
    for (const char* category : trace::kCategoryNames) hostHeader << QString::fromUtf8(category);
    hostTable_->setColumnCount(int(hostHeader.size()));
    hostTable_->setHorizontalHeaderLabels(hostHeader);
    hostTable_->setToolTip(tr("Each category's share of the host's device time over its steps"));
    tables->addTab(hostTable_, tr("Per host"));
    tables->addTab(stragglers_, tr("Slowest host per step"));
    tables->addTab(ops_, tr("Ops varying across hosts"));
    split->addWidget(tables);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    // Half each to begin with: the tables' columns need the room the strip's hint would take.
    split->setSizes({1000, 1000});
    layout->addWidget(split, 1);
    connect(heatmap_, &HostHeatmapWidget::cellClicked, this, &HostsPanel::hostStepActivated);
    connect(hostTable_, &QTableWidget::cellClicked, this, [this](int row) {
        const auto* item = hostTable_->item(row, 0);
        if (!item || !analysis_) return;
        const int host = item->data(kRowRole).toInt();
        // Its slowest step, as a step of the run (stepOfHost maps run steps to the host's).
        int slowest = -1;
        int64_t longest = -1;
        for (size_t s = 0; s < analysis_->steps.size(); ++s) {
            const int own = analysis_->stepOfHost[s][size_t(host)];
            if (own < 0) continue;
            const int64_t d = analysis_->hosts[size_t(host)].steps[size_t(own)].duration;
            if (d > longest) {
                longest = d;
                slowest = int(s);
            }
        }
        if (slowest >= 0) emit hostStepActivated(host, slowest);
    });
    connect(stragglers_, &QTableWidget::cellClicked, this, [this](int row) {
        const auto* item = stragglers_->item(row, 0);
        if (!item || !analysis_) return;
        const trace::Straggler& s = analysis_->stragglers.at(size_t(item->data(kRowRole).toInt()));
        emit hostStepActivated(s.host, s.step);
    });
}

void HostsPanel::setAnalysis(HostsAnalysisPtr analysis) {
    analysis_ = std::move(analysis);
    heatmap_->setAnalysis(analysis_);
    const trace::HostsAnalysis& a = *analysis_;
    const trace::Straggler* worst = nullptr;
    for (const trace::Straggler& s : a.stragglers)
        if (!worst || s.excessPct > worst->excessPct) worst = &s;
    QString text = tr("%n host(s), %1 steps matched %2", nullptr, int(a.hosts.size()))
                       .arg(a.steps.size())
                       .arg(a.matchedByName ? tr("by name") : tr("by position"));
    if (worst)
        text += tr(" · slowest: %1 in step %2, %3 over the median")
                    .arg(QString::fromStdString(worst->hostName))
                    .arg(worst->step)
                    .arg(format::signedPercent(worst->excessPct));
    summary_->setText(text);

    std::vector<std::vector<QTableWidgetItem*>> rows;
    for (size_t h = 0; h < a.hosts.size(); ++h) {
        const trace::HostSummary& host = a.hosts[h];
        std::array<int64_t, trace::kStepCategoryCount> total{};
        int64_t longest = 0, all = 0;
        for (const trace::HostStep& step : host.steps) {
            for (size_t c = 0; c < total.size(); ++c) total[c] += step.breakdown[c];
            longest = std::max(longest, step.duration);
        }
        for (int64_t v : total) all += v;
        auto* name = textCell(QString::fromStdString(host.host.name));
        name->setData(kRowRole, int(h));
        std::vector<QTableWidgetItem*> row{
            name, numberCell(double(host.slices)), numberCell(double(host.steps.size())),
            numberCell(double(host.stepTimeMedian()),
                       format::nanoseconds(double(host.stepTimeMedian()))),
            numberCell(double(longest), format::nanoseconds(double(longest)))};
        for (int64_t v : total) {
            const double pct = all > 0 ? 100.0 * double(v) / double(all) : 0.0;
            row.push_back(numberCell(pct, QStringLiteral("%1 %").arg(pct, 0, 'f', 1)));
        }
        rows.push_back(std::move(row));
    }
    fillTable(hostTable_, rows);
    rows.clear();
    for (size_t i = 0; i < a.stragglers.size(); ++i) {
        const trace::Straggler& s = a.stragglers[i];
        auto* step = numberCell(double(s.step));
        step->setData(kRowRole, int(i));
        rows.push_back(
            {step, textCell(QString::fromStdString(s.hostName)),
             numberCell(double(s.stepTime), format::nanoseconds(double(s.stepTime))),
             numberCell(double(s.medianStepTime), format::nanoseconds(double(s.medianStepTime))),
             pctCell(s.excessPct)});
    }
    fillTable(stragglers_, rows);
    rows.clear();
    for (const trace::OpVariation& op : a.variableOps) {
        const auto ns = [](int64_t v) {
            return numberCell(double(v), format::nanoseconds(double(v)));
        };
        rows.push_back(
            {textCell(QString::fromStdString(op.name)), ns(op.min), ns(op.median), ns(op.max),
             pctCell(op.spreadPct),
             textCell(size_t(op.slowestHost) < a.hosts.size()
                          ? QString::fromStdString(a.hosts[size_t(op.slowestHost)].host.name)
                          : QString())});
    }
    fillTable(ops_, rows);
}

}  // namespace stallscope
