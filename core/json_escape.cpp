#include "core/json_escape.h"

#include <cstdint>

namespace stallscope::json {

void appendControlEscape(std::string& out, char c) {
    static constexpr char kHex[] = "0123456789abcdef";
    const auto b = uint8_t(c);
    const char escaped[6] = {'\\', 'u', '0', '0', kHex[b >> 4], kHex[b & 0xf]};
    out.append(escaped, sizeof escaped);
}

void appendString(std::string& out, std::string_view text) {
    out.push_back('"');
    size_t plain = 0;  // start of the run of bytes that need no escape
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c != '"' && c != '\\' && uint8_t(c) >= 0x20) continue;
        out.append(text.data() + plain, i - plain);
        plain = i + 1;
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                appendControlEscape(out, c);
        }
    }
    out.append(text.data() + plain, text.size() - plain);
    out.push_back('"');
}

}  // namespace stallscope::json
