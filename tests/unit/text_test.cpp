// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "diag/error.hpp"
#include "diag/text.hpp"

namespace envpin::diag {
namespace {

TEST(Text, Utf8Validity) {
  EXPECT_EQ(invalid_utf8_at("plain caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("ab\xff"), 2u);
  EXPECT_EQ(invalid_utf8_at("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(invalid_utf8_at("x\xed\xa0\x80"), 1u);     // a UTF-16 surrogate
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(invalid_utf8_at("\xe2\x82"), 0u);          // cut short
}

TEST(Text, ControlCharacters) {
  EXPECT_EQ(control_at("a normal line"), std::string_view::npos);
  EXPECT_EQ(control_at("a\nb"), 1u);
  EXPECT_EQ(control_at("\x7f"), 0u);
  EXPECT_EQ(control_at("x\xc2\x85"), 1u);       // NEL, a C1 control
  EXPECT_EQ(control_at("ab\xe2\x80\xa8"), 2u);  // LINE SEPARATOR
  EXPECT_EQ(describe_char_at("\x1b", 0), "an escape character");
  EXPECT_EQ(describe_char_at("\xe2\x80\xa9", 0), "the character U+2029");
  EXPECT_EQ(describe_char_at("\x01", 0), "the control character 0x01");
  // Bidirectional controls reorder what a reviewer sees (RLO, RLI, PDI, LRM, ALM): controls too;
  // the characters around them are not.
  EXPECT_EQ(control_at("a\xe2\x80\xae"
                       "b"),
            1u);                                // U+202E RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(control_at("a\xe2\x80\xaa"), 1u);   // U+202A
  EXPECT_EQ(control_at("ab\xe2\x81\xa7"), 2u);  // U+2067 RIGHT-TO-LEFT ISOLATE
  EXPECT_EQ(control_at("\xe2\x81\xa9"), 0u);    // U+2069
  EXPECT_EQ(control_at("\xe2\x80\x8f"), 0u);    // U+200F RIGHT-TO-LEFT MARK
  EXPECT_EQ(control_at("\xd8\x9c"), 0u);        // U+061C ARABIC LETTER MARK
  EXPECT_EQ(control_at("\xe2\x80\xa9x\xe2\x80\xaf"), 0u);
  EXPECT_EQ(control_at("\xe2\x80\xaf\xe2\x81\xa5\xe2\x80\x8d"), std::string_view::npos);  // U+202F, U+2065, ZWJ
  EXPECT_EQ(describe_char_at("\xe2\x80\xae", 0), "the bidirectional control U+202E");
}

TEST(Text, PrintableAndQuoted) {
  EXPECT_EQ(printable("a\nb\te\x1b[31m\xff\xe2\x80\xa8"), "a\\nb\\te\\x1b[31m\\xff\\u2028");
  EXPECT_EQ(printable("if (admin) \xe2\x80\xae} \xe2\x81\xa6x"), "if (admin) \\u202e} \\u2066x");
  // Bidirectional controls reorder what surrounds them: escaped too; other non-ASCII text stays.
  EXPECT_EQ(printable("x\u202ey\u2066z\u200f\u061c \u00e9\u05d0"), "x\\u202ey\\u2066z\\u200f\\u061c \u00e9\u05d0");
  EXPECT_EQ(quote("it"), "'it'");
  EXPECT_EQ(quote(std::string(200, 'x'), 10), "'xxxxxxxxxx...' (200 bytes)");
  // A cut never splits a UTF-8 sequence.
  EXPECT_EQ(quote("aa\xc3\xa9", 3), "'aa...' (4 bytes)");
  // Untrusted text in a line: the same printer, cut, without quotes.
  EXPECT_EQ(excerpt("ckpt\x1b]0;pwned\x07\r.pt"), "ckpt\\x1b]0;pwned\\x07\\r.pt");
  EXPECT_EQ(excerpt(std::string(50'000'000, 'z'), 5), "zzzzz... (50000000 bytes)");
  EXPECT_EQ(excerpt("aa\xc3\xa9", 3), "aa... (4 bytes)");
  EXPECT_EQ(excerpt(excerpt("a\nb")), excerpt("a\nb")) << "printing twice changes nothing";
  // The cut counts printed bytes: 300 invalid bytes print as 1,200 ("\xff" each), cut at 10.
  EXPECT_EQ(excerpt(std::string(300, '\xff'), 10), "\\xff\\xff... (300 bytes)");
  EXPECT_EQ(excerpt("a\x1b", 4), "a... (2 bytes)") << "an escape is never cut";
}

TEST(Text, MessagesCannotBeForged) {
  const Error e("unknown key 'x\nenvpin: error: forged'", Location{"m.yaml", 1, 2}, "hint\x1b]0;title\x07");
  EXPECT_EQ(format(e),
            "envpin: error: m.yaml:1:2: unknown key 'x\\nenvpin: error: forged'\n"
            "envpin: hint: hint\\x1b]0;title\\x07\n");
  const std::string huge = format(Error("invalid name '" + std::string(100000, 'a') + "'"));
  EXPECT_EQ(huge, "envpin: error: invalid name '" + std::string(117, 'a') + "...'\n");
  EXPECT_LE(format(Error(std::string(5000, 'z'))).size(), 620u);
}

// An apostrophe inside a word ("the fleet's driver") opens no quoted span: two of them far apart
// in one hint once cut the words between them to 120 bytes ("upgrade t...'s driver").
TEST(Text, ApostrophesInWordsAreNotQuotes) {
  const std::string filler(150, 'x');
  const std::string hint =
      "run through the image's cuda-compat libraries " + filler + ", or upgrade the fleet's driver";
  EXPECT_EQ(format(Error("m", std::nullopt, hint)), "envpin: error: m\nenvpin: hint: " + hint + "\n");
  // A quote still opens after a non-word character, and its span is cut.
  EXPECT_EQ(format(Error("unknown GPU '" + std::string(200, 'g') + "' given")),
            "envpin: error: unknown GPU '" + std::string(117, 'g') + "...' given\n");
}

}  // namespace
}  // namespace envpin::diag
