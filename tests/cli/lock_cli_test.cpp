// SPDX-License-Identifier: Apache-2.0
// `envpin verify` and `envpin generate` with a lock, through the real binary. The lock is made
// here (resolving needs servers: tests/e2e/lock_build.sh does that for real).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "cli/cli_fixture.hpp"
#include "diag/error.hpp"
#include "lock/lock.hpp"
#include "manifest/load.hpp"
#include "workflow/project.hpp"

namespace envpin {
namespace {

constexpr const char* kLockManifest =
    "envpin: 1\nname: demo\nbase: 127.0.0.1:5000/envpin/bookworm:12\nos: debian12\napt: [jq, python3-venv]\n"
    "python: {version: '3.11', source: system, packages: [envpin-demo==1.0.0]}\n";

class LockCli : public Cli {
 protected:
  void write_locked() {
    write("envpin.yaml", kLockManifest);
    lock::Lock l = image_only_lock(manifest::load((dir_ / "envpin.yaml").string()));
    l.apt_sources = {{"deb.debian.org/debian", "http://deb.debian.org/debian"}};
    l.apt = {{"jq", "1.6-2.1+deb12u2", "amd64", "deb.debian.org/debian", "jq", "pool/main/j/jq/jq.deb", 64432,
              std::string(64, 'e')},
             {"libjq1", "1.6-2.1+deb12u2", "amd64", "deb.debian.org/debian", "", "pool/main/j/jq/libjq1.deb", 136460,
              std::string(64, 'f')}};
    l.python_index = "http://127.0.0.1:8000/simple";
    l.python = {{"envpin-demo",
                 "1.0.0",
                 "envpin-demo==1.0.0",
                 {{"envpin_demo-1.0.0-py3-none-any.whl", "http://127.0.0.1:8000/p/d.whl", std::string(64, '1')}}},
                {"envpin-dep",
                 "2.0.0",
                 "",
                 {{"envpin_dep-2.0.0-py3-none-any.whl", "http://127.0.0.1:8000/p/e.whl", std::string(64, '2')}}}};
    lock::seal(l);
    write("envpin.lock", lock::to_toml(l));
    write("requirements.lock", lock::requirements_lock(l));
    lock_ = l;
  }
  lock::Lock lock_;
};

TEST_F(LockCli, VerifyIntact) {
  write_locked();
  const Result r = run("verify");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "envpin.lock: ok (5 pins, " + lock_.lock_digest + ")\n");
}

TEST_F(LockCli, VerifyNamesTheEditedEntry) {
  write_locked();
  std::string text = *io::read_file(dir_ / "envpin.lock");
  text.replace(text.find("size = 136460"), 13, "size = 136461");
  write("envpin.lock", text);
  Result r = run("verify");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "envpin: error: envpin.lock: content does not match its lock-digest (" + lock_.lock_digest +
                       " recorded, " + r.err.substr(r.err.find("recorded, ") + 10, 71) +
                       " computed): a value was edited after envpin wrote it\n"
                       "envpin: hint: restore it from version control, or run 'envpin lock' to rewrite it\n");
  // A formatting edit (what envpin never writes) is named by line and entry.
  text = *io::read_file(dir_ / "envpin.lock");
  text.replace(text.find("size = 136461"), 13, "size =  136460");
  write("envpin.lock", text);
  r = run("verify");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("envpin.lock:"), std::string::npos);
  EXPECT_NE(r.err.find(": not as envpin wrote it: [[apt]] \"libjq1\" was edited"), std::string::npos) << r.err;
}

