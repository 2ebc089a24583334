#pragma once
// Internal to plans/: the helpers the key tables (keys.cpp for scenario, model and cluster keys,
// training_keys.cpp, serving_keys.cpp, search_keys.cpp) declare their keys with. Not installed,
// not included outside plans/.
//
// A key's accessors are composed from member pointers, as ns-3's attribute accessors are:
// member<&TrainingPlan::layout, &ParallelLayout::tp>() writes and reads p.layout.tp, converting by
// the member's type (FieldValue below: int, int64_t, uint64_t, double, bool, std::string, an enum
// with a name table, lists); a std::optional member on the way is created when written and reads
// as a default-constructed value when absent.
#include "plans/keys.h"
#include "sim/enum_names.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace fathom::plans::key_decl {

constexpr double kMaxInt = 2147483647.0;  // keys stored as int

inline int64_t to_int(const KeyValue& v) { return std::get<int64_t>(v); }
inline int to_int32(const KeyValue& v) { return static_cast<int>(std::get<int64_t>(v)); }
inline double to_double(const KeyValue& v) {
    return std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v)) : std::get<double>(v);
}
inline bool to_bool(const KeyValue& v) { return std::get<bool>(v); }
inline const std::string& to_str(const KeyValue& v) { return std::get<std::string>(v); }
inline std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
    return out;
}

// The dtypes a plan's GEMMs and KV cache may use (stack.dtype, serving.dtype, serving.kv_dtype,
// search.dtype): those with 16- and 8-bit tensor-core paths.
inline std::vector<std::string> plan_dtype_choices() {
    using hardware::Dtype;
    return sim::choices<Dtype>({Dtype::bf16, Dtype::fp16, Dtype::fp8});
}
// Serving's KV-cache dtypes add fp4 (NVFP4 on Blackwell, MXFP4 on MI355X). Its GEMM formats
// (serving.dtype) are workloads/serving/formats.h's.
inline std::vector<std::string> serving_dtype_choices() {
    using hardware::Dtype;
    return sim::choices<Dtype>({Dtype::bf16, Dtype::fp16, Dtype::fp8, Dtype::fp4});
}

// A KeyInfo, built fluently.
struct Decl {
    KeyInfo k;
    Decl(std::string path, KeyType type, std::string doc) {
        k.path = std::move(path);
        k.type = type;
        k.doc = std::move(doc);
        if (type == KeyType::Integer || type == KeyType::IntegerList) k.max = kMaxInt;
    }
    Decl& range(double lo, double hi = std::numeric_limits<double>::infinity()) {
        k.min = lo;
        if (hi < k.max) k.max = hi;
        return *this;
    }
    Decl& choices(std::vector<std::string> c) {
        k.choices = std::move(c);
        return *this;
    }
    // Every name of E's table (sim/enum_names.h), or only those of `subset`, in its order.
    template <typename E>
    Decl& choices_of() {
        return choices(sim::choices<E>());
    }
    template <typename E>
    Decl& choices_of(std::initializer_list<E> subset) {
        return choices(sim::choices<E>(subset));
    }
    Decl& unit(sim::Dimension d) {
        k.unit = d;
        return *this;
    }
    Decl& required() {
        k.required = true;
        k.default_text = "required";
        return *this;
    }
    Decl& shown_as(std::string type) {
        k.shown_type = std::move(type);
        return *this;
    }
    Decl& by_default(std::string text) {
        k.default_text = std::move(text);
        return *this;
    }
    operator KeyInfo() const { return k; }
};

// A field's value as a KeyValue and back, by the field's type. Narrowing conversions are safe:
// check_value has held the value to the key's declared range before any setter runs.
template <typename F, typename = void>
struct FieldValue;
template <>
struct FieldValue<int> {
    static int from(const KeyValue& v) { return to_int32(v); }
    static KeyValue to(int x) { return int64_t{x}; }
};
template <>
struct FieldValue<int64_t> {
    static int64_t from(const KeyValue& v) { return to_int(v); }
    static KeyValue to(int64_t x) { return x; }
};
template <>
struct FieldValue<uint64_t> {  // seeds
    static uint64_t from(const KeyValue& v) { return static_cast<uint64_t>(to_int(v)); }
    static KeyValue to(uint64_t x) { return static_cast<int64_t>(x); }
};
template <>
struct FieldValue<double> {
    static double from(const KeyValue& v) { return to_double(v); }
    static KeyValue to(double x) { return x; }
};
template <>
struct FieldValue<bool> {
    static bool from(const KeyValue& v) { return to_bool(v); }
    static KeyValue to(bool x) { return x; }
};
template <>
struct FieldValue<std::string> {
    static std::string from(const KeyValue& v) { return to_str(v); }
    static KeyValue to(const std::string& x) { return x; }
};
template <typename E>
struct FieldValue<E, std::enable_if_t<std::is_enum_v<E> && sim::has_enum_names_v<E>>> {
    static E from(const KeyValue& v) { return sim::parse<E>(to_str(v)); }
    static KeyValue to(E x) { return std::string(sim::name(x)); }
};
template <typename N>  // an integer list held as other numbers (layer counts, histogram weights)
struct FieldValue<std::vector<N>, std::enable_if_t<std::is_arithmetic_v<N>>> {
    static std::vector<N> from(const KeyValue& v) {
        const auto& in = std::get<std::vector<int64_t>>(v);
        std::vector<N> out;
        for (int64_t x : in) out.push_back(static_cast<N>(x));
        return out;
    }
    static KeyValue to(const std::vector<N>& x) {
        std::vector<int64_t> out;
        for (N e : x) out.push_back(static_cast<int64_t>(e));
        return out;
    }
};
template <>
struct FieldValue<std::vector<std::string>> {  // a ChoiceList
    static std::vector<std::string> from(const KeyValue& v) { return split_choices(to_str(v)); }
    static KeyValue to(const std::vector<std::string>& x) { return joined(x); }
};

