// The protobuf wire reader (importers/common/proto_wire.h): its varint, tag, length and group
// rules one by one, then a differential test against the generated parser on random and
// mutated messages of the real schemas (XProf's XSpace, Chakra's Node). A schema-driven walk
// over the reader rebuilds the message through reflection; under Rules::Protobuf it must accept
// exactly what ParseFromString accepts, with the same field values. Under Rules::Plain (XSpace)
// every disagreement must be one of the rules that differ.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <QtTest>
#include <bit>
#include <map>
#include <random>
#include <string>

#include "et_def.pb.h"
#include "importers/common/proto_wire.h"
#include "xplane.pb.h"

using namespace stallscope;
using proto_wire::Field;
using proto_wire::Malformed;
using proto_wire::Problem;
using proto_wire::Rules;
using proto_wire::VarintRead;
namespace pb = google::protobuf;

namespace {

std::string bytes(std::initializer_list<int> values) {
    std::string out;
    for (int v : values) out.push_back(char(v));
    return out;
}

// Every field of a message read with rules R; the problem when it throws.
template <Rules R>
std::optional<Problem> problemOf(std::string_view data, Malformed* error = nullptr) {
    try {
        proto_wire::Reader<R> reader(data);
        Field f;
        while (reader.next(f)) {
        }
        return std::nullopt;
    } catch (const Malformed& m) {
        if (error) *error = m;
        return m.problem;
    }
}

// --- the schema-driven walk ----------------------------------------------------------------------

uint32_t wireTypeOf(const pb::FieldDescriptor* fd) {
    using T = pb::FieldDescriptor;
    switch (fd->type()) {
        case T::TYPE_DOUBLE:
        case T::TYPE_FIXED64:
        case T::TYPE_SFIXED64:
            return proto_wire::kFixed64;
        case T::TYPE_FLOAT:
        case T::TYPE_FIXED32:
        case T::TYPE_SFIXED32:
            return proto_wire::kFixed32;
        case T::TYPE_STRING:
        case T::TYPE_BYTES:
        case T::TYPE_MESSAGE:
            return proto_wire::kLength;
        case T::TYPE_GROUP:
            return proto_wire::kStartGroup;
        default:
            return proto_wire::kVarint;
    }
}

// Stores one scalar value (its varint or fixed bits) as protobuf converts it for the field's
// type; strings are checked for UTF-8 when `utf8` (proto3 does, XSpace's reader does not).
void storeScalar(pb::Message& m, const pb::FieldDescriptor* fd, uint64_t v, std::string_view s,
                 bool utf8) {
    const pb::Reflection* r = m.GetReflection();
    const bool rep = fd->is_repeated();
    using T = pb::FieldDescriptor;
    switch (fd->type()) {
        case T::TYPE_INT32:
        case T::TYPE_SFIXED32:
        case T::TYPE_SINT32: {
            const int32_t x = fd->type() == T::TYPE_SINT32 ? proto_wire::zigzag32(v) : int32_t(v);
            rep ? r->AddInt32(&m, fd, x) : r->SetInt32(&m, fd, x);
            break;
        }
        case T::TYPE_INT64:
        case T::TYPE_SFIXED64:
        case T::TYPE_SINT64: {
            const int64_t x = fd->type() == T::TYPE_SINT64 ? proto_wire::zigzag64(v) : int64_t(v);
            rep ? r->AddInt64(&m, fd, x) : r->SetInt64(&m, fd, x);
            break;
        }
        case T::TYPE_UINT32:
        case T::TYPE_FIXED32:
            rep ? r->AddUInt32(&m, fd, uint32_t(v)) : r->SetUInt32(&m, fd, uint32_t(v));
            break;
        case T::TYPE_UINT64:
        case T::TYPE_FIXED64:
            rep ? r->AddUInt64(&m, fd, v) : r->SetUInt64(&m, fd, v);
            break;
        case T::TYPE_BOOL:
            rep ? r->AddBool(&m, fd, v != 0) : r->SetBool(&m, fd, v != 0);
            break;
        case T::TYPE_ENUM:
            rep ? r->AddEnumValue(&m, fd, int32_t(v)) : r->SetEnumValue(&m, fd, int32_t(v));
            break;
        case T::TYPE_FLOAT: {
            const float x = std::bit_cast<float>(uint32_t(v));
            rep ? r->AddFloat(&m, fd, x) : r->SetFloat(&m, fd, x);
            break;
        }
        case T::TYPE_DOUBLE: {
            const double x = std::bit_cast<double>(v);
            rep ? r->AddDouble(&m, fd, x) : r->SetDouble(&m, fd, x);
            break;
        }
        case T::TYPE_STRING:
            if (utf8 && !proto_wire::validUtf8(s)) throw Malformed{Problem::InvalidUtf8, 0};
            [[fallthrough]];
        case T::TYPE_BYTES:
            rep ? r->AddString(&m, fd, std::string(s)) : r->SetString(&m, fd, std::string(s));
            break;
        default:
            break;
    }
}

template <Rules R>
void walk(std::string_view data, pb::Message& m, bool utf8, int depth);

// A map entry replaces the value of its key (protobuf parses it as a message, then assigns).
template <Rules R>
void walkMapEntry(std::string_view data, pb::Message& m, const pb::FieldDescriptor* fd, bool utf8,
                  int depth) {
    std::unique_ptr<pb::Message> entry(
        pb::MessageFactory::generated_factory()->GetPrototype(fd->message_type())->New());
    walk<R>(data, *entry, utf8, depth);
    const pb::FieldDescriptor* key = fd->message_type()->FindFieldByNumber(1);
    const pb::Reflection* r = m.GetReflection();
    for (int i = 0; i < r->FieldSize(m, fd); ++i) {
        pb::Message* existing = r->MutableRepeatedMessage(&m, fd, i);
        if (existing->GetReflection()->GetInt64(*existing, key) ==
            entry->GetReflection()->GetInt64(*entry, key)) {
            existing->CopyFrom(*entry);
            return;
        }
    }
    r->AddMessage(&m, fd)->CopyFrom(*entry);
}

// Rebuilds `m` from its wire bytes with rules R: known fields of the schema's wire type set as
// protobuf sets them (last scalar wins, messages merge, repeated append, packed or not),
// anything else skipped as an unknown field. Throws Malformed.
template <Rules R>
void walk(std::string_view data, pb::Message& m, bool utf8, int depth) {
    if (depth > proto_wire::kMaxDepth) throw Malformed{Problem::TooDeep, 0};
    const pb::Descriptor* d = m.GetDescriptor();
    const pb::Reflection* r = m.GetReflection();
    proto_wire::Reader<R> reader(data, 0, depth);
    Field f;
    while (reader.next(f)) {
        const pb::FieldDescriptor* fd = d->FindFieldByNumber(int(f.number));
        if (!fd) continue;
        if (fd->is_packable() && f.wireType == proto_wire::kLength) {
            proto_wire::Reader<R> packed(f.bytes, 0, depth);
            const uint32_t element = wireTypeOf(fd);
            while (!packed.done()) {
                const uint64_t v = element == proto_wire::kFixed64   ? packed.fixed64()
                                   : element == proto_wire::kFixed32 ? packed.fixed32()
                                                                     : packed.varint();
                storeScalar(m, fd, v, {}, utf8);
            }
            continue;
        }
        if (f.wireType != wireTypeOf(fd)) continue;  // protobuf keeps it as an unknown field
        if (fd->is_map()) {
            walkMapEntry<R>(f.bytes, m, fd, utf8, depth + 1);
        } else if (fd->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
            pb::Message* sub =
                fd->is_repeated() ? r->AddMessage(&m, fd) : r->MutableMessage(&m, fd);
            walk<R>(f.bytes, *sub, utf8, depth + 1);
        } else {
            storeScalar(m, fd, f.value, f.bytes, utf8);
        }
    }
}

template <Rules R>
std::optional<Problem> walkProblem(std::string_view data, pb::Message& m, bool utf8) {
    try {
        walk<R>(data, m, utf8, 0);
        return std::nullopt;
    } catch (const Malformed& error) {
        return error.problem;
    }
}

// --- random messages -----------------------------------------------------------------------------

class Generator {
  public:
    explicit Generator(uint64_t seed) : rng_(seed) {}

