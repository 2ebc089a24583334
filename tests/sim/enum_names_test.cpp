// The name tables of enums (sim/enum_names.h): name(), lookup(), parse() and choices() read one
// table declared beside the enum; parse() names every choice when the text is none of them.
#include "sim/enum_names.h"

#include "sim/error.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace fathom::testing_enums {

enum class Fruit { Apple, Banana, Cherry };
constexpr auto enum_names(Fruit) {
    return sim::name_table<Fruit>({{Fruit::Apple, "apple"}, {Fruit::Banana, "banana"}, {Fruit::Cherry, "cherry"}});
}

// A table in another order than the declaration: the table's order is the one choices() lists.
enum class Size { Small, Medium, Large };
constexpr auto enum_names(Size) {
    return sim::name_table<Size>({{Size::Medium, "medium"}, {Size::Small, "small"}, {Size::Large, "large"}});
}

enum class Unnamed { A };

}  // namespace fathom::testing_enums

using namespace fathom;
using testing_enums::Fruit;
using testing_enums::Size;

TEST_CASE("an enum's name table gives name, lookup and parse both ways", "[sim][enum_names]") {
    CHECK(std::string(sim::name(Fruit::Apple)) == "apple");
    CHECK(std::string(sim::name(Fruit::Cherry)) == "cherry");
    // Out of declaration order: found by search, not by index.
    CHECK(std::string(sim::name(Size::Small)) == "small");
    CHECK(std::string(sim::name(Size::Medium)) == "medium");
    CHECK(std::string(sim::name(Size::Large)) == "large");
    for (Fruit f : {Fruit::Apple, Fruit::Banana, Fruit::Cherry}) CHECK(sim::parse<Fruit>(sim::name(f)) == f);
    for (Size s : {Size::Small, Size::Medium, Size::Large}) CHECK(sim::parse<Size>(sim::name(s)) == s);
    CHECK(sim::lookup<Fruit>("banana") == Fruit::Banana);
    CHECK_FALSE(sim::lookup<Fruit>("Banana").has_value());  // names are exact: no case folding
    CHECK_FALSE(sim::lookup<Fruit>("").has_value());
}

TEST_CASE("parse of an unknown name is an input error naming every choice, never a fallback", "[sim][enum_names]") {
    CHECK_THROWS_AS(sim::parse<Fruit>("durian"), sim::InputError);
    CHECK_THROWS_WITH(sim::parse<Fruit>("durian"), "expected apple, banana or cherry, got 'durian'");
    // In the table's order.
    CHECK_THROWS_WITH(sim::parse<Size>("huge"), "expected medium, small or large, got 'huge'");
    CHECK(sim::expected_one_of({"a"}, "b") == "expected a, got 'b'");
    CHECK(sim::expected_one_of({"a", "b"}, "c") == "expected a or b, got 'c'");
}

TEST_CASE("choices lists the table in its order, or a subset in the order given", "[sim][enum_names]") {
    CHECK(sim::choices<Fruit>() == std::vector<std::string>{"apple", "banana", "cherry"});
    CHECK(sim::choices<Size>() == std::vector<std::string>{"medium", "small", "large"});
    CHECK(sim::choices<Fruit>({Fruit::Cherry, Fruit::Apple}) == std::vector<std::string>{"cherry", "apple"});
}

TEST_CASE("an enum value missing from its table is a bug, and only enums with a table qualify", "[sim][enum_names]") {
    CHECK_THROWS_AS(sim::name(static_cast<Fruit>(7)), sim::InternalError);
    STATIC_REQUIRE(sim::has_enum_names_v<Fruit>);
    STATIC_REQUIRE_FALSE(sim::has_enum_names_v<testing_enums::Unnamed>);
    STATIC_REQUIRE_FALSE(sim::has_enum_names_v<int>);
}