// Every byte of requirements.lock (what pip installs from) and of envpin.lock, flipped, dropped or
// doubled: verify refuses each one, and so does generate.
TEST_F(LockCli, EveryByteMutationOfTheLockPairIsDetected) {
  write_locked();
  const std::string lock_text = *io::read_file(dir_ / "envpin.lock");
  const std::string req_text = *io::read_file(dir_ / "requirements.lock");
  const manifest::Manifest m = manifest::load((dir_ / "envpin.yaml").string());
  // Every mutation is judged by the rule `verify` applies (workflow::lock_state, in this process:
  // one program per case made this the suite's slowest unit test, ~200 s under ASan); the first
  // cases of each file go through the binary too, so its exit code is tied to the same rule.
  const auto refused = [&](int n) {
    bool in_process = true;
    try {
      in_process = workflow::lock_state(m, dir_ / "envpin.lock", "envpin.lock").kind != workflow::LockState::Kind::ok;
    } catch (const diag::Error&) {  // a located error: verify prints it and exits 1
    }
    if (n < 24) EXPECT_EQ(run("verify").code != 0, in_process) << "case " << n;
    return in_process;
  };
  int cases = 0, detected = 0;
  for (const auto& [file, text] : {std::pair{"requirements.lock", req_text}, std::pair{"envpin.lock", lock_text}}) {
    int in_file = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      for (int kind = 0; kind < 3; ++kind) {
        std::string mutated = text;
        if (kind == 0) mutated[i] = static_cast<char>(mutated[i] ^ 0x01);
        if (kind == 1) mutated.erase(i, 1);
        if (kind == 2) mutated.insert(i, 1, mutated[i]);
        write(file, mutated);
        ++cases;
        if (refused(in_file++)) ++detected;
      }
      write(file, text);
    }
  }
  EXPECT_EQ(detected, cases) << detected << " of " << cases << " mutations detected";
  EXPECT_GT(cases, 3000);
  // And a requirements.lock that gained a package is refused by generate too.
  write("requirements.lock", req_text + "evil==1.0 --hash=sha256:" + std::string(64, '0') + "\n");
  const Result g = run("generate");
  EXPECT_EQ(g.code, 1);
  EXPECT_EQ(g.err,
            "envpin: error: requirements.lock: requirements.lock differs from envpin.lock at line 6 (pip installs "
            "from it)\n"
            "envpin: hint: run 'envpin lock' to write both again, or restore them from version control\n");
  fs::remove(dir_ / "requirements.lock");
  EXPECT_EQ(run("verify").code, 1);
}

// One rule decides whether a lock counts (workflow::lock_state): verify, generate, the jobs'
// pinned check and check agree on each edit. Before the rule was written once, generate and the
// jobs took a lock whose text envpin would never write (a reformatted entry) while verify refused it.
TEST_F(LockCli, EveryCommandJudgesTheLockByOneRule) {
  write_locked();
  const std::string lock_text = *io::read_file(dir_ / "envpin.lock");
  const std::string req_text = *io::read_file(dir_ / "requirements.lock");
  struct Case {
    const char* what;
    std::string lock, requirements, manifest;
    int verify;  // 0 intact, 1 refused, 2 stale
  };
  std::string reformatted = lock_text;
  reformatted.replace(reformatted.find("size = 136460"), 13, "size =  136460");
  std::string value = lock_text;
  value.replace(value.find("size = 136460"), 13, "size = 136461");
  std::string more_apt = kLockManifest;
  more_apt.replace(more_apt.find("python3-venv]"), 13, "python3-venv, curl]");
  const std::vector<Case> cases = {
      {"intact", lock_text, req_text, kLockManifest, 0},
      {"a reformatted entry", reformatted, req_text, kLockManifest, 1},
      {"an edited value", value, req_text, kLockManifest, 1},
      {"requirements.lock with one more wheel", lock_text,
       req_text + "evil==1.0 --hash=sha256:" + std::string(64, '0') + "\n", kLockManifest, 1},
      {"a manifest changed since", lock_text, req_text, more_apt, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    write("envpin.lock", c.lock);
    write("requirements.lock", c.requirements);
    write("envpin.yaml", c.manifest);
    EXPECT_EQ(run("verify").code, c.verify);
    const Result g = run("generate --dry-run");
    EXPECT_EQ(g.code, c.verify == 0 ? 0 : 1) << g.err;
    const Result k = run("check --json");
    const bool lock_refused = k.out.find("\"STALE\"") != std::string::npos;
    EXPECT_EQ(lock_refused, c.verify != 0) << k.out;
  }
}

// A registry that accepts the connection and never answers (was ~8 minutes of retries).
TEST_F(LockCli, UnresponsiveRegistryFailsWithinTheTimeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 8), 0);  // the kernel completes connections; nobody reads them
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string host = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  write("envpin.yaml", "envpin: 1\nname: x\nbase: " + host + "/envpin/x:1\nos: debian12\n");
  const auto start = std::chrono::steady_clock::now();
  const Result r = run("lock", "ENVPIN_NET_TIMEOUT=2");
  const auto took = std::chrono::steady_clock::now() - start;
  // --timeout wins over the environment.
  const Result flag = run("lock --timeout 1", "ENVPIN_NET_TIMEOUT=300");
  EXPECT_EQ(flag.code, 1);
  EXPECT_NE(flag.err.find(" after 1 s\n"), std::string::npos) << flag.err;
  EXPECT_EQ(run("lock --timeout 0").code, 2) << "out of range is a usage error";
  ::close(fd);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(
      r.err,
      "envpin: resolving image " + host +
          "/envpin/x:1\n"
          "envpin: error: envpin.yaml:3:7: no answer from http://" +
          host +
          "/v2/envpin/x/manifests/1 after 2 s\n"
          "envpin: hint: check that the server is up; wait longer with --timeout SECONDS (or ENVPIN_NET_TIMEOUT)\n");
  EXPECT_LT(took, std::chrono::seconds(20)) << "bounded by the timeout, not by retries";
  EXPECT_EQ(listing(), std::vector<std::string>{"envpin.yaml"});
  EXPECT_EQ(run("lock", "ENVPIN_NET_TIMEOUT=soon").err,
            "envpin: error: ENVPIN_NET_TIMEOUT must be a whole number of seconds from 1 to 3600, found 'soon'\n"
            "envpin: hint: set it like ENVPIN_NET_TIMEOUT=60, or unset it for 30 s\n");
}

