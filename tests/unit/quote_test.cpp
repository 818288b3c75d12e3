// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "diag/error.hpp"
#include "pin/sha256.hpp"
#include "render/code.hpp"
#include "render/quote.hpp"
#include "render/templates.hpp"

namespace envpin::render {
namespace {

TEST(Quote, Shell) {
  EXPECT_EQ(sh_quote("plain"), "'plain'");
  EXPECT_EQ(sh_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(sh_quote(""), "''");
  EXPECT_EQ(sh_quote("$HOME `x` \"q\" 'a'"), "\"\\$HOME \\`x\\` \\\"q\\\" 'a'\"");
}

// A word in a command printed to copy and paste (envpin mirror's): as it is when the shell reads it
// so, else quoted; `m x;echo INJECTED` stays one word.
TEST(Quote, ShellWordOnlyWhereNeeded) {
  EXPECT_EQ(sh_word("/srv/mirror-1.2/images/uv-image"), "/srv/mirror-1.2/images/uv-image");
  EXPECT_EQ(sh_word("dir:m/images/image"), "dir:m/images/image");
  EXPECT_EQ(sh_word("m x;echo INJECTED"), "'m x;echo INJECTED'");
  EXPECT_EQ(sh_word("$(id)"), "\"\\$(id)\"");
  EXPECT_EQ(sh_word("~/m"), "'~/m'");
  EXPECT_EQ(sh_word(""), "''");
}

TEST(Quote, Dockerfile) {
  EXPECT_EQ(dockerfile_quote("a b"), "\"a b\"");
  EXPECT_EQ(dockerfile_quote("say \"hi\" $USER \\n"), "\"say \\\"hi\\\" \\$USER \\\\n\"");
}

TEST(Quote, PathWord) {
  auto lookup = [](const std::string& name) {
    return name == "DATA_DIR" ? std::string("/work/da\"ta") : std::string();
  };
  EXPECT_EQ(sh_path_word("${DATA_DIR}/raw $x", lookup), "\"${DATA_DIR:-/work/da\\\"ta}/raw \\$x\"");
}

TEST(Sha256, KnownVectors) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(pin::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(pin::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// The escaping layer as a type: a code slot takes only Code, a text slot only a comment line.
TEST(Templates, CodeSlotsTakeOnlyCode) {
  const auto render = [](std::string_view text, const Fields& f) {
    try {
      return render_template_text("t", text, f);
    } catch (const diag::Error& e) {
      return std::string("error: ") + e.message();
    }
  };
  Fields f;
  f.text("value", "x\ny; rm -rf /").code("word", Code::sh("x'; rm -rf / #"));
  EXPECT_EQ(render("# note: {{value}}\nrun {{{word}}}\n", f), "# note: x\\ny; rm -rf /\nrun 'x'\\''; rm -rf / #'\n");
  EXPECT_EQ(render("run {{{value}}}\n", f),
            "error: internal: template 't': the code slot {{{value}}} was not given Code");
  EXPECT_EQ(render("run {{value}}\n", f),
            "error: internal: template 't': the text slot {{value}} is not on a comment line: give it Code in a "
            "{{{code}}} slot");
  Fields list;
  list.codes("words", {Code::sh("a b"), Code::literal("--flag")}).items("plain", {Fields().text("x", "y")});
  EXPECT_EQ(render("run{{#words}} {{{.}}}{{/words}}\n", list), "run 'a b' --flag\n");
  EXPECT_EQ(render("run{{#plain}} {{{x}}}{{/plain}}\n", list),
            "error: internal: template 't': the code slot {{{x}}} was not given Code");
  // A section that renders nothing is not checked: its slots are not filled.
  Fields off;
  off.flag("cuda", false);
  EXPECT_EQ(render("{{#cuda}}\nENV X={{{archs}}}\n{{/cuda}}\nok\n", off), "\nok\n");
  // Words the loader restricted are checked again on the way out.
  EXPECT_THROW(Code::word("/w; touch /x", "._-+@/"), diag::Error);
  EXPECT_EQ(Code::word("/srv/app-1.0+x@y", "._-+@/").text(), "/srv/app-1.0+x@y");
  EXPECT_EQ(Code::cmake("a\"b$c\\d;e").text(), "\"a\\\"b\\$c\\\\d;e\"");
  EXPECT_EQ(Code::dockerfile_args({"a b", "c\"d"}).text(), "[\"a b\", \"c\\\"d\"]");
  EXPECT_THROW(Code::dockerfile("x\nRUN id"), diag::Error);
}

}  // namespace
}  // namespace envpin::render
