// SPDX-License-Identifier: Apache-2.0
// envpin mirror's pieces: the Packages stanza of a flat apt repository (the .deb's own control,
// the lock's file fields), the control read from a real .deb (dpkg-deb builds it), a mirror of
// one .deb from a real HTTP server on loopback, and a lock whose names would leave the mirror.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "diag/error.hpp"
#include "loopback_server.hpp"
#include "pin/sha256.hpp"
#include "test_dir.hpp"
#include "workflow/mirror.hpp"

namespace envpin::workflow {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = test_dir(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const std::string kControl =
    "Package: envpin-hello\n"
    "Version: 1.0-1\n"
    "Architecture: all\n"
    "Maintainer: envpin tests <tests@envpin.invalid>\n"
    "Depends: libc6 (>= 2.36)\n"
    "Description: a package for envpin's tests\n"
    " A second line of the description.\n";

lock::AptPackage hello(const std::string& sha256, std::int64_t size) {
  lock::AptPackage p;
  p.name = "envpin-hello";
  p.version = "1.0-1";
  p.arch = "all";
  p.source = "127.0.0.1/debian";
  p.filename = "pool/main/e/envpin-hello/envpin-hello_1.0-1_all.deb";
  p.size = size;
  p.sha256 = sha256;
  return p;
}

TEST(MirrorPackages, TheStanzaIsTheControlWithTheLocksFileFields) {
  const std::string sha(64, 'a');
  // A Size or checksum in the control itself is the package's claim, not the repository's.
  const std::string stanza =
      packages_stanza(kControl + "Size: 1\nMD5sum: 00\n", hello(sha, 1234), "envpin-hello_1.0-1_all.deb");
  EXPECT_EQ(stanza, kControl + "Filename: ./envpin-hello_1.0-1_all.deb\nSize: 1234\nSHA256: " + sha + "\n\n");
}

TEST(MirrorPackages, AControlThatIsNotOneParagraphOfTheLockedPackageIsRefused) {
  const lock::AptPackage p = hello(std::string(64, 'a'), 1);
  EXPECT_THROW(packages_stanza(kControl + "\nPackage: other\n", p, "f.deb"), diag::Error);     // two paragraphs
  EXPECT_THROW(packages_stanza(" continuation first\n" + kControl, p, "f.deb"), diag::Error);  // no field
  EXPECT_THROW(packages_stanza(kControl + "Bad Field: x\n", p, "f.deb"), diag::Error);
  EXPECT_THROW(packages_stanza(kControl + "X-Esc: \x1b[2J\n", p, "f.deb"), diag::Error);
  // deb822 field names are case-insensitive: "filename" is apt's Filename. A package's own
  // Filename/Size/SHA256 in any case is dropped (the lock's are the only ones), and a field twice
  // in any case is refused: apt would take one of them (tests/fuzz/state_fuzz.cpp checks both on any control).
  const std::string lower = packages_stanza(kControl + "filename: ../../etc/x\nSIZE: 1\nsha256: 00\n", p, "f.deb");
  EXPECT_EQ(lower, kControl + "Filename: ./f.deb\nSize: 1\nSHA256: " + p.sha256 + "\n\n");
  EXPECT_THROW(packages_stanza(kControl + "package: envpin-hello\n", p, "f.deb"), diag::Error);
  EXPECT_THROW(packages_stanza(kControl + "Depends: x\n", p, "f.deb"), diag::Error);
  try {
    lock::AptPackage other = p;
    other.version = "2.0-1";
    packages_stanza(kControl, other, "f.deb");
    FAIL() << "took version 1.0-1 for the locked 2.0-1";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "f.deb is 'envpin-hello' '1.0-1', but the lock names envpin-hello 2.0-1");
  }
}

// A real .deb, built by dpkg-deb with `compression` inside (Debian's own are xz, Ubuntu's zstd).
fs::path build_deb(const fs::path& dir, const std::string& compression = "gzip") {
  const fs::path root = dir / "pkg";
  fs::create_directories(root / "DEBIAN");
  fs::create_directories(root / "usr/share/envpin-hello");
  std::ofstream(root / "DEBIAN/control") << kControl;
  std::ofstream(root / "usr/share/envpin-hello/hello") << "hello\n";
  const fs::path deb = dir / ("envpin-hello_1.0-1_all." + compression + ".deb");
  const std::string command = "dpkg-deb --root-owner-group -Z" + compression + " --build '" + root.string() + "' '" +
                              deb.string() + "' >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) return {};
  return deb;
}

TEST(Mirror, TheControlIsReadFromARealDeb) {
  const fs::path dir = fresh_dir("mirror-deb");
  const fs::path deb = build_deb(dir);
  if (deb.empty()) GTEST_SKIP() << "dpkg-deb is not installed";
  EXPECT_EQ(deb_control(deb), kControl);
  for (const std::string compression : {"xz", "zstd"}) {
    const fs::path other = build_deb(dir, compression);
    ASSERT_FALSE(other.empty()) << compression;
    EXPECT_EQ(deb_control(other), kControl) << compression;
  }
  // Not a .deb: one error, no crash.
  std::ofstream(dir / "not.deb") << "!<arch>\nnonsense";
  EXPECT_THROW(deb_control(dir / "not.deb"), diag::Error);
}

lock::Lock one_deb_lock(const std::string& uri, const std::string& sha256, std::int64_t size) {
  lock::Lock l;
  l.platforms = {"linux/amd64"};
  l.apt_closure = "full";
  l.apt_sources = {{"127.0.0.1/debian", uri}};
  l.apt = {hello(sha256, size)};
  return l;
}

TEST(Mirror, ALockedDebBecomesAFlatRepository) {
  const fs::path dir = fresh_dir("mirror-flat");
  const fs::path deb = build_deb(dir);
  if (deb.empty()) GTEST_SKIP() << "dpkg-deb is not installed";
  const std::string bytes = slurp(deb);
  const std::string sha = pin::sha256_hex(bytes);
  test::Server server("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(bytes.size()) +
                      "\r\nConnection: close\r\n\r\n" + bytes);
  const fs::path m = dir / "mirror";
  const lock::Lock l = one_deb_lock(server.url("/debian"), sha, static_cast<std::int64_t>(bytes.size()));
  const MirrorSummary s = mirror(l, MirrorOptions{m, {}, {}});
  EXPECT_EQ(s.debs, 1);
  EXPECT_EQ(s.fetched, static_cast<std::int64_t>(bytes.size()));
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].rfind("GET /debian/pool/main/e/envpin-hello/envpin-hello_1.0-1_all.deb ", 0), 0u);
  EXPECT_EQ(slurp(m / "apt/envpin-hello_1.0-1_all.deb"), bytes);
  const std::string packages = slurp(m / "apt/Packages");
  EXPECT_EQ(packages, kControl + "Filename: ./envpin-hello_1.0-1_all.deb\nSize: " + std::to_string(bytes.size()) +
                          "\nSHA256: " + sha + "\n\n");
  EXPECT_EQ(slurp(m / "apt/Release"), "Origin: envpin mirror\nLabel: envpin mirror\nSHA256:\n " +
                                          pin::sha256_hex(packages) + " " + std::to_string(packages.size()) +
                                          " Packages\n");

  // Again: the file is kept (no request), and the indexes are the same bytes.
  const MirrorSummary again = mirror(l, MirrorOptions{m, {}, {}});
  EXPECT_EQ(again.fetched, 0);
  EXPECT_EQ(again.kept, static_cast<std::int64_t>(bytes.size()));
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(slurp(m / "apt/Packages"), packages);

  // A file changed in the mirror is fetched again; a server that now serves other bytes is
  // refused, and neither the file nor the index is replaced by them.
  std::ofstream(m / "apt/envpin-hello_1.0-1_all.deb", std::ios::app) << "x";
  server.answer("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(bytes.size()) + "\r\nConnection: close\r\n\r\n" +
                std::string(bytes.size(), 'x'));
  EXPECT_THROW(mirror(l, MirrorOptions{m, {}, {}}), diag::Error);
  EXPECT_FALSE(fs::exists(m / "apt/envpin-hello_1.0-1_all.deb"));
  EXPECT_EQ(slurp(m / "apt/Packages"), packages);
}