TEST_F(LockCli, VerifyStaleExitsTwo) {
  write_locked();
  write("envpin.yaml", std::string(kLockManifest) + "secrets: [TOKEN]\n");
  EXPECT_EQ(run("verify").code, 0) << "secrets do not affect pins";
  write("envpin.yaml", std::string(kLockManifest).replace(std::string(kLockManifest).find("[jq, "), 5, "[jq, git, "));
  const Result r = run("verify");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.lock is stale: envpin.yaml changed after it was locked\n"
            "envpin: hint: run 'envpin lock --manifest envpin.yaml'\n");
  // generate refuses a stale lock and writes nothing.
  const Result g = run("generate");
  EXPECT_EQ(g.code, 1);
  EXPECT_EQ(g.err,
            "envpin: error: envpin.lock: envpin.lock is stale: envpin.yaml changed after it was locked\n"
            "envpin: hint: run 'envpin lock --manifest envpin.yaml' first\n");
  EXPECT_EQ(listing(), (std::vector<std::string>{"envpin.lock", "envpin.yaml", "requirements.lock"}));
}

// envpin size reads the lock alone: its sizes where recorded, the others counted; an edited lock
// is refused as verify refuses it; a stale one still has sizes to show, with a warning.
TEST_F(LockCli, SizeReadsTheLocksSizes) {
  write("envpin.yaml", kLockManifest);
  EXPECT_EQ(run("size").err,
            "envpin: error: envpin.lock: cannot read envpin.lock\n"
            "envpin: hint: run 'envpin lock': the sizes come from the lock\n");
  write_locked();
  Result r = run("size");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  apt      2 .debs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("200.9 kB"), std::string::npos) << r.out;          // 64432 + 136460
  EXPECT_NE(r.out.find("3 without a size"), std::string::npos) << r.out;  // the image and both wheels
  EXPECT_EQ(r.err, "");
  r = run("size --json");
  EXPECT_NE(r.out.find("\"total_bytes\": 200892"), std::string::npos) << r.out;
  write("envpin.yaml", std::string(kLockManifest).replace(std::string(kLockManifest).find("[jq, "), 5, "[jq, git, "));
  r = run("size");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(
      r.err.rfind(
          "envpin: warning: envpin.lock is stale (envpin.yaml changed after it was locked): these are its sizes", 0),
      0u)
      << r.err;
  write("envpin.yaml", kLockManifest);
  std::string text = *io::read_file(dir_ / "envpin.lock");
  text.replace(text.find("size = 136460"), 13, "size = 136461");
  write("envpin.lock", text);
  r = run("size");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
}

