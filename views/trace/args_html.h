#pragma once

// A slice's arguments for the details pane: a row per key, nested objects as dotted keys
// (Perfetto's args view: "n.k"), arrays of scalars on one line ("[1, 2, 3]", the first 16 then
// "… 4 more"), arrays of objects as indexed keys ("l[0].x"), numbers as written (whole numbers
// below 10^15 without an exponent).

#include <QJsonObject>
#include <QString>

namespace stallscope {

QString argumentsHtml(const QJsonObject& args);

}  // namespace stallscope
