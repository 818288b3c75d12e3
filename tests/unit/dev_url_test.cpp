// SPDX-License-Identifier: Apache-2.0
// envpin dev --host reads the server's `envpin dev --url` lines as data before printing them here.
#include <gtest/gtest.h>

#include "workflow/dev.hpp"

namespace envpin {
namespace {

TEST(DevUrl, TheServersLineIsReadAsData) {
  const auto u = workflow::parse_dev_url("notebook http://127.0.0.1:8888/?token=" + std::string(64, 'a'));
  ASSERT_TRUE(u);
  EXPECT_EQ(u->name, "notebook");
  EXPECT_EQ(u->port, 8888);
  EXPECT_EQ(u->rest, "/?token=" + std::string(64, 'a'));
  const auto board = workflow::parse_dev_url("board http://127.0.0.1:6006/");
  ASSERT_TRUE(board);
  EXPECT_EQ(board->rest, "/");
  for (const std::string bad : {"notebook", "notebook http://0.0.0.0:8888/", "notebook http://127.0.0.1:8888",
                                "notebook http://127.0.0.1:99999/", "notebook http://127.0.0.1:0/",
                                "note book http://127.0.0.1:1/", "nb http://127.0.0.1:8888/\x1b]0;x\x07",
                                "nb http://127.0.0.1:8888/ a", "nb http://127.0.0.1:8x88/", " http://127.0.0.1:1/"})
    EXPECT_FALSE(workflow::parse_dev_url(bad)) << bad;
}

}  // namespace
}  // namespace envpin