TEST_F(LockCli, MissingOrNewerLock) {
  write("envpin.yaml", kLockManifest);
  EXPECT_EQ(run("verify").err,
            "envpin: error: envpin.lock: cannot read envpin.lock\nenvpin: hint: run 'envpin lock' to create it\n");
  write_locked();
  std::string text = *io::read_file(dir_ / "envpin.lock");
  text.replace(text.find("lock-version = \"1.0\""), 20, "lock-version = \"2.0\"");
  write("envpin.lock", text);
  const Result r = run("verify");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.lock: lock-version 2.0 is not supported by this envpin (it reads 1.0)\n"
            "envpin: hint: upgrade envpin, or run 'envpin lock' to rewrite the lock\n");
}

TEST_F(LockCli, GenerateEmitsThePinnedArtifacts) {
  write_locked();
  const Result r = run("generate");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string dockerfile = *io::read_file(dir_ / "Dockerfile");
  EXPECT_NE(dockerfile.find("FROM --platform=linux/amd64 " + lock_.image->reference + "\n"), std::string::npos);
  EXPECT_NE(dockerfile.find("      jq=1.6-2.1+deb12u2 \\\n      libjq1=1.6-2.1+deb12u2 \\\n"), std::string::npos)
      << dockerfile;
  EXPECT_NE(dockerfile.find("COPY [\"requirements.lock\", \"/tmp/envpin/requirements.txt\"]\n"
                            "RUN python -m pip install --no-cache-dir --disable-pip-version-check --require-hashes "
                            "--no-deps \\\n      --index-url 'http://127.0.0.1:8000/simple' \\\n"
                            "      -r /tmp/envpin/requirements.txt\n"),
            std::string::npos)
      << dockerfile;
  // The venv sees the system's site-packages, where apt puts Python packages.
  EXPECT_NE(dockerfile.find("RUN python3 -m venv --system-site-packages /opt/venv\n"), std::string::npos);
  const std::string check = *io::read_file(dir_ / ".envpin/check_env.sh");
  EXPECT_NE(check.find("lock_digest='" + lock_.lock_digest + "'\n"), std::string::npos);
  EXPECT_NE(check.find("want_apt 'libjq1' '1.6-2.1+deb12u2'\n"), std::string::npos);
  EXPECT_NE(check.find("want_package 'envpin-dep' '==2.0.0' ''\n"), std::string::npos);
  // The same lock, the same bytes.
  const std::string before = dockerfile;
  ASSERT_EQ(run("generate").code, 0);
  EXPECT_EQ(*io::read_file(dir_ / "Dockerfile"), before);
}

