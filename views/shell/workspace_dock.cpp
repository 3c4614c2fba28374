#include "views/shell/workspace_dock.h"

#include <algorithm>

#include <QAction>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "core/kinds.h"
#include "views/shell/profile_summary.h"

namespace stallscope {
namespace {

constexpr int kNameColumn = 0;
constexpr int kSizeColumn = 1;

QString countText(int count) {
    return count == 1 ? QObject::tr("1 profile") : QObject::tr("%1 profiles").arg(count);
}

QString shortSize(int64_t bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat);
}

}  // namespace

WorkspaceDock::WorkspaceDock(QWidget* parent)
    : QWidget(parent),
      filter_(new QLineEdit(this)),
      stack_(new QStackedWidget(this)),
      tree_(new QTreeWidget(stack_)),
      message_(new QLabel(stack_)),
      openAction_(new QAction(tr("&Open"), this)),
      renameAction_(new QAction(tr("&Rename"), this)),
      deleteAction_(new QAction(tr("&Delete…"), this)),
      compareAction_(new QAction(tr("&Compare Selected"), this)) {
    filter_->setPlaceholderText(tr("Filter profiles"));
    filter_->setClearButtonEnabled(true);
    filter_->setAcceptDrops(false);
    connect(filter_, &QLineEdit::textChanged, this, &WorkspaceDock::applyFilter);

    tree_->setColumnCount(2);
    tree_->setHeaderLabels({tr("Profile"), tr("Size")});
    tree_->header()->setStretchLastSection(false);
    tree_->header()->setSectionResizeMode(kNameColumn, QHeaderView::Stretch);
    tree_->header()->setSectionResizeMode(kSizeColumn, QHeaderView::ResizeToContents);
    tree_->setRootIsDecorated(true);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(false);
    tree_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    // Renaming goes through renameAction_ (F2, context menu); double-click opens the profile.
    tree_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    tree_->setExpandsOnDoubleClick(true);
    tree_->setContextMenuPolicy(Qt::CustomContextMenu);
    tree_->setFrameShape(QFrame::NoFrame);

    message_->setAlignment(Qt::AlignCenter);
    message_->setWordWrap(true);
    message_->setMargin(16);
    message_->setForegroundRole(QPalette::PlaceholderText);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    stack_->addWidget(tree_);
    stack_->addWidget(message_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(filter_);
    layout->addWidget(stack_, 1);

    // Open has no shortcut of its own: Return activates the current item through the view,
    // and a shortcut would steal Return from the rename editor.
    renameAction_->setShortcut(QKeySequence(Qt::Key_F2));
    deleteAction_->setShortcut(QKeySequence::Delete);
    for (QAction* action : {openAction_, renameAction_, deleteAction_}) {
        // Only while the tree has focus, so F2/Delete keep working in other widgets.
        action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        tree_->addAction(action);
    }
    connect(openAction_, &QAction::triggered, this, [this] {
        if (auto profile = currentProfile()) emit profileActivated(*profile);
    });
    connect(renameAction_, &QAction::triggered, this, &WorkspaceDock::startRename);
    connect(deleteAction_, &QAction::triggered, this, [this] {
        // Every highlighted profile (Ctrl+click), else the current one.
        std::vector<ProfileInfo> chosen = selectedProfiles();
        if (chosen.empty())
            if (auto profile = currentProfile()) chosen.push_back(*profile);
        if (!chosen.empty()) emit deleteRequested(chosen);
    });

    connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        if (auto profile = profileOfItem(item)) emit profileActivated(*profile);
    });
    connect(tree_, &QTreeWidget::currentItemChanged, this, &WorkspaceDock::onCurrentItemChanged);
    compareAction_->setEnabled(false);
    compareAction_->setToolTip(tr("Select two profiles of the same kind (Ctrl+click) to compare"));
    connect(tree_, &QTreeWidget::itemSelectionChanged, this, [this] {
        const auto selected = selectedProfiles();
        compareAction_->setEnabled(selected.size() == 2 && selected[0].kind == selected[1].kind);
    });
    connect(compareAction_, &QAction::triggered, this, [this] {
        const auto selected = selectedProfiles();
        if (selected.size() == 2 && selected[0].kind == selected[1].kind)
            emit compareRequested(selected[0], selected[1]);
    });
    connect(tree_, &QTreeWidget::itemChanged, this, &WorkspaceDock::onItemChanged);
    connect(tree_, &QTreeWidget::itemCollapsed, this, [this](QTreeWidgetItem* item) {
        if (!rebuilding_) collapsedKinds_.insert(item->data(kNameColumn, kKindRole).toString());
    });
    connect(tree_, &QTreeWidget::itemExpanded, this, [this](QTreeWidgetItem* item) {
        if (!rebuilding_) collapsedKinds_.remove(item->data(kNameColumn, kKindRole).toString());
    });
    connect(tree_, &QTreeWidget::customContextMenuRequested, this, &WorkspaceDock::showContextMenu);

    updateEmptyState();
    onCurrentItemChanged();
}

