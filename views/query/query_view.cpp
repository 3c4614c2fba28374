#include "views/query/query_view.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QShortcut>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <chrono>
#include <map>

#include "core/workspace.h"
#include "views/common/export.h"
#include "views/common/format.h"

namespace stallscope {

namespace {

constexpr int kHistory = 50;

struct Example {
    const char* title;
    const char* sql;
};
const Example kExamples[] = {
    {"Top slices by total time",
     "SELECT profile_id, name, count(*) AS n, sum(dur) AS total\nFROM slice WHERE dur > 0\n"
     "GROUP BY profile_id, name ORDER BY total DESC LIMIT 50"},
    {"Steps slower than their profile's median",
     "SELECT s.profile_id, s.id, s.name, s.ts, s.dur, s.step_time FROM step s\n"
     "WHERE s.step_time > (SELECT m.step_time FROM step m WHERE m.profile_id = s.profile_id\n"
     "  ORDER BY m.step_time LIMIT 1 OFFSET\n"
     "  (SELECT count(*) / 2 FROM step c WHERE c.profile_id = s.profile_id))\n"
     "ORDER BY s.step_time DESC"},
    {"Longest kernels and the calls that launched them",
     "SELECT si.profile_id, so.name AS launched_by, si.name AS kernel, si.ts, si.dur\n"
     "FROM flow f JOIN slice so ON so.id = f.slice_out JOIN slice si ON si.id = f.slice_in\n"
     "ORDER BY si.dur DESC LIMIT 100"},
    {"Slices running across each step's end",
     "SELECT st.profile_id, st.name AS step, s.name, s.ts, s.dur FROM step st\n"
     "JOIN slice s ON s.profile_id = st.profile_id AND s.ts < st.ts + st.dur\n"
     "  AND s.ts + s.dur > st.ts + st.dur AND s.ts >= st.ts\nORDER BY s.dur DESC LIMIT 100"},
    {"Slices overlapping each transfer",
     "SELECT t.profile_id, t.name AS transfer, s.name, s.ts, s.dur FROM transfer t\n"
     "JOIN slice s ON s.profile_id = t.profile_id AND s.ts < t.complete_ts\n"
     "  AND s.ts + s.dur > t.transfer_start_ts AND s.ts >= t.issue_ts\n"
     "ORDER BY s.dur DESC LIMIT 100"},
    {"Critical path time by kind",
     "SELECT profile_id, kind, count(*) AS segments, sum(dur) AS total\n"
     "FROM critical_path GROUP BY profile_id, kind ORDER BY profile_id, total DESC"},
};

QString textOf(const query::Value& v) {
    switch (v.type) {
        case query::Value::Type::Integer:
            return QString::number(v.integer);
        case query::Value::Type::Real:
            return QString::number(v.real, 'g', 12);
        case query::Value::Type::Text:
            return QString::fromStdString(v.text);
        default:
            return {};
    }
}

struct CapReached {};

}  // namespace

void QueryResultModel::reset(std::shared_ptr<QueryRows> rows) {
    beginResetModel();
    source_ = std::move(rows);
    columns_.clear();
    received_.clear();
    shown_ = 0;
    endResetModel();
}

void QueryResultModel::take() {
    if (!source_) return;
    std::vector<std::vector<query::Value>> fresh;
    std::vector<std::string> columns;
    {
        std::lock_guard lock(source_->mutex);
        fresh.swap(source_->rows);
        if (columns_.empty()) columns = source_->columns;
    }
    if (!columns.empty()) {
        beginResetModel();
        for (const std::string& c : columns) columns_.push_back(QString::fromStdString(c));
        endResetModel();
    }
    for (auto& row : fresh) received_.push_back(std::move(row));
    if (shown_ < kPage && canFetchMore({})) fetchMore({});  // the first page at once
}

int QueryResultModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : shown_;
}

int QueryResultModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(columns_.size());
}

QVariant QueryResultModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= shown_) return {};
    const query::Value& v = value(index.row(), index.column());
    if (role == Qt::DisplayRole) return textOf(v);
    if (role == Qt::TextAlignmentRole &&
        (v.type == query::Value::Type::Integer || v.type == query::Value::Type::Real))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant QueryResultModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole) return {};
    if (orientation == Qt::Vertical) return section + 1;
    return section < int(columns_.size()) ? columns_[size_t(section)] : QVariant();
}

bool QueryResultModel::canFetchMore(const QModelIndex& parent) const {
    return !parent.isValid() && size_t(shown_) < received_.size();
}

void QueryResultModel::fetchMore(const QModelIndex& parent) {
    if (!canFetchMore(parent)) return;
    const int more = int(std::min(received_.size() - size_t(shown_), size_t(kPage)));
    beginInsertRows({}, shown_, shown_ + more - 1);
    shown_ += more;
    endInsertRows();
}