namespace detail {

template <typename P>
struct MemberOf;
template <typename C, typename M>
struct MemberOf<M C::*> {
    using Class = C;
};

template <typename X>
X& deref(X& x) {
    return x;
}
template <typename X>
X& deref(std::optional<X>& o) {
    if (!o) o.emplace();
    return *o;
}
template <typename X>
const X& deref(const std::optional<X>& o) {
    static const X absent{};
    return o ? *o : absent;
}

// The field at the end of the member path, through `o`.
template <auto M, auto... Rest, typename Obj>
auto& walk(Obj& o) {
    auto& next = deref(o.*M);
    if constexpr (sizeof...(Rest) == 0) return next;
    else return walk<Rest...>(next);
}

template <auto First, auto... Rest>
struct Member {
    using T = typename MemberOf<decltype(First)>::Class;
    using Field = std::remove_cv_t<std::remove_reference_t<decltype(walk<First, Rest...>(std::declval<T&>()))>>;
    static void set(T& t, const KeyValue& v) { walk<First, Rest...>(t) = FieldValue<Field>::from(v); }
    static KeyValue get(const T& t) { return FieldValue<Field>::to(walk<First, Rest...>(t)); }
};

}  // namespace detail

// The accessors of the member at the end of `Path`, a chain of member pointers from the key's
// target type (&TrainingPlan::training, &TrainingSettings::seq_len).
template <auto... Path>
typename Key<typename detail::Member<Path...>::T>::Access member() {
    return {&detail::Member<Path...>::set, &detail::Member<Path...>::get};
}

inline std::string format_quantity(double v, sim::Dimension d) {
    char buf[64];
    if (d == sim::Dimension::Bytes) std::snprintf(buf, sizeof buf, "%g GB", v / 1e9);
    else std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// Fills each key's shown default from a default-constructed target where it is a plain value.
template <typename T>
std::vector<Key<T>> finish(std::vector<Key<T>> keys) {
    const T defaults{};
    for (auto& key : keys) {
        if (!key.info.default_text.empty()) continue;
        const KeyValue v = key.get(defaults);
        key.info.default_text =
            key.info.type == KeyType::Quantity ? format_quantity(std::get<double>(v), key.info.unit) : format_value(v);
    }
    return keys;
}

template <typename R>
std::vector<std::string> registry_names(const R& reg) {
    std::vector<std::string> out;
    for (const auto& e : reg.entries()) out.push_back(e.name);
    return out;
}

// Sets the key at `path` of `keys` on `target` after checking the value against its declaration;
// an unknown path or an unsuitable value throws sim::InputError naming the key (`what`: "training-plan").
template <typename T>
void set_key(const std::vector<Key<T>>& keys, T& target, const std::string& path, const KeyValue& value,
             const char* what) {
    for (const auto& k : keys) {
        if (k.info.path != path) continue;
        const std::string why = check_value(k.info, value);
        if (!why.empty()) throw sim::InputError(why, "", 0, path);
        k.set(target, value);
        return;
    }
    throw sim::InputError(std::string("unknown ") + what + " key", "", 0, path);
}

template <typename T>
KeyValue get_key(const std::vector<Key<T>>& keys, const T& target, const std::string& path, const char* what) {
    for (const auto& k : keys)
        if (k.info.path == path) return k.get(target);
    throw sim::InputError(std::string("unknown ") + what + " key", "", 0, path);
}

// The keys of `keys` whose values differ between `base` and `plan` (sections skipped), in key order,
// with `plan`'s values: what a search changed in a candidate (set back with set_key, the candidate).
template <typename T>
std::vector<std::pair<std::string, KeyValue>> changed_keys(const std::vector<Key<T>>& keys, const T& base,
                                                           const T& plan) {
    std::vector<std::pair<std::string, KeyValue>> out;
    for (const auto& k : keys) {
        if (!k.info.shown_type.empty() || !k.get) continue;
        KeyValue now = k.get(plan);
        if (!(k.get(base) == now)) out.emplace_back(k.info.path, std::move(now));
    }
    return out;
}

}  // namespace fathom::plans::key_decl
