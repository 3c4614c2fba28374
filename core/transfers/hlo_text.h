#pragma once

// Reading the HLO text that XProf's XLA Ops events carry as their long name:
//   %copy-done.2 = f32[5,1024]{1,0:T(8,128)} copy-done((f32[5,1024]{1,0}, ...) %copy-start.2)
// Only what the transfer analysis needs: the instruction's name, opcode, result shape, operand
// names and attributes, array sizes in bytes and memory spaces (the layout's S(n)).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::transfers::hlo {

// One array of a shape: element type, dimensions, memory space (S(n) of the layout, 0 when
// none is written: the device's default memory).
struct ArrayShape {
    std::string elementType;  // "f32", "bf16", ...
    std::vector<int64_t> dims;
    int memorySpace = 0;
    uint64_t bytes() const;
};

// A shape: one array, or the arrays of a (possibly nested) tuple flattened in order. `tuple`
// tells the two apart; top-level tuple elements are `elements` (each flattened again).
struct Shape {
    bool tuple = false;
    std::vector<ArrayShape> arrays;             // every leaf, in order
    std::vector<std::vector<size_t>> elements;  // top-level tuple element -> indices into arrays
    uint64_t bytes() const;
    // Bytes and memory space of top-level element i (of the shape itself when not a tuple).
    uint64_t elementBytes(size_t i) const;
    std::optional<int> elementSpace(size_t i) const;
};

struct Operand {
    std::string name;  // without '%'
    std::optional<Shape> shape;
};

struct Instruction {
    std::string name;    // without '%'
    std::string opcode;  // "copy-start", "all-gather-done", "fusion", ...
    Shape shape;
    std::vector<Operand> operands;
    std::string attributes;  // the text after the operand list ("channel_id=1, ...")
    // The value of attribute `key` (`replica_groups={{0,1}}` -> "{{0,1}}"), empty when absent.
    std::string attribute(std::string_view key) const;
};

// Bytes per element of an XLA element type (pred/s8/u8/f8*: 1, bf16/f16: 2, ...); 0 for token
// and unknown types. Sub-byte types (s4/u4) count a byte per two elements, rounded up by the
// caller through `bytes()`.
double elementBytes(std::string_view type);

std::optional<Shape> parseShape(std::string_view text);
// The instruction of an HLO line; nullopt when it is not one (a plain op name).
std::optional<Instruction> parseInstruction(std::string_view text);

}  // namespace stallscope::transfers::hlo
