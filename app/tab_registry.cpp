#include "app/tab_registry.h"

#include <QTabWidget>
#include <QVariant>

#include "views/shell/profile_summary.h"

namespace stallscope {
namespace {

constexpr char kProfileIdProperty[] = "stallscopeProfileId";
// A comparison tab's two profiles (A, B): it closes when either is deleted.
constexpr char kComparedIdsProperty[] = "stallscopeComparedIds";
// A tab showing a profile of another workspace: its key (workspace path and profile id).
constexpr char kForeignKeyProperty[] = "stallscopeForeignKey";

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

// A tab's title: the name whole up to 32 characters, else its start and end around "…" (the
// tooltip has it all). Tabs keep their titles and scroll instead of shrinking to "t…".
QString tabTitle(const std::string& name) {
    constexpr qsizetype kLongest = 32;
    const QString whole = text(name);
    if (whole.size() <= kLongest) return whole;
    return whole.left(kLongest / 2 - 1) + QChar(0x2026) + whole.right(kLongest / 2);
}

}  // namespace

TabRegistry::TabRegistry(QTabWidget* tabs, const QString& workspacePath, QObject* parent)
    : QObject(parent), tabs_(tabs), workspacePath_(workspacePath) {}

void TabRegistry::registerView(const QString& kind, ViewFactory factory) {
    registered_.insert(kind, std::move(factory));
}

int TabRegistry::indexOfProfile(qint64 id) const {
    for (int i = 0; i < tabs_->count(); ++i)
        if (profileIdAt(i) == id) return i;
    return -1;
}

std::optional<qint64> TabRegistry::profileIdAt(int index) const {
    const QWidget* page = tabs_->widget(index);
    const QVariant id = page ? page->property(kProfileIdProperty) : QVariant();
    if (!id.isValid()) return std::nullopt;
    return id.toLongLong();
}

QWidget* TabRegistry::openProfile(const ProfileInfo& profile) {
    if (const int existing = indexOfProfile(profile.id); existing >= 0) {
        tabs_->setCurrentIndex(existing);
        return tabs_->widget(existing);
    }
    const QString kind = text(profile.kind);
    QWidget* page = nullptr;
    if (auto factory = registered_.constFind(kind); factory != registered_.constEnd())
        page = (*factory)(profile, workspacePath_);
    else if (const ViewKind* viewKind = findViewKind(profile.kind))
        page = viewKind->createView(profile, workspacePath_);
    if (!page) page = new ProfileSummaryPage(profile);
    page->setProperty(kProfileIdProperty, QVariant::fromValue<qint64>(profile.id));
    emit viewCreated(page, profile);
    const int index = tabs_->addTab(page, tabTitle(profile.name));
    tabs_->setTabToolTip(index,
                         tr("%1 (%2)\n%3").arg(text(profile.name), kind, text(profile.sourcePath)));
    tabs_->setCurrentIndex(index);
    emit countChanged();
    return page;
}

QWidget* TabRegistry::openComparison(const ProfileInfo& a, const ProfileInfo& b) {
    if (a.kind != b.kind) {
        emit failed(tr("Compare needs two profiles of the same kind"));
        return nullptr;
    }
    // The same pair again focuses its tab (Compare clicked twice opened two).
    const QVariantList ids{QVariant::fromValue<qint64>(a.id), QVariant::fromValue<qint64>(b.id)};
    for (int i = 0; i < tabs_->count(); ++i)
        if (tabs_->widget(i)->property(kComparedIdsProperty).toList() == ids) {
            tabs_->setCurrentIndex(i);
            return tabs_->widget(i);
        }
    const ViewKind* kind = findViewKind(a.kind);
    QWidget* view =
        kind && kind->createComparison ? kind->createComparison(a, b, workspacePath_) : nullptr;
    if (!view) {
        emit failed(tr("%1 profiles have no side-by-side comparison").arg(text(a.kind)));
        return nullptr;
    }
    view->setProperty(kComparedIdsProperty, ids);
    const int index = tabs_->addTab(view, tabTitle(b.name) + " vs " + tabTitle(a.name));
    tabs_->setTabToolTip(index, tr("B: %1\nA: %2").arg(text(b.name), text(a.name)));
    tabs_->setCurrentIndex(index);
    emit countChanged();
    return view;
}

QWidget* TabRegistry::openForeign(const QString& key, const QString& title, const QString& toolTip,
                                  const std::function<QWidget*()>& create) {
    for (int i = 0; i < tabs_->count(); ++i)
        if (tabs_->widget(i)->property(kForeignKeyProperty).toString() == key) {
            tabs_->setCurrentIndex(i);
            return tabs_->widget(i);
        }
    QWidget* view = create();
    view->setProperty(kForeignKeyProperty, key);
    const int index = tabs_->addTab(view, title);
    tabs_->setTabToolTip(index, toolTip);
    tabs_->setCurrentIndex(index);
    emit countChanged();
    return view;
}

void TabRegistry::closeTab(int index) {
    QWidget* page = tabs_->widget(index);
    if (!page) return;
    tabs_->removeTab(index);
    page->deleteLater();
    emit countChanged();
}

void TabRegistry::closeAll() {
    while (tabs_->count() > 0) closeTab(0);
}

void TabRegistry::followProfiles(const ProfileLookup& lookup) {
    for (int i = tabs_->count() - 1; i >= 0; --i) {
        QWidget* page = tabs_->widget(i);
        const std::optional<qint64> id = profileIdAt(i);
        if (!id) {
            // A comparison (no single profile): it keeps its title while both profiles exist.
            const QVariantList compared = page->property(kComparedIdsProperty).toList();
            for (const QVariant& comparedId : compared)
                if (!lookup(comparedId.toLongLong())) {
                    closeTab(i);
                    break;
                }
            continue;
        }
        const std::optional<ProfileInfo> profile = lookup(*id);
        if (!profile) {
            closeTab(i);
            continue;
        }
        tabs_->setTabText(i, tabTitle(profile->name));
        if (auto* summary = qobject_cast<ProfileSummaryPage*>(page)) summary->setProfile(*profile);
    }
}

}  // namespace stallscope