int QueryResultModel::column(const QString& name) const {
    for (size_t c = 0; c < columns_.size(); ++c)
        if (columns_[c] == name) return int(c);
    return -1;
}

const query::Value& QueryResultModel::value(int row, int column) const {
    return received_[size_t(row)][size_t(column)];
}

QString QueryResultModel::csv() const {
    QString out = exporting::csvRow(QStringList(columns_.begin(), columns_.end())) + '\n';
    for (const auto& row : received_) {
        QStringList fields;
        for (const query::Value& v : row) fields << textOf(v);
        out += exporting::csvRow(fields) + '\n';
    }
    return out;
}

QueryView::QueryView(const QString& workspacePath, QWidget* parent)
    : QWidget(parent), workspacePath_(workspacePath), job_(this, [this](const QString& error) {
          takeRows();
          showRunning(false);
          status_->setText(tr("<span style='color:#b02a20'>%1</span>").arg(error.toHtmlEscaped()));
          emit finished();
      }) {
    editor_ = new QPlainTextEdit;
    editor_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    editor_->setPlaceholderText(
        tr("SELECT name, count(*), sum(dur) FROM slice GROUP BY name "
           "ORDER BY 3 DESC   (Ctrl+Enter runs; tables in docs/sql.md)"));
    examples_ = new QComboBox;
    examples_->addItem(tr("Examples…"));
    for (const Example& e : kExamples) examples_->addItem(tr(e.title), QString(e.sql));
    history_ = new QComboBox;
    history_->addItem(tr("History…"));
    for (const QString& sql : QSettings().value("query/history").toStringList())
        history_->addItem(sql.simplified().left(80), sql);
    for (QComboBox* box : {examples_, history_})
        connect(box, &QComboBox::activated, this, [this, box](int index) {
            if (index > 0) setSql(box->itemData(index).toString());
            box->setCurrentIndex(0);
        });
    runButton_ = new QPushButton(tr("Run"));
    runButton_->setToolTip(tr("Run the query (Ctrl+Enter)"));
    cancelButton_ = new QPushButton(tr("Cancel"));
    cancelButton_->setEnabled(false);
    trackButton_ = new QPushButton(tr("Show as track"));
    trackButton_->setToolTip(
        tr("Pin the rows (ts, dur, profile_id; labelled by name) as a track "
           "on their profile's timeline"));
    trackButton_->setEnabled(false);
    status_ = new QLabel(tr("Read-only SQL over every profile of the workspace."));
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    model_ = new QueryResultModel;
    model_->setParent(this);
    table_ = new QTableView;
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->setToolTip(
        tr("Double-click a row with ts (and dur, profile_id) to show it on the "
           "timeline"));
    poll_ = new QTimer(this);
    poll_->setInterval(100);
    connect(poll_, &QTimer::timeout, this, &QueryView::takeRows);

    auto* bar = new QHBoxLayout;
    bar->addWidget(runButton_);
    bar->addWidget(cancelButton_);
    bar->addWidget(trackButton_);
    bar->addWidget(examples_);
    bar->addWidget(history_, 1);
    bar->addWidget(exporting::exportButton(
        this, {{tr("Results as CSV…"), exporting::Format::Csv, "query.csv",
                [this](const QString& path, QString* error) {
                    return exporting::writeTextFile(path, model_->csv(), error);
                }}}));
    auto* top = new QWidget;
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(editor_, 1);
    topLayout->addLayout(bar);
    topLayout->addWidget(status_);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(top);
    split->addWidget(table_);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(runButton_, &QPushButton::clicked, this, &QueryView::run);
    connect(cancelButton_, &QPushButton::clicked, this, &QueryView::cancel);
    connect(trackButton_, &QPushButton::clicked, this, [this] {
        QString why;
        const std::vector<TrackRows> groups = trackRows(&why);
        if (groups.empty()) {
            status_->setText(why);
            return;
        }
        for (const TrackRows& g : groups) emit trackRequested(g.profile, trackTitle(), g.items);
    });
    for (const QKeySequence& keys :
         {QKeySequence(Qt::CTRL | Qt::Key_Return), QKeySequence(Qt::CTRL | Qt::Key_Enter)}) {
        auto* shortcut = new QShortcut(keys, this);
        shortcut->setContext(Qt::WidgetWithChildrenShortcut);
        connect(shortcut, &QShortcut::activated, this, &QueryView::run);
    }
    connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        if (const auto time = timeOfRow(index.row()))
            emit timeRequested(time->profile, time->ts, time->ts + std::max<qint64>(time->dur, 1));
    });
}

// The rows that arrived; columns sized to the first ones (later rows keep that width).
void QueryView::takeRows() {
    model_->take();
    if (!sized_ && model_->rowCount() > 0) {
        table_->resizeColumnsToContents();
        sized_ = true;
    }
}

void QueryView::setSql(const QString& sql) {
    editor_->setPlainText(sql);
}