    void fill(pb::Message& m, int depth) {
        const pb::Descriptor* d = m.GetDescriptor();
        const pb::Reflection* r = m.GetReflection();
        for (int i = 0; i < d->field_count(); ++i) {
            const pb::FieldDescriptor* fd = d->field(i);
            if (pick(3) == 0) continue;
            const int count = fd->is_repeated() ? int(pick(4)) : 1;
            for (int k = 0; k < count; ++k) {
                if (fd->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
                    if (depth >= 4) break;
                    pb::Message* sub =
                        fd->is_repeated() ? r->AddMessage(&m, fd) : r->MutableMessage(&m, fd);
                    fill(*sub, depth + 1);
                } else if (fd->type() == pb::FieldDescriptor::TYPE_STRING) {
                    storeScalar(m, fd, 0, text(), false);
                } else if (fd->type() == pb::FieldDescriptor::TYPE_BYTES) {
                    storeScalar(m, fd, 0, raw(), false);
                } else {
                    storeScalar(m, fd, number(), {}, false);
                }
            }
        }
    }

    // One of: bit flips, a truncation, inserted bytes (random, or wire-format trouble: an
    // overlong varint, a group, field 0, a ten-byte varint, a long tag or length, invalid
    // UTF-8), a deleted stretch.
    std::string mutate(std::string s) {
        switch (pick(5)) {
            case 0:
                for (uint64_t n = 1 + pick(4); n > 0 && !s.empty(); --n)
                    s[pick(s.size())] ^= char(1 << pick(8));
                break;
            case 1:
                s.resize(pick(s.size() + 1));
                break;
            case 2: {
                std::string insert;
                for (uint64_t n = 1 + pick(8); n > 0; --n) insert.push_back(char(pick(256)));
                s.insert(pick(s.size() + 1), insert);
                break;
            }
            case 3: {
                static const std::string kTrouble[] = {
                    bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}),  // overlong
                    bytes({0x7b}),                                      // field 15 group start
                    bytes({0x7b, 0x08, 0x01, 0x7c}),                    // a whole group
                    bytes({0x7c}),                                      // group end alone
                    bytes({0x00}),                                      // field 0
                    bytes({0x02, 0x00}),                                // field 0, empty bytes
                    bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}),
                    bytes({0x88, 0x80, 0x80, 0x80, 0x70, 0x05}),  // 5-byte tag, high bits
                    bytes({0x12, 0x80, 0x80, 0x80, 0x80, 0x08}),  // length 2^31
                    bytes({0x12, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x41}),  // 6-byte length
                    bytes({0x0e}),                                            // wire type 6
                    bytes({0x12, 0x02, 0xc0, 0x80}),  // overlong UTF-8 in field 2
                };
                // Half of the time between two top-level fields, where only the trouble
                // itself can make the message invalid.
                const size_t at = pick(2) ? pick(s.size() + 1) : pick(2) ? s.size() : 0;
                s.insert(at, kTrouble[pick(std::size(kTrouble))]);
                break;
            }
            default:
                if (!s.empty()) {
                    const size_t at = pick(s.size());
                    s.erase(at, 1 + pick(16));
                }
        }
        return s;
    }

    std::string noise() {
        std::string s;
        for (uint64_t n = pick(40); n > 0; --n) s.push_back(char(pick(256)));
        return s;
    }

    uint64_t pick(uint64_t n) { return rng_() % n; }

  private:
    uint64_t number() {
        switch (pick(6)) {
            case 0:
                return 0;
            case 1:
                return pick(128);
            case 2:
                return uint64_t(-int64_t(pick(1000)));
            case 3:
                return pick(2) ? UINT64_MAX : uint64_t(INT64_MIN);
            case 4:
                return rng_() >> pick(64);
            default:
                return rng_();
        }
    }
    std::string text() {
        static const char* const kPieces[] = {"a", "op", " ", "é", "漢", "😀", "\"", "\n"};
        std::string s;
        for (uint64_t n = pick(6); n > 0; --n) s += kPieces[pick(std::size(kPieces))];
        return s;
    }
    std::string raw() {
        std::string s;
        for (uint64_t n = pick(10); n > 0; --n) s.push_back(char(pick(256)));
        return s;
    }
    std::mt19937_64 rng_;
};