WorkspaceDock::~WorkspaceDock() {
    // The tree outlives this body and may report its items going away; nobody is listening.
    tree_->disconnect(this);
    filter_->disconnect(this);
}

const QStringList& WorkspaceDock::kindOrder() {
    static const QStringList order = [] {
        QStringList names;
        for (const ProfileKind& kind : profileKinds())
            names << QString::fromUtf8(kind.name.data(), qsizetype(kind.name.size()));
        return names;
    }();
    return order;
}

void WorkspaceDock::setProfiles(const std::vector<ProfileInfo>& profiles) {
    profiles_.clear();
    order_.clear();
    for (const ProfileInfo& profile : profiles) {
        profiles_.insert(profile.id, profile);
        order_.push_back(profile.id);
    }
    rebuildTree();
}

void WorkspaceDock::showError(const QString& message) {
    profiles_.clear();
    order_.clear();
    rebuildTree();
    message_->setText(message);
    stack_->setCurrentWidget(message_);
}

void WorkspaceDock::setEditingEnabled(bool enabled) {
    editingEnabled_ = enabled;
    onCurrentItemChanged();
}

std::optional<ProfileInfo> WorkspaceDock::currentProfile() const {
    return profileOfItem(tree_->currentItem());
}

std::optional<ProfileInfo> WorkspaceDock::profile(int64_t id) const {
    auto it = profiles_.constFind(id);
    if (it == profiles_.constEnd()) return std::nullopt;
    return *it;
}

QTreeWidgetItem* WorkspaceDock::itemForProfile(int64_t id) const {
    for (int g = 0; g < tree_->topLevelItemCount(); ++g) {
        QTreeWidgetItem* group = tree_->topLevelItem(g);
        for (int c = 0; c < group->childCount(); ++c) {
            QTreeWidgetItem* item = group->child(c);
            if (item->data(kNameColumn, kProfileIdRole).toLongLong() == id) return item;
        }
    }
    return nullptr;
}

void WorkspaceDock::selectProfile(int64_t id) {
    if (QTreeWidgetItem* item = itemForProfile(id)) {
        // Only it: with extended selection the default kept the profiles of closed tabs
        // highlighted, and Delete then named one of several.
        tree_->setCurrentItem(item, 0, QItemSelectionModel::ClearAndSelect);
        tree_->scrollToItem(item);
    }
}

void WorkspaceDock::rebuildTree() {
    const std::optional<ProfileInfo> previous = currentProfile();
    rebuilding_ = true;
    tree_->clear();

    QStringList kinds = kindOrder();
    for (int64_t id : order_) {
        const QString kind = QString::fromStdString(profiles_.value(id).kind);
        if (!kinds.contains(kind)) kinds.append(kind);
    }
    QFont groupFont = tree_->font();
    groupFont.setBold(true);
    for (const QString& kind : kinds) {
        QList<QTreeWidgetItem*> children;
        for (int64_t id : order_) {
            const ProfileInfo& profile = profiles_[id];
            if (QString::fromStdString(profile.kind) != kind) continue;
            auto* item = new QTreeWidgetItem;
            item->setText(kNameColumn, QString::fromStdString(profile.name));
            item->setText(kSizeColumn, shortSize(profile.sourceSize));
            item->setTextAlignment(kSizeColumn, Qt::AlignRight | Qt::AlignVCenter);
            item->setData(kNameColumn, kProfileIdRole, QVariant::fromValue<qint64>(profile.id));
            item->setData(kNameColumn, kKindRole, kind);
            item->setToolTip(kNameColumn,
                             tr("%1\n%2 · imported %3")
                                 .arg(QString::fromStdString(profile.sourcePath),
                                      ProfileDetailsForm::formatSize(profile.sourceSize),
                                      ProfileDetailsForm::formatImportTime(profile.importedAt)));
            item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable);
            children.append(item);
        }
        if (children.isEmpty()) continue;
        auto* group = new QTreeWidgetItem(tree_);
        group->setText(kNameColumn, kind);
        group->setText(kSizeColumn, countText(static_cast<int>(children.size())));
        group->setTextAlignment(kSizeColumn, Qt::AlignRight | Qt::AlignVCenter);
        group->setForeground(kSizeColumn, tree_->palette().brush(QPalette::PlaceholderText));
        group->setFont(kNameColumn, groupFont);
        group->setData(kNameColumn, kKindRole, kind);
        group->setFlags(Qt::ItemIsEnabled);
        group->addChildren(children);
        group->setExpanded(!collapsedKinds_.contains(kind));
    }
    applyFilter();
    rebuilding_ = false;

    if (previous) selectProfile(previous->id);
    updateEmptyState();
    onCurrentItemChanged();
}

