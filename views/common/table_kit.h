#pragma once

// Tables of every view: cells that sort by value (numbers as numbers) under one sort role, for
// QTableWidget and for item models; keep the given row order until a header is clicked; export
// what is shown as CSV.

#include <QHeaderView>
#include <QLocale>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QStandardItem>
#include <QStringList>
#include <QTableWidget>
#include <cmath>
#include <vector>

#include "views/common/export.h"
#include "views/common/format.h"

namespace stallscope::tablekit {

inline constexpr int kSortRole = Qt::UserRole;     // number or text the column sorts by
inline constexpr int kCsvRole = Qt::UserRole + 1;  // the cell as CSV writes it
inline constexpr int kRowRole = Qt::UserRole + 2;  // the model row a table row shows

// A QStandardItem cell (item-model tables): shows `text`, sorts by `sortValue` under kSortRole
// (numbers right-aligned and sorted as numbers); read-only.
inline QStandardItem* standardCell(const QString& text, const QVariant& sortValue) {
    auto* item = new QStandardItem(text);
    item->setData(sortValue, kSortRole);
    item->setEditable(false);
    if (sortValue.typeId() == QMetaType::Double)
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

// A proxy that sorts `source` by kSortRole .
inline QSortFilterProxyModel* sortingProxy(QAbstractItemModel* source, QObject* parent) {
    auto* proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(source);
    proxy->setSortRole(kSortRole);
    return proxy;
}

// Sorts by kSortRole: numbers as numbers, text as text (QTableWidgetItem alone compares the
// display text, so "−5.0" would sort after "12.0").
class SortItem : public QTableWidgetItem {
  public:
    SortItem(const QString& text, const QVariant& key, const QString& csv)
        : QTableWidgetItem(text) {
        setData(kSortRole, key);
        setData(kCsvRole, csv);
        if (key.typeId() == QMetaType::Double) setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override {
        const QVariant a = data(kSortRole), b = other.data(kSortRole);
        if (a.typeId() == QMetaType::Double && b.typeId() == QMetaType::Double)
            return a.toDouble() < b.toDouble();
        return a.toString().localeAwareCompare(b.toString()) < 0;
    }
};

// A number; `text` replaces the default "12,345" display.
inline QTableWidgetItem* numberCell(double value, const QString& text = {}) {
    return new SortItem(text.isEmpty() ? format::count(value) : text, value,
                        QString::number(value, 'g', 15));
}
inline QTableWidgetItem* textCell(const QString& text, const QString& csv = {}) {
    return new SortItem(text, text, csv.isNull() ? text : csv);
}
// A missing value ("—"): sorts below every number, empty in CSV.
inline QTableWidgetItem* missingCell() {
    auto* item = new SortItem(QStringLiteral("—"), -1e300, QString());
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}
// A signed change: green when it went down, red when up.
inline QTableWidgetItem* deltaCell(double delta, int decimals = 0) {
    auto* item = numberCell(delta, format::signedCount(delta, decimals));
    if (delta < 0) item->setForeground(QColor(20, 130, 40));
    if (delta > 0) item->setForeground(QColor(190, 40, 30));
    return item;
}
inline QTableWidgetItem* pctCell(double pct) {
    auto* item = numberCell(pct, format::signedPercent(pct));
    if (pct <= -1) item->setForeground(QColor(20, 130, 40));
    if (pct >= 1) item->setForeground(QColor(190, 40, 30));
    return item;
}

// A table's rows as shown (after any sorting), from each cell's kCsvRole.
inline QString tableCsv(const QTableWidget* table, const QString& header) {
    QString out = header + '\n';
    for (int r = 0; r < table->rowCount(); ++r) {
        QStringList fields;
        for (int c = 0; c < table->columnCount(); ++c) {
            const QTableWidgetItem* item = table->item(r, c);
            fields << exporting::csvField(item ? item->data(kCsvRole).toString() : QString());
        }
        out += fields.join(',') + '\n';
    }
    return out;
}

// Fills a table, then enables sorting without re-sorting: rows keep the order given (largest
// change first) until the user clicks a header. (QHeaderView starts at column 0 descending, so
// plain setSortingEnabled(true) would re-sort by the first column.)
inline void fillTable(QTableWidget* table, const std::vector<std::vector<QTableWidgetItem*>>& rows,
                      bool sortable = true) {
    table->setSortingEnabled(false);
    table->clearContents();
    table->setRowCount(int(rows.size()));
    for (int r = 0; r < int(rows.size()); ++r)
        for (int c = 0; c < int(rows[size_t(r)].size()); ++c) table->setItem(r, c, rows[r][c]);
    table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    table->setSortingEnabled(sortable);
    table->resizeColumnsToContents();
}

inline void setUpTable(QTableWidget* table) {
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->horizontalHeader()->setStretchLastSection(false);
    table->verticalHeader()->hide();
}

}  // namespace stallscope::tablekit