bool sameMessage(const pb::Message& a, const pb::Message& b, std::string* report) {
    pb::util::MessageDifferencer differ;
    pb::util::DefaultFieldComparator comparator;
    comparator.set_treat_nan_as_equal(true);
    differ.set_field_comparator(&comparator);
    differ.ReportDifferencesToString(report);
    return differ.Compare(a, b);
}

struct Tally {
    int cases = 0, accepted = 0, refused = 0;
    std::map<Problem, int> plainRefusals, plainExtras;  // Rules::Plain's disagreements, by cause
};

// Runs one input through the generated parser and the walks; checks they agree.
template <class Message>
void differential(const std::string& input, bool plainToo, Tally& tally) {
    ++tally.cases;
    Message parsed;
    const bool parserAccepts = parsed.ParseFromString(input);
    Message walked;
    const std::optional<Problem> problem = walkProblem<Rules::Protobuf>(input, walked, true);
    if (parserAccepts != !problem) {
        QFAIL(qPrintable(
            QString("protobuf %1, the wire reader %2 (%3) on %4")
                .arg(parserAccepts ? "accepts" : "refuses")
                .arg(problem ? "refuses" : "accepts")
                .arg(problem ? QString::fromStdString(proto_wire::describe(Malformed{*problem, 0}))
                             : QString())
                .arg(QString(QByteArray::fromStdString(input).toHex()))));
    }
    if (parserAccepts) {
        ++tally.accepted;
        parsed.DiscardUnknownFields();
        std::string report;
        if (!sameMessage(parsed, walked, &report))
            QFAIL(qPrintable(QString::fromStdString("values differ: " + report)));
    } else {
        ++tally.refused;
    }
    if (!plainToo) return;
    // XSpace's rules: no UTF-8 check, plain 10-byte tags and lengths, field 0 allowed, groups
    // refused. Where both accept, the values agree; every disagreement is one of those rules.
    Message plain;
    const std::optional<Problem> plainProblem = walkProblem<Rules::Plain>(input, plain, false);
    if (parserAccepts && !plainProblem) {
        std::string report;
        if (!sameMessage(parsed, plain, &report))
            QFAIL(qPrintable(QString::fromStdString("Plain: values differ: " + report)));
    } else if (parserAccepts) {
        QCOMPARE(*plainProblem, Problem::InvalidWireType);  // a group, refused
        ++tally.plainRefusals[*plainProblem];
    } else if (!plainProblem) {
        QVERIFY(*problem == Problem::InvalidUtf8 || *problem == Problem::FieldNumberZero ||
                *problem == Problem::VarintTooLong || *problem == Problem::LengthTooLarge);
        // Without the UTF-8 check the Protobuf rules either accept too, or stop at a tag or a
        // length the plain rules read as an ordinary varint.
        Message again;
        const std::optional<Problem> withoutUtf8 =
            walkProblem<Rules::Protobuf>(input, again, false);
        QVERIFY(!withoutUtf8 || *withoutUtf8 == Problem::FieldNumberZero ||
                *withoutUtf8 == Problem::VarintTooLong || *withoutUtf8 == Problem::LengthTooLarge);
        ++tally.plainExtras[*problem];
    }
}

}  // namespace