void WorkspaceDock::applyFilter() {
    const QString needle = filter_->text().trimmed();
    for (int g = 0; g < tree_->topLevelItemCount(); ++g) {
        QTreeWidgetItem* group = tree_->topLevelItem(g);
        int visible = 0;
        for (int c = 0; c < group->childCount(); ++c) {
            QTreeWidgetItem* item = group->child(c);
            const ProfileInfo& profile =
                profiles_[item->data(kNameColumn, kProfileIdRole).toLongLong()];
            const bool match =
                needle.isEmpty() ||
                QString::fromStdString(profile.name).contains(needle, Qt::CaseInsensitive) ||
                QString::fromStdString(profile.sourcePath).contains(needle, Qt::CaseInsensitive);
            item->setHidden(!match);
            visible += match ? 1 : 0;
        }
        group->setHidden(visible == 0);
    }
}

void WorkspaceDock::updateEmptyState() {
    if (profiles_.isEmpty()) {
        message_->setText(
            tr("No profiles yet.\n\nImport a file with File ▸ Import… (Ctrl+O) or drop files "
               "onto the window."));
        stack_->setCurrentWidget(message_);
    } else {
        stack_->setCurrentWidget(tree_);
    }
    filter_->setEnabled(!profiles_.isEmpty());
}

void WorkspaceDock::showContextMenu(const QPoint& pos) {
    QMenu menu(this);
    if (QTreeWidgetItem* item = tree_->itemAt(pos); item && profileOfItem(item)) {
        if (!item->isSelected()) tree_->setCurrentItem(item);
        menu.addAction(openAction_);
        menu.addAction(compareAction_);
        menu.addSeparator();
        menu.addAction(renameAction_);
        menu.addAction(deleteAction_);
    } else {
        menu.addAction(tr("&Import…"), this, &WorkspaceDock::importRequested);
    }
    menu.exec(tree_->viewport()->mapToGlobal(pos));
}

void WorkspaceDock::onItemChanged(QTreeWidgetItem* item, int column) {
    if (rebuilding_ || column != kNameColumn) return;
    const std::optional<ProfileInfo> profile = profileOfItem(item);
    if (!profile) return;
    const QString newName = item->text(kNameColumn).trimmed();
    const QString oldName = QString::fromStdString(profile->name);
    if (newName == oldName) return;
    // Show the stored name until the workspace confirms the rename and the list reloads.
    rebuilding_ = true;
    item->setText(kNameColumn, oldName);
    rebuilding_ = false;
    if (!newName.isEmpty()) emit renameRequested(profile->id, newName);
}

void WorkspaceDock::onCurrentItemChanged() {
    const std::optional<ProfileInfo> current = currentProfile();
    openAction_->setEnabled(current.has_value());
    renameAction_->setEnabled(current.has_value() && editingEnabled_);
    deleteAction_->setEnabled(current.has_value() && editingEnabled_);
    // Reloads rebuild every item; the final call after a rebuild sends the fresh fields.
    if (!rebuilding_) emit currentProfileChanged(current);
}

void WorkspaceDock::startRename() {
    QTreeWidgetItem* item = tree_->currentItem();
    if (!item || !profileOfItem(item) || !editingEnabled_) return;
    tree_->editItem(item, kNameColumn);
}

std::optional<ProfileInfo> WorkspaceDock::profileOfItem(const QTreeWidgetItem* item) const {
    if (!item) return std::nullopt;
    const QVariant id = item->data(kNameColumn, kProfileIdRole);
    if (!id.isValid()) return std::nullopt;
    return profile(id.toLongLong());
}

std::vector<ProfileInfo> WorkspaceDock::selectedProfiles() const {
    std::vector<ProfileInfo> out;
    for (const QTreeWidgetItem* item : tree_->selectedItems())
        if (auto p = profileOfItem(item)) out.push_back(*p);
    std::sort(out.begin(), out.end(),
              [](const ProfileInfo& x, const ProfileInfo& y) { return x.id < y.id; });
    return out;
}

bool WorkspaceDock::confirmDelete(QWidget* parent, const std::vector<ProfileInfo>& profiles) {
    if (profiles.empty()) return false;
    const ProfileInfo& first = profiles.front();
    QStringList names;
    for (const ProfileInfo& p : profiles) names << "“" + QString::fromStdString(p.name) + "”";
    const QString question =
        profiles.size() == 1
            ? tr("Delete the %1 profile %2?").arg(QString::fromStdString(first.kind), names[0])
            : tr("Delete these %1 profiles: %2?").arg(profiles.size()).arg(names.join(", "));
    QMessageBox box(QMessageBox::Question,
                    profiles.size() == 1 ? tr("Delete Profile") : tr("Delete Profiles"), question,
                    QMessageBox::NoButton, parent);
    box.setInformativeText(
        profiles.size() == 1
            ? tr("Its data is removed from the workspace. The source file is not touched.")
            : tr("Their data is removed from the workspace. The source files are not touched."));
    QPushButton* deleteButton = box.addButton(tr("Delete"), QMessageBox::DestructiveRole);
    QPushButton* cancel = box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(cancel);
    box.exec();
    return box.clickedButton() == deleteButton;
}

}  // namespace stallscope
