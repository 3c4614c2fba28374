#pragma once

// The home of the analyses of a profile (steps, transfers, hosts, ...). Each analysis declares
// here what it is: its name, the version of its result, what it reads, when it runs (at import
// or on the first request), and how its result is derived, encoded and decoded. The import
// service, the command line and the views iterate the registry (registry.h) and obtain results
// through one cache (cache.h), the only code that stores a result.
//
// Adding an analysis: a class deriving from Typed<Result> in the analysis's own folder, one line
// in core/analysis/registry.cpp, and its panel or command (docs/design.md, "Rooms").

#include <QJsonObject>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/workspace.h"

namespace stallscope::trace {
class TraceStore;
}

namespace stallscope::analysis {

enum class RunAt {
    Import,        // derived and stored by the import that creates the profile
    FirstRequest,  // derived and stored when first asked for
};

// A result held without its type; the analysis that made it knows the type.
using Result = std::shared_ptr<const void>;

// A result encoded for storage, with what the import notes say of it.
struct Encoded {
    std::string payload;
    QJsonObject note;  // figures for the profile's metadata (transfers: count, model error)
};

class Definition {
  public:
    virtual ~Definition() = default;

    // The key it is stored and asked for by ("steps"); also its `stallscope` command's noun.
    virtual std::string_view name() const = 0;
    // Of the result and its stored form: a stored result of an older version is derived again.
    virtual int version() const = 0;
    // What it reads, for docs and `stallscope analyses`.
    virtual std::string_view reads() const = 0;

    // Whether the profile has what it needs (a profile it does not apply to has no result).
    virtual bool appliesTo(const trace::TraceStore& store) const = 0;
    // When it runs for this profile (may depend on the profile: a cost rule).
    virtual RunAt runAt(const trace::TraceStore& store) const = 0;

    virtual Result derive(const trace::TraceStore& store) const = 0;
    virtual std::string encode(const void* result) const = 0;
    // Throws Failure when the payload is malformed or of a form this build cannot read.
    virtual Result decode(std::string_view payload) const = 0;
    // What the import stores: derive() then encode() by default; an analysis may do both at
    // once (transfers encode an XProf profile's devices without merging them first). The
    // payload must equal encode(derive(store)).
    virtual Encoded deriveForStorage(const trace::TraceStore& store) const;
    // The import note's figures for a result.
    virtual QJsonObject noteOf(const void* result) const;
    // What the import notes when it leaves the analysis to the first request (empty: nothing).
    virtual QJsonObject deferredNote(const trace::TraceStore& store) const;
};

// An analysis whose result is a T: derive, encode and decode in T, the erasure done here.
template <class T>
class Typed : public Definition {
  public:
    using ResultType = T;
    virtual T compute(const trace::TraceStore& store) const = 0;
    virtual std::string encodeResult(const T& result) const = 0;
    virtual T decodeResult(std::string_view payload) const = 0;
    virtual QJsonObject noteOfResult(const T&) const { return {}; }

    Result derive(const trace::TraceStore& store) const override {
        return std::make_shared<const T>(compute(store));
    }
    std::string encode(const void* result) const override {
        return encodeResult(*static_cast<const T*>(result));
    }
    Result decode(std::string_view payload) const override {
        return std::make_shared<const T>(decodeResult(payload));
    }
    QJsonObject noteOf(const void* result) const override {
        return noteOfResult(*static_cast<const T*>(result));
    }
    static std::shared_ptr<const T> cast(const Result& result) {
        return std::static_pointer_cast<const T>(result);
    }
};

}  // namespace stallscope::analysis
