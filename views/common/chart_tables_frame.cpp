#include "views/common/chart_tables_frame.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace stallscope {

ChartTablesFrame::ChartTablesFrame(const ProfileInfo& profile, QString exportTitle,
                                   QSize exportSize, QWidget* parent)
    : QWidget(parent),
      profile_(profile),
      exportTitle_(std::move(exportTitle)),
      exportSize_(exportSize),
      loadJob_(this, [this](const QString& message) { loadFailed(message); }) {
    auto* layout = new QVBoxLayout(this);
    toolBar_ = new QHBoxLayout;
    layout->addLayout(toolBar_);
    split_ = new QSplitter(Qt::Horizontal, this);
    charts_ = new QSplitter(Qt::Vertical, split_);
    tabs_ = new QTabWidget(split_);
    split_->setStretchFactor(0, 3);
    split_->setStretchFactor(1, 2);
    // Stretch factors only share space beyond the size hints, and wide tables hint wide: give
    // the charts three fifths outright (QSplitter scales these to the real width).
    split_->setSizes({600, 400});
    layout->addWidget(split_, 1);
    status_ = new QLabel(tr("Loading…"), this);
    status_->setWordWrap(true);
}

void ChartTablesFrame::addToolBarWidget(QWidget* widget) {
    toolBar_->addWidget(widget);
}

void ChartTablesFrame::finishToolBar(const QString& csvName) {
    using exporting::ExportTarget;
    using exporting::Format;
    std::vector<ExportTarget> targets{
        {tr("CSV…"), Format::Csv, csvName,
         [this](const QString& path, QString* error) { return exportCsv(path, error); }},
        {tr("PNG…"), Format::Png, csvName.section('.', 0, 0) + ".png",
         [this](const QString& path, QString* error) {
             return exporting::writeImageFile(path, exportImage(), error);
         }},
        {tr("SVG…"), Format::Svg, csvName.section('.', 0, 0) + ".svg",
         [this](const QString& path, QString* error) {
             return exporting::writeSvgFile(
                 path, exportSize_,
                 [this](QPainter& painter, const QRectF& area) { paintAll(painter, area); },
                 exportTitle_, error);
         }},
    };
    toolBar_->addWidget(exporting::exportButton(this, std::move(targets)));
    toolBar_->addWidget(status_, 1);
}

void ChartTablesFrame::setCharts(QWidget* top, QWidget* bottom, int topShare) {
    charts_->addWidget(top);
    charts_->addWidget(bottom);
    charts_->setStretchFactor(0, 3);
    charts_->setStretchFactor(1, 1);
    charts_->setSizes({topShare, 1000 - topShare});
}

QTableView* ChartTablesFrame::addTable(QAbstractItemModel* model, const QString& title) {
    auto* table = new QTableView(tabs_);
    table->setModel(model);
    table->setSortingEnabled(true);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setAlternatingRowColors(true);
    tabs_->addTab(table, title);
    return table;
}

void ChartTablesFrame::setStatus(const QString& text) {
    status_->setText(text);
}

QString ChartTablesFrame::statusText() const {
    return status_->text();
}

void ChartTablesFrame::loadFailed(const QString& message) {
    loaded_ = true;
    setStatus(tr("Cannot read the profile: %1").arg(message));
    emit loaded();
}

QImage ChartTablesFrame::exportImage() const {
    QImage image(exportSize_, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter painter(&image);
    paintAll(painter, QRectF(0, 0, image.width(), image.height()));
    return image;
}

bool ChartTablesFrame::exportPng(const QString& path) const {
    return exporting::writeImageFile(path, exportImage());
}

bool ChartTablesFrame::exportSvg(const QString& path) const {
    return exporting::writeSvgFile(
        path, exportSize_,
        [this](QPainter& painter, const QRectF& area) { paintAll(painter, area); }, exportTitle_);
}

}  // namespace stallscope