TEST_F(LockCli, GenerateFromAMirrorUsesItAlone) {
  write_locked();
  ASSERT_EQ(run("generate").code, 0);
  const std::string online = *io::read_file(dir_ / "Dockerfile");
  Result r = run("generate --mirror http://127.0.0.1:8001/ --mirror-registry 127.0.0.1:5001");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string dockerfile = *io::read_file(dir_ / "Dockerfile");
  // FROM the mirror's registry by the platform manifest's digest: the lock's pin, another host.
  EXPECT_NE(dockerfile.find("FROM --platform=linux/amd64 127.0.0.1:5001/envpin/bookworm@" +
                            lock_.image->platforms.front().manifest + "\n"),
            std::string::npos)
      << dockerfile;
  EXPECT_NE(dockerfile.find("RUN echo 'deb [trusted=yes] http://127.0.0.1:8001/apt ./' > /tmp/envpin-apt.list \\\n"
                            " && apt-get -o Dir::Etc::SourceList=/tmp/envpin-apt.list -o "
                            "Dir::Etc::SourceParts=/tmp/envpin-apt.d update \\\n"),
            std::string::npos)
      << dockerfile;
  EXPECT_NE(dockerfile.find("--require-hashes --no-deps \\\n      --no-index --find-links "
                            "'http://127.0.0.1:8001/wheels/' \\\n      -r /tmp/envpin/requirements.txt\n"),
            std::string::npos)
      << dockerfile;
  // No other server is named but in the label that records where the base came from.
  EXPECT_EQ(dockerfile.find("127.0.0.1:8000"), std::string::npos) << dockerfile;
  const auto label = dockerfile.find("      org.opencontainers.image.base.name=\"127.0.0.1:5000/");
  EXPECT_NE(label, std::string::npos) << dockerfile;
  EXPECT_EQ(dockerfile.find("127.0.0.1:5000"), label + 42) << dockerfile;
  EXPECT_EQ(dockerfile.find("127.0.0.1:5000", label + 43), std::string::npos) << dockerfile;
  EXPECT_EQ(dockerfile.find("--index-url"), std::string::npos);
  // Without --mirror, the same bytes as before.
  ASSERT_EQ(run("generate").code, 0);
  EXPECT_EQ(*io::read_file(dir_ / "Dockerfile"), online);

  // What a mirror cannot build: no registry for a lock with an image, a URL that is not the web,
  // no lock at all. Each one line, nothing written.
  r = run("generate --mirror http://127.0.0.1:8001");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("envpin: error: generate --mirror needs --mirror-registry", 0), 0u) << r.err;
  r = run("generate --mirror file:///srv/mirror --mirror-registry 127.0.0.1:5001");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--mirror must be the http:// or https:// URL"), std::string::npos) << r.err;
  r = run("generate --mirror http://127.0.0.1:8001 --mirror-registry 127.0.0.1:5001/evil");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--mirror-registry must be a registry host[:port]"), std::string::npos) << r.err;
  EXPECT_EQ(*io::read_file(dir_ / "Dockerfile"), online);
  // A lock is data: one whose image has no single platform manifest (its digest recomputed) is
  // refused, not read past its end.
  lock::Lock two = lock_;
  two.image->platforms.push_back(two.image->platforms.front());
  two.image->platforms.back().platform = "linux/arm64";
  lock::seal(two);
  write("envpin.lock", lock::to_toml(two));
  r = run("generate --mirror http://127.0.0.1:8001 --mirror-registry 127.0.0.1:5001");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("has 2 platform manifests; a mirror holds one"), std::string::npos) << r.err;
  two.image->platforms.clear();
  lock::seal(two);
  write("envpin.lock", lock::to_toml(two));
  r = run("generate --mirror http://127.0.0.1:8001 --mirror-registry 127.0.0.1:5001");
  EXPECT_EQ(r.code, 1) << r.err;
  std::filesystem::remove(dir_ / "envpin.lock");
  r = run("generate --mirror http://127.0.0.1:8001 --mirror-registry 127.0.0.1:5001");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("generate --mirror needs envpin.lock"), std::string::npos) << r.err;
  // envpin mirror without a current lock: one error, no directory.
  r = run("mirror out");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("run 'envpin lock' first"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
}

TEST_F(LockCli, AptLookupReadsPlainAndCompressedIndexes) {
  const std::string snippet = std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/recorded/Packages-snippet";
  ASSERT_EQ(std::system(("gzip -c " + snippet + " > " + (dir_ / "Packages.gz").string()).c_str()), 0);
  ASSERT_EQ(std::system(("xz -c " + snippet + " > " + (dir_ / "Packages.xz").string()).c_str()), 0);
  const std::string jq =
      "jq=1.6-2.1+deb12u2 amd64 63984 sha256:f2303584378ac85f6d3a9ae8e46412196061681e81610d3b020abe4b5d389eb0 "
      "pool/main/j/jq/jq_1.6-2.1+deb12u2_amd64.deb\n";
  for (const std::string& index : {snippet, (dir_ / "Packages.gz").string(), (dir_ / "Packages.xz").string()}) {
    const Result r = run("apt-lookup --index " + index + " jq=1.6-2.1+deb12u2");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, jq);
  }
  const Result missing = run("apt-lookup --index " + snippet + " jq=9.9");
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err, "envpin: error: 'jq=9.9' is not in " + snippet +
                             "\nenvpin: hint: check the name and version against the index\n");
}

TEST_F(LockCli, SystemPythonNeedsVenv) {
  write("envpin.yaml",
        "envpin: 1\nname: x\nbase: debian:12\nos: debian12\napt: [python3]\n"
        "python: {version: '3.11', source: system}\n");
  const Result r = run("validate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml:6:35: python.source: system installs packages into a venv of the image's "
            "python3, but apt does not list python3-venv\nenvpin: hint: add python3-venv to apt\n");
}