void QueryView::rememberQuery(const QString& sql) {
    QStringList history = QSettings().value("query/history").toStringList();
    history.removeAll(sql);
    history.prepend(sql);
    while (history.size() > kHistory) history.removeLast();
    QSettings().setValue("query/history", history);
    while (history_->count() > 1) history_->removeItem(1);
    for (const QString& s : history) history_->addItem(s.simplified().left(80), s);
}

void QueryView::showRunning(bool running) {
    running_ = running;
    runButton_->setEnabled(!running);
    cancelButton_->setEnabled(running);
    trackButton_->setEnabled(!running && model_->column("ts") >= 0 && model_->column("dur") >= 0);
    if (!running) poll_->stop();
}

void QueryView::run() {
    const QString sql = editor_->toPlainText().trimmed();
    if (sql.isEmpty() || running_) return;
    rememberQuery(sql);
    auto rows = std::make_shared<QueryRows>();
    model_->reset(rows);
    sized_ = false;
    progress_ = std::make_shared<Progress>();
    showRunning(true);
    status_->setText(tr("Running…"));
    poll_->start();
    const auto started = std::chrono::steady_clock::now();
    job_.start(
        [path = workspacePath_.toStdString(), text = sql.toStdString(), rows,
         progress = progress_]() {
            const auto ws = Workspace::open(path, Workspace::Mode::ReadOnly);
            size_t count = 0;
            try {
                query::run(
                    *ws, text,
                    [&](const std::vector<std::string>& columns) {
                        std::lock_guard lock(rows->mutex);
                        rows->columns = columns;
                    },
                    [&](const std::vector<query::Value>& row) {
                        if (count == kRowCap) throw CapReached{};
                        ++count;
                        std::lock_guard lock(rows->mutex);
                        rows->rows.push_back(row);
                    },
                    progress.get());
            } catch (const CapReached&) {
                std::lock_guard lock(rows->mutex);
                rows->truncated = true;
            }
            return count;
        },
        [this, rows, started](size_t count) {
            takeRows();
            showRunning(false);
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            status_->setText(rows->truncated
                                 ? tr("The first %1 rows (%2 s); the rest was not kept: "
                                      "narrow the query or use stallscope query --csv")
                                       .arg(format::count(double(count)))
                                       .arg(seconds, 0, 'f', 2)
                                 : tr("%1 rows in %2 s")
                                       .arg(format::count(double(count)))
                                       .arg(seconds, 0, 'f', 2));
            emit finished();
        });
}

void QueryView::cancel() {
    if (progress_) progress_->cancel();
}

QString QueryView::trackTitle() const {
    const QString sql = editor_->toPlainText().simplified();
    return tr("Query: %1").arg(sql.size() > 40 ? sql.left(39) + QChar(0x2026) : sql);
}

std::vector<QueryView::TrackRows> QueryView::trackRows(QString* why) const {
    const int ts = model_->column("ts"), dur = model_->column("dur"),
              profile = model_->column("profile_id");
    int label = model_->column("name");
    for (int c = 0; label < 0 && c < model_->columnCount(); ++c)
        if (model_->received() > 0 && model_->value(0, c).type == query::Value::Type::Text)
            label = c;
    if (ts < 0 || dur < 0 || profile < 0) {
        if (why) *why = tr("A track needs ts, dur and profile_id columns in the result");
        return {};
    }
    std::map<qint64, TrackRows> byProfile;
    for (size_t r = 0; r < model_->received(); ++r) {
        const query::Value &t = model_->value(int(r), ts), &d = model_->value(int(r), dur),
                           &p = model_->value(int(r), profile);
        if (t.type != query::Value::Type::Integer || p.type != query::Value::Type::Integer)
            continue;
        TrackRows& group = byProfile[p.integer];
        group.profile = p.integer;
        group.items.emplace_back(
            t.integer, d.type == query::Value::Type::Integer ? std::max<int64_t>(d.integer, 0) : 0,
            label >= 0 ? textOf(model_->value(int(r), label)) : QString::number(r + 1));
    }
    std::vector<TrackRows> out;
    for (auto& [id, group] : byProfile) out.push_back(std::move(group));
    if (out.empty() && why) *why = tr("No row has a whole-number ts and profile_id");
    return out;
}

std::optional<QueryView::RowTime> QueryView::timeOfRow(int row) const {
    const int ts = model_->column("ts"), dur = model_->column("dur"),
              profile = model_->column("profile_id");
    if (ts < 0 || row < 0 || row >= model_->rowCount()) return std::nullopt;
    const query::Value& t = model_->value(row, ts);
    if (t.type != query::Value::Type::Integer) return std::nullopt;
    RowTime out;
    out.ts = t.integer;
    if (dur >= 0 && model_->value(row, dur).type == query::Value::Type::Integer)
        out.dur = model_->value(row, dur).integer;
    if (profile >= 0 && model_->value(row, profile).type == query::Value::Type::Integer)
        out.profile = model_->value(row, profile).integer;
    return out;
}

}  // namespace stallscope