// Issue 49, class 1: a link where a directory of the mirror goes (apt/ -> a directory outside)
// was written through: the .deb and Packages landed outside the mirror. Refused before any request.
TEST(Mirror, ALinkAtADirectoryTheMirrorOwnsIsRefused) {
  const fs::path dir = fresh_dir("mirror-link");
  test::Server server("HTTP/1.1 500 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  fs::create_directories(dir / "m");
  fs::create_directories(dir / "outside");
  fs::create_directory_symlink(dir / "outside", dir / "m" / "apt");
  try {
    mirror(one_deb_lock(server.url("/debian"), std::string(64, 'a'), 10), MirrorOptions{dir / "m", {}, {}});
    FAIL() << "mirrored through a link";
  } catch (const diag::Error& e) {
    EXPECT_NE(e.message().find("m/apt' is a symbolic link"), std::string::npos) << e.message();
  }
  EXPECT_TRUE(fs::is_empty(dir / "outside"));
  EXPECT_TRUE(server.requests().empty());
}

TEST(Mirror, ALockWhoseNamesWouldLeaveTheMirrorIsRefusedBeforeAnyRequest) {
  const fs::path dir = fresh_dir("mirror-hostile");
  test::Server server("HTTP/1.1 500 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  const std::string sha(64, 'a');
  for (const std::string filename :
       {"pool/../../../../tmp/evil.deb", "pool/main/.hidden.deb", "pool/x/evil.sh", "pool/x/a\nb.deb", "pool/x/"}) {
    lock::Lock l = one_deb_lock(server.url("/debian"), sha, 10);
    l.apt[0].filename = filename;
    EXPECT_THROW(mirror(l, MirrorOptions{dir / "m", {}, {}}), diag::Error) << filename;
  }
  lock::Lock wheel;
  wheel.platforms = {"linux/amd64"};
  for (const std::string name : {"../../evil-1.0-py3-none-any.whl", "%2e%2e%2fevil-1.0-py3-none-any.whl",
                                 "evil\"><script>-1.0-py3-none-any.whl", "evil-1.0-py3-none-any.exe"}) {
    wheel.python = {{"evil", "1.0", "evil", {{name, server.url("/evil.whl"), sha, 10}}}};
    EXPECT_THROW(mirror(wheel, MirrorOptions{dir / "m", {}, {}}), diag::Error) << name;
  }
  // A source that is not the web (the lock is data: file:// would copy this machine's files).
  lock::Lock file = one_deb_lock("file:///etc", sha, 10);
  EXPECT_THROW(mirror(file, MirrorOptions{dir / "m", {}, {}}), diag::Error);
  EXPECT_TRUE(server.requests().empty());
  EXPECT_FALSE(fs::exists(dir / "m" / "apt" / "Packages"));

  // What an offline build could not use: two platforms, a partial apt closure.
  lock::Lock two = one_deb_lock(server.url("/debian"), sha, 10);
  two.platforms = {"linux/amd64", "linux/arm64"};
  EXPECT_THROW(mirror(two, MirrorOptions{dir / "m", {}, {}}), diag::Error);
  lock::Lock partial = one_deb_lock(server.url("/debian"), sha, 10);
  partial.apt_closure = "partial";
  try {
    mirror(partial, MirrorOptions{dir / "m", "envpin.lock", {}, {}});
    FAIL() << "mirrored a partial closure";
  } catch (const diag::Error& e) {
    EXPECT_NE(e.message().find("apt-closure = \"partial\""), std::string::npos) << e.message();
    // Said at the lock, with the fix.
    EXPECT_EQ(diag::format(e).rfind("envpin: error: envpin.lock: envpin.lock holds only the requested .debs", 0), 0u)
        << diag::format(e);
    EXPECT_NE(e.hint().find("run 'envpin lock' where docker or podman can run the base image"), std::string::npos);
  }
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
}  // namespace envpin::workflow