// python.source: system gets the release's python3: another version is refused when the manifest
// is read (from the release's table) and when a lock says which python3 it installs.
TEST_F(LockCli, SystemPythonIsTheReleasesPython3) {
  const auto manifest = [](const std::string& version) {
    return "envpin: 1\nname: x\nbase: 127.0.0.1:5000/envpin/bookworm:12\nos: debian12\napt: [python3-venv]\n"
           "python: {version: '" +
           version + "', source: system}\n";
  };
  write("envpin.yaml", manifest("3.12"));
  Result r = run("validate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(
      r.err,
      "envpin: error: envpin.yaml:6:19: python.version '3.12' with python.source: system, but debian12's python3 is 3.11\n"
      "envpin: hint: set python.version to \"3.11\", or drop python.source: system to get Python 3.12 exactly\n");
  EXPECT_EQ(run("generate").code, 1);
  EXPECT_FALSE(fs::exists(dir_ / "Dockerfile"));
  // The lock knows the patch level: "3.11.4" is refused when bookworm's python3 is 3.11.2.
  for (const std::string version : {"3.11.4", "3.11.2", "3.11"}) {
    write("envpin.yaml", manifest(version));
    lock::Lock l = image_only_lock(manifest::load((dir_ / "envpin.yaml").string()));
    l.apt_sources = {{"deb.debian.org/debian", "http://deb.debian.org/debian"}};
    l.apt = {{"python3", "3.11.2-1+b1", "amd64", "deb.debian.org/debian", "", "pool/main/p/python3/python3.deb", 26316,
              std::string(64, 'e')}};
    lock::seal(l);
    write("envpin.lock", lock::to_toml(l));
    r = run("generate");
    if (version == "3.11.4") {
      EXPECT_EQ(r.code, 1);
      EXPECT_EQ(
          r.err,
          "envpin: error: envpin.yaml:6:19: python.version '3.11.4' with python.source: system, but the lock "
          "installs python3 3.11.2-1+b1\nenvpin: hint: set python.version to \"3.11.2\" and run 'envpin lock' again\n");
      EXPECT_FALSE(fs::exists(dir_ / "Dockerfile"));
    } else {
      EXPECT_EQ(r.code, 0) << version << ": " << r.err;
    }
  }
}

// A standalone Python's uv comes from an image: a lock from before uv was locked says so, and
// python.uv_image must be an image reference.
TEST_F(LockCli, UvImageUnpinnedByAnOldLockIsAWarning) {
  write("envpin.yaml",
        "envpin: 1\nname: x\nbase: 127.0.0.1:5000/envpin/bookworm:12\nos: ubuntu22.04\n"
        "python: {version: '3.11.9'}\n");
  write("envpin.lock", lock::to_toml(image_only_lock(manifest::load((dir_ / "envpin.yaml").string()))));
  const Result r = run("generate");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err,
            "envpin: warning: envpin.lock does not pin the uv image ghcr.io/astral-sh/uv:0.12.9 (another envpin "
            "wrote it): the Dockerfile names it by tag; run 'envpin lock' to pin it by digest\n");
  EXPECT_NE(io::read_file(dir_ / "Dockerfile")->find("FROM --platform=linux/amd64 ghcr.io/astral-sh/uv:0.12.9 AS uv\n"),
            std::string::npos);
  // A lock that pins another uv (an older envpin's) is not used for this one's uv either.
  lock::Lock old = image_only_lock(manifest::load((dir_ / "envpin.yaml").string()));
  const std::string d = "sha256:" + std::string(64, 'a');
  old.uv_image = lock::Image{"ghcr.io/astral-sh/uv:0.10.0",
                             "ghcr.io/astral-sh/uv:0.10.0@" + d,
                             d,
                             "application/vnd.oci.image.index.v1+json",
                             {{"linux/amd64", d, d}}};
  lock::seal(old);
  write("envpin.lock", lock::to_toml(old));
  EXPECT_EQ(run("generate").err, r.err);
  EXPECT_EQ(io::read_file(dir_ / "Dockerfile")->find("uv:0.10.0"), std::string::npos);
  write("envpin.yaml", "envpin: 1\nname: x\nos: ubuntu22.04\npython: {version: '3.11.9', uv_image: 'uv; rm -rf /'}\n");
  const Result bad = run("validate");
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(bad.err,
            "envpin: error: envpin.yaml:4:39: invalid image reference 'uv; rm -rf /'\n"
            "envpin: hint: write it as docker does, e.g. 'registry.internal/astral-sh/uv:0.12.9'\n");
}

}  // namespace
}  // namespace envpin