class TestProtoWire : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        // The generated parser logs every invalid UTF-8 string it refuses.
        pb::SetLogHandler([](pb::LogLevel, const char*, int, const std::string&) {});
    }

    void varints() {
        const std::string ten = bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
        const char* p = ten.data();
        uint64_t v = 0;
        QCOMPARE(proto_wire::readVarint(p, p + ten.size(), v), VarintRead::Ok);
        QCOMPARE(v, UINT64_MAX);
        QCOMPARE(size_t(p - ten.data()), size_t(10));
        // The tenth byte counts for its lowest bit only (protobuf drops the rest).
        const std::string high =
            bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7e});
        p = high.data();
        QCOMPARE(proto_wire::readVarint(p, p + high.size(), v), VarintRead::Ok);
        QCOMPARE(v, uint64_t(0));
        const std::string eleven =
            bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00});
        p = eleven.data();
        QCOMPARE(proto_wire::readVarint(p, p + eleven.size(), v), VarintRead::TooLong);
        QCOMPARE(size_t(p - eleven.data()), size_t(10));
        const std::string cut = bytes({0x96});
        p = cut.data();
        QCOMPARE(proto_wire::readVarint(p, p + cut.size(), v), VarintRead::Truncated);
        const std::string six = bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x01});
        p = six.data();
        QCOMPARE(proto_wire::readVarint<6>(p, p + six.size(), v), VarintRead::Ok);
        QCOMPARE(v, uint64_t(1) << 35);
        p = six.data();
        QCOMPARE(proto_wire::readVarint<5>(p, p + six.size(), v), VarintRead::TooLong);
        QCOMPARE(proto_wire::zigzag64(0), int64_t(0));
        QCOMPARE(proto_wire::zigzag64(1), int64_t(-1));
        QCOMPARE(proto_wire::zigzag64(4), int64_t(2));
        QCOMPARE(proto_wire::zigzag64(UINT64_MAX), INT64_MIN);
        QCOMPARE(proto_wire::zigzag32(0x1'0000'0003ull), int32_t(-2));  // low 32 bits only
        QCOMPARE(proto_wire::zigzag32(UINT32_MAX), INT32_MIN);
    }

    void fieldsAndOffsets() {
        // Field 1 varint 150, field 2 "hi", field 3 fixed64, field 4 fixed32, at base 1000.
        std::string m = bytes({0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x19});
        m += bytes({1, 2, 3, 4, 5, 6, 7, 8});
        m += bytes({0x25, 9, 0, 0, 0});
        proto_wire::Reader<Rules::Plain> r(m, 1000);
        Field f;
        QVERIFY(r.next(f));
        QCOMPARE(f.number, 1u);
        QCOMPARE(f.value, uint64_t(150));
        QCOMPARE(f.offset, size_t(1000));
        QVERIFY(r.next(f));
        QCOMPARE(f.wireType, uint32_t(proto_wire::kLength));
        QCOMPARE(std::string(f.bytes), std::string("hi"));
        QCOMPARE(f.offset, size_t(1003));
        QVERIFY(r.next(f));
        QCOMPARE(f.value, uint64_t(0x0807060504030201));
        QVERIFY(r.next(f));
        QCOMPARE(f.value, uint64_t(9));
        QVERIFY(!r.next(f));
        QCOMPARE(r.offset(), size_t(1000 + m.size()));
        // header() leaves the payload to its holder.
        const std::string tail = m.substr(3);
        proto_wire::Reader<Rules::Plain> h(tail, 3);
        QVERIFY(h.header(f));
        QCOMPARE(f.value, uint64_t(2));
        QCOMPARE(h.consumed(), size_t(2));

        Malformed error{};
        QVERIFY(problemOf<Rules::Plain>(bytes({0x08, 0x96}), &error) == Problem::TruncatedVarint);
        QCOMPARE(error.offset, size_t(2));  // where the missing byte would be
        QVERIFY(problemOf<Rules::Plain>(bytes({0x08, 0x01, 0x12, 0x05, 'a'}), &error) ==
                Problem::LengthPastEnd);
        QCOMPARE(error.offset, size_t(2));  // the field's tag
        QCOMPARE(proto_wire::describe(error),
                 std::string("a length-delimited field runs past the end (truncated file?)"));
        QVERIFY(problemOf<Rules::Plain>(bytes({0x08, 0x01, 0x0d, 1, 2}), &error) ==
                Problem::FixedPastEnd);
        QCOMPARE(error.offset, size_t(2));
        QVERIFY(problemOf<Rules::Plain>(bytes({0x0b, 0x0c}), &error) == Problem::InvalidWireType);
        QCOMPARE(proto_wire::describe(error), std::string("invalid protobuf wire type 3"));
        QVERIFY(problemOf<Rules::Plain>(bytes({0x0f}), &error) == Problem::InvalidWireType);
        QCOMPARE(error.wireType, 7u);
        std::string longVarint = bytes({0x08});
        for (int i = 0; i < 10; ++i) longVarint.push_back(char(0x80));
        longVarint.push_back(0);
        QVERIFY(problemOf<Rules::Plain>(longVarint, &error) == Problem::VarintTooLong);
        QCOMPARE(error.offset, size_t(11));
    }

    // Where the two rule sets part: tags, field 0, lengths, groups.
    void rulesDiffer() {
        // A 5-byte tag keeps its low 32 bits under protobuf's rules: field 1, varint; plain
        // rules keep bits 32..34 in the field number.
        const std::string highTag = bytes({0x88, 0x80, 0x80, 0x80, 0x70, 0x05});
        Field f;
        proto_wire::Reader<Rules::Protobuf> strict(highTag);
        QVERIFY(strict.next(f));
        QCOMPARE(f.number, 1u);
        QCOMPARE(f.value, uint64_t(5));
        proto_wire::Reader<Rules::Plain> plain(highTag);
        QVERIFY(plain.next(f));
        QCOMPARE(f.number, (7u << 29) | 1u);
        // A 6-byte tag: too long for protobuf, a varint like any other for XSpace.
        const std::string sixByteTag = bytes({0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x05});
        QVERIFY(problemOf<Rules::Protobuf>(sixByteTag) == Problem::VarintTooLong);
        QVERIFY(!problemOf<Rules::Plain>(sixByteTag));
        QVERIFY(problemOf<Rules::Protobuf>(bytes({0x02, 0x00})) == Problem::FieldNumberZero);
        QVERIFY(!problemOf<Rules::Plain>(bytes({0x02, 0x00})));
        // Lengths: at most 5 bytes and below 2^31 for protobuf.
        QVERIFY(problemOf<Rules::Protobuf>(bytes({0x12, 0x80, 0x80, 0x80, 0x80, 0x08})) ==
                Problem::LengthTooLarge);
        QVERIFY(problemOf<Rules::Protobuf>(bytes({0x12, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 1})) ==
                Problem::VarintTooLong);
        QVERIFY(!problemOf<Rules::Plain>(bytes({0x12, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 1})));
        // Groups: skipped with their contents under protobuf's rules, matched by number.
        const std::string group = bytes({0x7b, 0x08, 0x01, 0x12, 0x00, 0x7c, 0x08, 0x02});
        proto_wire::Reader<Rules::Protobuf> groups(group);
        QVERIFY(groups.next(f));
        QCOMPARE(f.wireType, uint32_t(proto_wire::kStartGroup));
        QCOMPARE(f.number, 15u);
        QCOMPARE(f.bytes.size(), size_t(4));
        QVERIFY(groups.next(f));
        QCOMPARE(f.value, uint64_t(2));
        QVERIFY(problemOf<Rules::Plain>(group) == Problem::InvalidWireType);
        QVERIFY(problemOf<Rules::Protobuf>(bytes({0x7b, 0x84, 0x01})) ==
                Problem::UnmatchedEndGroup);  // ends field 16's group
        QVERIFY(problemOf<Rules::Protobuf>(bytes({0x7c})) == Problem::UnmatchedEndGroup);
        QVERIFY(problemOf<Rules::Protobuf>(bytes({0x7b, 0x08, 0x01})) == Problem::UnendedGroup);
    }

    // Groups nested up to protobuf's recursion limit are skipped, one deeper is refused: as
    // the generated parser decides.
    void groupDepthAsGenerated() {
        for (const int levels : {99, 100, 101}) {
            std::string m = bytes({0x08, 0x01});  // Node.id
            for (int i = 0; i < levels; ++i) m.push_back(0x7b);
            for (int i = 0; i < levels; ++i) m.push_back(0x7c);
            stallscope::chakra::Node node;
            const bool parser = node.ParseFromString(m);
            QCOMPARE(parser, levels <= proto_wire::kMaxDepth);
            QVERIFY(problemOf<Rules::Protobuf>(m).has_value() == !parser);
        }
    }

    void utf8() {
        QVERIFY(proto_wire::validUtf8("plain ascii, then é 漢 😀"));
        QVERIFY(proto_wire::validUtf8(""));
        QVERIFY(!proto_wire::validUtf8("\xc0\x80"));          // overlong
        QVERIFY(!proto_wire::validUtf8("\xed\xa0\x80"));      // a surrogate
        QVERIFY(!proto_wire::validUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
        QVERIFY(!proto_wire::validUtf8("abcdefgh\xe6\xbc"));  // cut short
        QVERIFY(!proto_wire::validUtf8("\xff"));
    }

    // Thousands of random and mutated Nodes (Chakra's rules) and XSpaces (both rule sets).
    void differentialAgainstGeneratedParser() {
        Generator gen(20240611);
        Tally nodes, spaces;
        for (int i = 0; i < 3000; ++i) {
            stallscope::chakra::Node node;
            gen.fill(node, 0);
            const std::string wire = node.SerializeAsString();
            differential<stallscope::chakra::Node>(wire, false, nodes);
            for (int k = 0; k < 3; ++k)
                differential<stallscope::chakra::Node>(gen.mutate(wire), false, nodes);
            differential<stallscope::chakra::Node>(gen.noise(), false, nodes);
            if (QTest::currentTestFailed()) return;
        }
        for (int i = 0; i < 2000; ++i) {
            stallscope::xprof::XSpace space;
            gen.fill(space, 0);
            const std::string wire = space.SerializeAsString();
            differential<stallscope::xprof::XSpace>(wire, true, spaces);
            for (int k = 0; k < 3; ++k)
                differential<stallscope::xprof::XSpace>(gen.mutate(wire), true, spaces);
            differential<stallscope::xprof::XSpace>(gen.noise(), true, spaces);
            if (QTest::currentTestFailed()) return;
        }
        QCOMPARE(nodes.cases, 15000);
        QCOMPARE(spaces.cases, 10000);
        qInfo("Node: %d cases, %d accepted, %d refused; XSpace: %d cases, %d accepted, %d refused",
              nodes.cases, nodes.accepted, nodes.refused, spaces.cases, spaces.accepted,
              spaces.refused);
        for (const auto& [problem, n] : spaces.plainExtras)
            qInfo("XSpace rules accept %d refused by protobuf for: %s", n,
                  proto_wire::describe(Malformed{problem, 0}).c_str());
        qInfo("XSpace rules refuse %d groups protobuf skips",
              spaces.plainRefusals[Problem::InvalidWireType]);
        // Both outcomes are well represented, and so are the rules where XSpace's reading
        // parts from protobuf's.
        QVERIFY(nodes.accepted > 2000 && nodes.refused > 2000);
        QVERIFY(spaces.accepted > 700 && spaces.refused > 700);
        QVERIFY(spaces.plainRefusals[Problem::InvalidWireType] > 10);
        QVERIFY(spaces.plainExtras[Problem::InvalidUtf8] > 10);
    }
};

QTEST_GUILESS_MAIN(TestProtoWire)
#include "test_proto_wire.moc"
