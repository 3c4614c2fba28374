#include "core/transfers/hlo_text.h"

#include <cctype>
#include <cmath>

namespace stallscope::transfers::hlo {

namespace {

bool isNameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// A position in the text being parsed.
struct Cursor {
    std::string_view s;
    size_t p = 0;
    bool atEnd() const { return p >= s.size(); }
    char peek() const { return atEnd() ? '\0' : s[p]; }
    void skipSpace() {
        while (!atEnd() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
    }
    bool eat(char c) {
        skipSpace();
        if (peek() != c) return false;
        ++p;
        return true;
    }
    std::string_view word() {
        skipSpace();
        const size_t from = p;
        while (!atEnd() && isNameChar(s[p])) ++p;
        return s.substr(from, p - from);
    }
    // From an opening bracket to its match (exclusive of both); false when unbalanced.
    bool balanced(char open, char close, std::string_view& inside) {
        if (peek() != open) return false;
        int depth = 0;
        const size_t from = p + 1;
        for (; p < s.size(); ++p) {
            const char c = s[p];
            if (c == '(' || c == '{' || c == '[') ++depth;
            if (c == ')' || c == '}' || c == ']') --depth;
            if (depth == 0 && c == close) {
                inside = s.substr(from, p - from);
                ++p;
                return true;
            }
        }
        return false;
    }
};

// The memory space S(n) written in a layout ("3,2,1,0:T(8,128)S(5)"), 0 when none.
int memorySpaceOf(std::string_view layout) {
    const size_t colon = layout.find(':');
    if (colon == std::string_view::npos) return 0;
    for (size_t i = colon + 1; i + 2 < layout.size(); ++i) {
        if (layout[i] != 'S' || layout[i + 1] != '(') continue;
        if (std::isalpha(static_cast<unsigned char>(layout[i - 1]))) continue;  // "SC(", ...
        int value = 0;
        size_t j = i + 2;
        bool digits = false;
        while (j < layout.size() && std::isdigit(static_cast<unsigned char>(layout[j]))) {
            value = value * 10 + (layout[j++] - '0');
            digits = true;
        }
        if (digits && j < layout.size() && layout[j] == ')') return value;
    }
    return 0;
}

bool parseArray(Cursor& c, ArrayShape& out) {
    const std::string_view type = c.word();
    if (type.empty()) return false;
    out.elementType = std::string(type);
    std::string_view dims;
    if (!c.balanced('[', ']', dims)) return false;
    size_t i = 0;
    while (i < dims.size()) {
        size_t end = dims.find(',', i);
        if (end == std::string_view::npos) end = dims.size();
        std::string_view d = dims.substr(i, end - i);
        while (!d.empty() &&
               (d.front() == ' ' || d.front() == '<' || d.front() == '=' || d.front() == '?'))
            d.remove_prefix(1);  // "<=10": a dynamic dimension's bound
        int64_t v = 0;
        for (char ch : d)
            if (std::isdigit(static_cast<unsigned char>(ch))) v = v * 10 + (ch - '0');
        if (!d.empty()) out.dims.push_back(v);
        i = end + 1;
    }
    if (c.peek() == '{') {
        std::string_view layout;
        if (!c.balanced('{', '}', layout)) return false;
        out.memorySpace = memorySpaceOf(layout);
    }
    return true;
}

bool parseShapeAt(Cursor& c, Shape& out, bool top) {
    c.skipSpace();
    if (c.peek() == '(') {
        ++c.p;
        if (top) out.tuple = true;
        c.skipSpace();
        if (c.peek() == ')') {
            ++c.p;
            return true;
        }
        while (true) {
            const size_t first = out.arrays.size();
            if (!parseShapeAt(c, out, false)) return false;
            if (top) {
                std::vector<size_t> leaves;
                for (size_t i = first; i < out.arrays.size(); ++i) leaves.push_back(i);
                out.elements.push_back(std::move(leaves));
            }
            if (c.eat(',')) continue;
            return c.eat(')');
        }
    }
    ArrayShape array;
    if (!parseArray(c, array)) return false;
    out.arrays.push_back(std::move(array));
    if (top) out.elements.push_back({0});
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// Splits at commas outside brackets.
std::vector<std::string_view> splitTopLevel(std::string_view s) {
    std::vector<std::string_view> parts;
    int depth = 0;
    size_t from = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '(' || c == '{' || c == '[') ++depth;
        if (c == ')' || c == '}' || c == ']') --depth;
        if (c == ',' && depth == 0) {
            parts.push_back(trim(s.substr(from, i - from)));
            from = i + 1;
        }
    }
    if (from < s.size() && !trim(s.substr(from)).empty()) parts.push_back(trim(s.substr(from)));
    return parts;
}

}  // namespace

double elementBytes(std::string_view type) {
    if (type == "pred" || type == "s8" || type == "u8" || type.starts_with("f8")) return 1;
    if (type == "s4" || type == "u4" || type.starts_with("f4")) return 0.5;
    if (type == "s2" || type == "u2") return 0.25;
    if (type == "bf16" || type == "f16" || type == "s16" || type == "u16") return 2;
    if (type == "f32" || type == "s32" || type == "u32") return 4;
    if (type == "f64" || type == "s64" || type == "u64" || type == "c64") return 8;
    if (type == "c128") return 16;
    return 0;  // token, opaque, unknown
}

uint64_t ArrayShape::bytes() const {
    double n = 1;
    for (int64_t d : dims) n *= double(d);
    return uint64_t(std::ceil(n * elementBytes(elementType)));
}

uint64_t Shape::bytes() const {
    uint64_t total = 0;
    for (const ArrayShape& a : arrays) total += a.bytes();
    return total;
}

uint64_t Shape::elementBytes(size_t i) const {
    if (i >= elements.size()) return 0;
    uint64_t total = 0;
    for (size_t leaf : elements[i]) total += arrays[leaf].bytes();
    return total;
}

std::optional<int> Shape::elementSpace(size_t i) const {
    if (i >= elements.size() || elements[i].empty()) return std::nullopt;
    return arrays[elements[i].front()].memorySpace;
}

std::string Instruction::attribute(std::string_view key) const {
    for (std::string_view part : splitTopLevel(attributes)) {
        if (part.size() > key.size() && part.starts_with(key) && part[key.size()] == '=')
            return std::string(trim(part.substr(key.size() + 1)));
    }
    return {};
}

std::optional<Shape> parseShape(std::string_view text) {
    Cursor c{text};
    Shape shape;
    if (!parseShapeAt(c, shape, true)) return std::nullopt;
    return shape;
}

std::optional<Instruction> parseInstruction(std::string_view text) {
    Cursor c{text};
    c.skipSpace();
    if (c.s.substr(c.p).starts_with("ROOT ")) c.p += 5;
    c.skipSpace();
    c.eat('%');
    Instruction out;
    out.name = std::string(c.word());
    if (out.name.empty() || !c.eat('=')) return std::nullopt;
    if (!parseShapeAt(c, out.shape, true)) return std::nullopt;
    out.opcode = std::string(c.word());
    if (out.opcode.empty()) return std::nullopt;
    c.skipSpace();
    std::string_view operands;
    if (!c.balanced('(', ')', operands)) return std::nullopt;
    for (std::string_view part : splitTopLevel(operands)) {
        Operand operand;
        const size_t percent = part.rfind('%');
        if (percent != std::string_view::npos) {
            operand.name = std::string(trim(part.substr(percent + 1)));
            if (percent > 0) operand.shape = parseShape(part.substr(0, percent));
        } else {
            // Printed without '%': the last word names the operand.
            const size_t space = part.find_last_of(" )}");
            operand.name =
                std::string(space == std::string_view::npos ? part : part.substr(space + 1));
            if (space != std::string_view::npos) operand.shape = parseShape(part.substr(0, space));
        }
        out.operands.push_back(std::move(operand));
    }
    c.skipSpace();
    if (c.eat(',')) out.attributes = std::string(trim(c.s.substr(c.p)));
    return out;
}

}  // namespace stallscope::transfers::hlo
