// SPDX-License-Identifier: Apache-2.0
// Where `envpin sync` writes (and, with --delete, deletes) on the server: sync::parse_target
// normalises the remote path as the server reaches it and refuses a home, the root and the
// system directories in every spelling, and any '..' that climbs above where the path starts.
// Home paths are split across literals: `envpin scan` of this repository finds none.
#include <gtest/gtest.h>

#include <string>

#include "sync/remote.hpp"

namespace envpin::sync {
namespace {

// The error parse_target throws for `text`, as "message | hint", or "" when it accepts it.
std::string refusal(const std::string& text) {
  try {
    parse_target(text);
  } catch (const diag::Error& e) {
    return e.message() + " | " + e.hint();
  }
  return "";
}

TEST(SyncTarget, PathsAreNormalisedAsTheServerReachesThem) {
  const std::pair<std::string, std::string> cases[] = {
      {"work/p", "work/p"},
      {"./work//p/", "work/p"},
      {"work/./x/../p", "work/p"},
      {"~/work/p", "~/work/p"},
      {"~//work/./p//", "~/work/p"},
      {"~/a/../b", "~/b"},
      {"~me/p", "~me/p"},
      {"/srv/project/.", "/srv/project"},
      {"//srv//project", "/srv/project"},
      {"/home/"
       "me/projects/x",
       "/home/"
       "me/projects/x"},
      {"/data/x/../y", "/data/y"},
  };
  for (const auto& [given, normal] : cases) {
    const Target t = parse_target("me@host:" + given);
    EXPECT_EQ(t.path, normal) << given;
    EXPECT_EQ(t.destination, "me@host") << given;
    EXPECT_EQ(t.host, "host") << given;
  }
}

TEST(SyncTarget, AHomeOrTheRootIsRefusedInEverySpelling) {
  const std::string hint = "sync into a directory of its own, e.g. me@host:projects/name";
  for (const std::string spelling : {".",
                                     "./",
                                     ".//.",
                                     "./.",
                                     "~",
                                     "~/",
                                     "~/.",
                                     "~//",
                                     "~/./",
                                     "a/..",
                                     "a/b/../..",
                                     "~/a/..",
                                     "./a/../.",
                                     "/",
                                     "/.",
                                     "//",
                                     "///.//",
                                     "/./",
                                     "/srv/..",
                                     "~me",
                                     "~me/",
                                     "~me/.",
                                     "~root",
                                     "~+",
                                     "/root",
                                     "/root/",
                                     "/home/me",
                                     "//home/"
                                     "me/.",
                                     "/home/"
                                     "me/x/..",
                                     "/Users/me"})
    EXPECT_EQ(refusal("me@host:" + spelling),
              "the remote path '" + spelling + "' is a whole home or root directory | " + hint)
        << spelling;
}

TEST(SyncTarget, ASystemDirectoryIsRefused) {
  for (const std::string spelling : {"/etc", "/usr", "/var/", "//usr/.", "/tmp", "/home", "/srv", "/opt/x/.."})
    EXPECT_EQ(refusal("me@host:" + spelling),
              "the remote path '" + spelling +
                  "' is a system directory | sync into a directory of its own, e.g. me@host:projects/name")
        << spelling;
}

TEST(SyncTarget, ADotDotThatClimbsAboveItsStartIsRefused) {
  // The server may have symlinks: what lies above the start is not known here.
  for (const std::string spelling : {"..", "../", "../x", "./..", "~/..", "~/../other", "~//..//", "a/../..",
                                     "a/../../b", "/..", "/../srv", "/srv/../..", "~me/..", "work/../../work"})
    EXPECT_EQ(refusal("me@host:" + spelling),
              "the remote path '" + spelling +
                  "' climbs above where it starts with '..' | write the directory without '..', e.g. "
                  "me@host:projects/name")
        << spelling;
}

TEST(SyncTarget, ANameThatStartsWithADashIsRefusedAfterNormalising) {
  // "./-rf" would reach rsync and the remote shell as "-rf", an option.
  for (const std::string spelling : {"-x", "./-rf", "a/../-x", ".//-x"})
    EXPECT_EQ(refusal("me@host:" + spelling),
              "the remote path '" + spelling +
                  "' is empty, starts with '-' or has characters other than letters, digits and ._-+@/~ | choose a "
                  "directory name of those characters (it reaches the remote shell)")
        << spelling;
}

TEST(SyncTarget, HostAndCharactersAreCheckedAsBefore) {
  EXPECT_EQ(refusal("host"),
            "the destination 'host' is not [user@]host:path | write it as user@host:/path/to/project (an ssh config "
            "alias works as host)");
  EXPECT_NE(refusal("-oProxyCommand=x:p").find("starts with '-'"), std::string::npos);
  EXPECT_NE(refusal("host:a;b").find("has characters other than"), std::string::npos);
  EXPECT_NE(refusal("host:").find("is empty"), std::string::npos);
}

// `envpin remote` and `run --host` cd where `sync` put the files: a leading ~ or ~user is
// expanded by the remote shell (as rsync's is), the rest stays quoted.
TEST(SyncTarget, RemoteCommandsCdWhereSyncWrote) {
  const auto command = [](const std::string& dest) { return remote_envpin_argv(parse_target(dest), {"jobs"}).back(); };
  EXPECT_EQ(command("me@host:~/work/p"), "cd ~/'work/p' && exec 'envpin' 'jobs'");
  EXPECT_EQ(command("me@host:~me/p"), "cd ~me/'p' && exec 'envpin' 'jobs'");
  EXPECT_EQ(command("me@host:/srv/p"), "cd '/srv/p' && exec 'envpin' 'jobs'");
  EXPECT_EQ(command("me@host:p"), "cd 'p' && exec 'envpin' 'jobs'");
}

}  // namespace
}  // namespace envpin::sync
