#include "views/trace/args_html.h"

#include <QJsonArray>
#include <cmath>
#include <utility>
#include <vector>

namespace stallscope {

namespace {

constexpr qsizetype kInlineItems = 16;

QString scalarText(const QJsonValue& v) {
    if (v.isDouble()) {
        const double d = v.toDouble();
        if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 1e15)
            return QString::number(qint64(d));
        return QString::number(d, 'g', 10);
    }
    if (v.isBool()) return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    if (v.isNull()) return QStringLiteral("null");
    return v.toString();
}

bool allScalars(const QJsonArray& a) {
    for (const QJsonValue& v : a)
        if (v.isArray() || v.isObject()) return false;
    return true;
}

void flatten(const QString& key, const QJsonValue& v,
             std::vector<std::pair<QString, QString>>& rows) {
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            flatten(key.isEmpty() ? it.key() : key + '.' + it.key(), it.value(), rows);
        return;
    }
    if (v.isArray()) {
        const QJsonArray a = v.toArray();
        if (allScalars(a)) {
            QStringList items;
            for (qsizetype i = 0; i < a.size() && i < kInlineItems; ++i) items << scalarText(a[i]);
            if (a.size() > kInlineItems)
                items << QObject::tr("… %1 more").arg(a.size() - kInlineItems);
            rows.emplace_back(key, '[' + items.join(QStringLiteral(", ")) + ']');
            return;
        }
        for (qsizetype i = 0; i < a.size(); ++i)
            flatten(key + '[' + QString::number(i) + ']', a[i], rows);
        return;
    }
    rows.emplace_back(key, scalarText(v));
}

}  // namespace

QString argumentsHtml(const QJsonObject& args) {
    std::vector<std::pair<QString, QString>> rows;
    flatten({}, args, rows);
    QString html = QStringLiteral("<table cellspacing=0 cellpadding=2>");
    for (const auto& [key, value] : rows)
        html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                    .arg(key.toHtmlEscaped(), value.toHtmlEscaped());
    return html + QStringLiteral("</table>");
}

}  // namespace stallscope
