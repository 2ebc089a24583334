#pragma once
// The names of an enum's values: one table beside each enum, and the generic functions every
// reader and writer of those names uses, so that adding a value is one table line.
//
// An enum declares its table right after itself, in its own namespace (found by argument-dependent
// lookup):
//     enum class Recompute { None, Selective, Full };
//     constexpr auto enum_names(Recompute) {
//         return sim::name_table<Recompute>({{Recompute::None, "none"}, {Recompute::Selective, "selective"},
//                                            {Recompute::Full, "full"}});
//     }
// Then sim::name(e) is e's name, sim::parse<E>(text) the value named `text` (an InputError
// "expected none, selective or full, got 'x'" otherwise: never a fallback), sim::lookup<E>(text)
// the same as an optional, and sim::choices<E>() every name in the table's order (the order the
// key reference and error messages list them in). A value missing from its table is a bug:
// name() throws InternalError. Tables in the enum's declaration order are read by index.
#include "sim/error.h"

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace fathom::sim {

template <typename E>
struct EnumName {
    E value{};
    const char* name = nullptr;
};

// A name table of N entries; N is deduced from the braced list.
template <typename E, size_t N>
constexpr std::array<EnumName<E>, N> name_table(const EnumName<E> (&entries)[N]) {
    std::array<EnumName<E>, N> out{};
    for (size_t i = 0; i < N; ++i) out[i] = entries[i];
    return out;
}

// True when E has a table (an enum_names(E) found by argument-dependent lookup).
template <typename E, typename = void>
struct has_enum_names : std::false_type {};
template <typename E>
struct has_enum_names<E, std::void_t<decltype(enum_names(std::declval<E>()))>> : std::true_type {};
template <typename E>
inline constexpr bool has_enum_names_v = has_enum_names<E>::value;

namespace detail {
template <typename E>
inline constexpr auto kNames = enum_names(E{});
}  // namespace detail

// "expected a, b or c, got 'x'": the one wording of a value outside its choices.
inline std::string expected_one_of(const std::vector<std::string>& choices, std::string_view got) {
    std::string all;
    for (size_t i = 0; i < choices.size(); ++i)
        all += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    return "expected " + all + ", got '" + std::string(got) + "'";
}

template <typename E>
const char* name(E e) {
    const auto& t = detail::kNames<E>;
    const auto i = static_cast<size_t>(e);
    if (i < t.size() && t[i].value == e) return t[i].name;
    for (const auto& x : t)
        if (x.value == e) return x.name;
    FATHOM_CHECK(false, "an enum value without a name: " + std::to_string(static_cast<long long>(e)));
    return "";
}

template <typename E>
std::optional<E> lookup(std::string_view text) {
    for (const auto& x : detail::kNames<E>)
        if (text == x.name) return x.value;
    return std::nullopt;
}

template <typename E>
std::vector<std::string> choices() {
    std::vector<std::string> out;
    for (const auto& x : detail::kNames<E>) out.emplace_back(x.name);
    return out;
}

// The names of some of E's values, in the order given (a key that accepts only these).
template <typename E>
std::vector<std::string> choices(std::initializer_list<E> subset) {
    std::vector<std::string> out;
    for (E e : subset) out.emplace_back(name(e));
    return out;
}

template <typename E>
E parse(std::string_view text) {
    if (auto e = lookup<E>(text)) return *e;
    throw InputError(expected_one_of(choices<E>(), text));
}

}  // namespace fathom::sim
