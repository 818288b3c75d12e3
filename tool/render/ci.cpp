// SPDX-License-Identifier: Apache-2.0
// `envpin ci`: the pipeline that keeps the environment true on every change, for GitHub Actions
// (.github/workflows/envpin.yml) or GitLab CI (.envpin/gitlab-ci.yml, included from .gitlab-ci.yml).
// Every change: envpin installed (the release .deb, by its sha256), the lock checked against the
// manifest (envpin verify), generate's files checked (generate --check: exit 3 naming the file),
// the image built for linux/amd64 with the layer cache, check_env and the CPU smoke run in it. On
// the default branch, with jobs.push: envpin push and generate, the digest files kept as the
// run's artifacts. With a GPU runner named: the smoke again there, a GPU required.
// Facts, with their sources:
//   - "Pinning an action to a full length commit SHA is currently the only way to use an action as
//     an immutable release" (docs.github.com, security hardening for GitHub Actions). The SHAs
//     are the commits of these tags (read from the actions' repositories): actions/checkout v4.4.0,
//     docker/setup-buildx-action v3.12.0, docker/login-action v3.7.0, docker/build-push-action
//     v6.19.2, actions/upload-artifact v4.6.2 (the last as pinned across public workflows).
//   - Once `permissions:` is set every scope not named is none; pushing to GHCR with GITHUB_TOKEN
//     needs packages: write (docs.github.com, "Publishing Docker images"). Any other registry logs
//     in with its own secrets, so the token gets no packages scope there.
//   - build-push-action's GitHub cache: cache-from/cache-to type=gha (docs.docker.com, "Cache
//     management with GitHub Actions"); load: true puts the image in the runner's docker.
//   - GitLab: rules with $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH (docs.gitlab.com, predefined
//     variables); artifacts: paths; a masked variable never appears in the job log.
// Everything is written through yaml-cpp's emitter: a value is a quoted scalar, never YAML, and the
// shell reads values from variables, never from the script's text. Every value is one printable
// line: the manifest's file name, in the header's comment, is a YAML scalar with every control and
// non-ASCII character escaped; any other value with a control character is refused (a literal
// block, as the artifact paths, cannot escape one: a newline there is one more path).
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "render/render.hpp"

namespace envpin::render {
namespace {

struct Action {
  const char* uses;
  const char* version;
};
constexpr Action kCheckout{"actions/checkout@11d5960a326750d5838078e36cf38b85af677262", "v4.4.0"};
constexpr Action kBuildx{"docker/setup-buildx-action@8d2750c68a42422c14e847fe6c8ac0403b4cbd6f", "v3.12.0"};
constexpr Action kLogin{"docker/login-action@c94ce9fb468520275223c153574b00df6fe4bcc9", "v3.7.0"};
constexpr Action kBuildPush{"docker/build-push-action@10e90e3645eae34f1e60eeb005ba3a3d33f178e8", "v6.19.2"};
constexpr Action kUpload{"actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02", "v4.6.2"};

// The install step's script: envpin from the .deb by its sha256, skipped where envpin already is
// (a runner image with it, or a test's machine).
constexpr const char* kInstall =
    "if ! command -v envpin >/dev/null 2>&1; then\n"
    "  curl -fsSL --retry 3 -o /tmp/envpin.deb \"$ENVPIN_DEB_URL\"\n"
    "  echo \"$ENVPIN_DEB_SHA256  /tmp/envpin.deb\" | sha256sum -c -\n"
    "  as_root=''; [ \"$(id -u)\" = 0 ] || as_root=sudo\n"
    "  $as_root apt-get update -qq\n"
    "  $as_root apt-get install -y -qq /tmp/envpin.deb\n"
    "fi\n"
    "envpin --version\n";

// A script as a YAML literal block: its last newline is the block's own.
std::string block(std::string script) {
  while (!script.empty() && script.back() == '\n') script.pop_back();
  return script;
}

// `value` as one YAML scalar on one printable line: plain when YAML reads it as written, else
// double-quoted with every control and non-ASCII character escaped (a newline is "\n").
std::string yaml_line(std::string_view value) {
  YAML::Emitter e;
  e << YAML::EscapeNonAscii << std::string(value);
  const std::string out = e.c_str();
  if (out.find_first_of("\r\n") != std::string::npos || diag::invalid_utf8_at(out) != std::string::npos ||
      diag::control_at(out) != std::string::npos)
    throw diag::Error("internal: the YAML escaper left " + diag::quote(value) + " on more than one line");
  return out;
}

// Throws diag::Error unless `value` is one printable line: a value the caller did not check (the
// manifest's outputs, its registry) never adds a line, or a key, to the pipeline.
void one_line(const std::string& what, const std::string& value, std::optional<diag::Location> where = std::nullopt) {
  std::size_t at = diag::invalid_utf8_at(value);
  if (at == std::string::npos) at = diag::control_at(value);
  if (at != std::string::npos)
    throw diag::Error(what + " " + diag::quote(value) + " holds " + diag::describe_char_at(value, at) +
                          "; a CI pipeline carries each value on one printable line",
                      std::move(where), "give " + what + " without it");
}
void one_line(const std::string& what, const manifest::Located<std::string>& value) {
  one_line(what, value.value, value.where.file.empty() ? std::nullopt : std::optional(value.where));
}

std::string header(const manifest::Manifest& m, const std::string& how) {
  return "# Generated by `envpin ci " + how + "` from " + yaml_line(manifest_name(m)) +
         "; do not edit, run it again instead.\n"
         "# On every change: envpin verify (the lock is the manifest's), envpin generate --check (the\n"
         "# generated files are current; exit 3 names the first that differs), the image built for\n"
         "# linux/amd64, check_env and the CPU smoke in it.\n";
}

void step(YAML::Emitter& e, const std::string& name, const std::string& run) {
  e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name << YAML::Key << "run" << YAML::Value
    << YAML::Literal << block(run) << YAML::EndMap;
}

void uses(YAML::Emitter& e, const Action& a) {
  e << YAML::Key << "uses" << YAML::Value << a.uses << YAML::Comment(a.version);
}

void checkout(YAML::Emitter& e) {
  e << YAML::BeginMap;
  uses(e, kCheckout);
  e << YAML::Key << "with" << YAML::Value << YAML::BeginMap << YAML::Key << "persist-credentials" << YAML::Value
    << false << YAML::EndMap << YAML::EndMap;
}

std::string check_in_image(const std::string& image, bool gpu) {
  return std::string("docker run --rm --network none") + (gpu ? " --gpus all" : "") + " \"" + image +
         "\" envpin-check-env --smoke" + (gpu ? " --require-gpu" : " --allow-no-gpu") + "\n";
}

// The files a push job keeps: the record and those generate writes the digest into.
std::vector<std::string> pushed_paths(const manifest::Manifest& m) {
  std::vector<std::string> out{".envpin/push.json", m.outputs.apptainer.value, m.outputs.enroot.value};
  if (m.jobs->kubernetes) out.push_back(m.outputs.kubernetes.value);
  return out;
}

std::string registry_of(const manifest::Manifest& m) {
  return m.jobs->push->value.substr(0, m.jobs->push->value.find('/'));
}

std::string github(const manifest::Manifest& m, const CiOptions& o) {
  const std::string dockerfile = m.outputs.dockerfile.value;
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << "envpin";
  e << YAML::Key << "on" << YAML::Value << YAML::BeginMap << YAML::Key << "push" << YAML::Value << YAML::Null
    << YAML::Key << "pull_request" << YAML::Value << YAML::Null << YAML::EndMap;
  e << YAML::Key << "permissions" << YAML::Value << YAML::BeginMap << YAML::Key << "contents" << YAML::Value << "read"
    << YAML::EndMap;
  e << YAML::Key << "concurrency" << YAML::Value << YAML::BeginMap << YAML::Key << "group" << YAML::Value
    << "envpin-${{ github.ref }}" << YAML::Key << "cancel-in-progress" << YAML::Value << true << YAML::EndMap;
  e << YAML::Key << "env" << YAML::Value << YAML::BeginMap << YAML::Key << "ENVPIN_DEB_URL" << YAML::Value
    << YAML::DoubleQuoted << o.deb_url << YAML::Key << "ENVPIN_DEB_SHA256" << YAML::Value << YAML::DoubleQuoted
    << o.deb_sha256 << YAML::Key << "ENVPIN_DOCKERFILE" << YAML::Value << YAML::DoubleQuoted << dockerfile
    << YAML::EndMap;
  e << YAML::Key << "jobs" << YAML::Value << YAML::BeginMap;

  e << YAML::Key << "check" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "runs-on" << YAML::Value << "ubuntu-24.04";
  e << YAML::Key << "timeout-minutes" << YAML::Value << 60;
  e << YAML::Key << "steps" << YAML::Value << YAML::BeginSeq;
  checkout(e);
  step(e, "Install envpin", kInstall);
  step(e, "The lock is the manifest's", "envpin verify\n");
  step(e, "The generated files are current", "envpin generate --check\n");
  e << YAML::BeginMap;
  uses(e, kBuildx);
  e << YAML::EndMap;
  e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "Build the image (linux/amd64, layer cache)";
  uses(e, kBuildPush);
  e << YAML::Key << "with" << YAML::Value << YAML::BeginMap << YAML::Key << "context" << YAML::Value << "." << YAML::Key
    << "file" << YAML::Value << YAML::DoubleQuoted << dockerfile << YAML::Key << "platforms" << YAML::Value
    << "linux/amd64" << YAML::Key << "load" << YAML::Value << true << YAML::Key << "tags" << YAML::Value
    << "envpin-ci:check" << YAML::Key << "cache-from" << YAML::Value << "type=gha" << YAML::Key << "cache-to"
    << YAML::Value << "type=gha,mode=max" << YAML::EndMap << YAML::EndMap;
  step(e, "check_env and the CPU smoke in the image", check_in_image("envpin-ci:check", false));
  e << YAML::EndSeq << YAML::EndMap;

  if (!o.gpu_runner.empty()) {
    e << YAML::Key << "gpu-smoke" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "needs" << YAML::Value << "check";
    e << YAML::Key << "runs-on" << YAML::Value << YAML::Flow << YAML::BeginSeq << "self-hosted" << o.gpu_runner
      << YAML::EndSeq;
    e << YAML::Key << "timeout-minutes" << YAML::Value << 60;
    e << YAML::Key << "steps" << YAML::Value << YAML::BeginSeq;
    checkout(e);
    step(e, "Build the image (linux/amd64)",
         "docker build --platform linux/amd64 -f \"$ENVPIN_DOCKERFILE\" -t envpin-ci:gpu .\n");
    step(e, "check_env and the smoke on the GPU", check_in_image("envpin-ci:gpu", true));
    e << YAML::EndSeq << YAML::EndMap;
  }

  if (m.jobs && m.jobs->push) {
    const std::string registry = registry_of(m);
    const bool ghcr = registry == "ghcr.io";
    e << YAML::Key << "push" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "needs" << YAML::Value << "check";
    e << YAML::Key << "if" << YAML::Value
      << "github.event_name == 'push' && github.ref == format('refs/heads/{0}', github.event.repository.default_branch)";
    e << YAML::Key << "runs-on" << YAML::Value << "ubuntu-24.04";
    e << YAML::Key << "timeout-minutes" << YAML::Value << 60;
    // GITHUB_TOKEN logs in to ghcr.io only: another registry's login is its own secrets, and the
    // token keeps the workflow's read-only scope.
    e << YAML::Key << "permissions" << YAML::Value << YAML::BeginMap << YAML::Key << "contents" << YAML::Value
      << "read";
    if (ghcr) e << YAML::Key << "packages" << YAML::Value << "write";
    e << YAML::EndMap;
    e << YAML::Key << "steps" << YAML::Value << YAML::BeginSeq;
    checkout(e);
    step(e, "Install envpin", kInstall);
    e << YAML::BeginMap;
    uses(e, kLogin);
    e << YAML::Key << "with" << YAML::Value << YAML::BeginMap << YAML::Key << "registry" << YAML::Value << registry
      << YAML::Key << "username" << YAML::Value
      << (ghcr ? std::string("${{ github.actor }}") : "${{ secrets." + o.user_secret + " }}") << YAML::Key << "password"
      << YAML::Value << (ghcr ? std::string("${{ secrets.GITHUB_TOKEN }}") : "${{ secrets." + o.password_secret + " }}")
      << YAML::EndMap << YAML::EndMap;
    // No pipe: a run: step's default shell (bash -e) has no pipefail, so `envpin push | tee`
    // would pass with a failed push.
    step(
        e, "Push the image by digest, then write the digest into the cluster files",
        "envpin push > \"$RUNNER_TEMP/envpin-pushed\"\ncat \"$RUNNER_TEMP/envpin-pushed\" >> \"$GITHUB_STEP_SUMMARY\"\n"
        "envpin generate\n");
    std::string paths;
    for (const std::string& p : pushed_paths(m)) paths += p + "\n";
    e << YAML::BeginMap;
    uses(e, kUpload);
    e << YAML::Key << "with" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "envpin-pushed"
      << YAML::Key << "path" << YAML::Value << YAML::Literal << block(paths) << YAML::EndMap << YAML::EndMap;
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndMap << YAML::EndMap;
  return header(m, "--github") + e.c_str() + "\n";
}

// GitLab: one include file; the shell reads every value from a variable.
std::string gitlab(const manifest::Manifest& m, const CiOptions& o) {
  const bool push = m.jobs && m.jobs->push;
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "stages" << YAML::Value << YAML::Flow << YAML::BeginSeq << "envpin-check"
    << "envpin-image";
  if (push) e << "envpin-ship";
  e << YAML::EndSeq;
  e << YAML::Key << "variables" << YAML::Value << YAML::BeginMap << YAML::Key << "ENVPIN_DEB_URL" << YAML::Value
    << YAML::DoubleQuoted << o.deb_url << YAML::Key << "ENVPIN_DEB_SHA256" << YAML::Value << YAML::DoubleQuoted
    << o.deb_sha256 << YAML::Key << "ENVPIN_DOCKERFILE" << YAML::Value << YAML::DoubleQuoted
    << m.outputs.dockerfile.value;
  if (push) e << YAML::Key << "ENVPIN_REGISTRY" << YAML::Value << YAML::DoubleQuoted << registry_of(m);
  e << YAML::EndMap;
  const auto job = [&](const char* name, const char* stage, const std::vector<std::string>& script) {
    e << YAML::Key << name << YAML::Value << YAML::BeginMap << YAML::Key << "stage" << YAML::Value << stage;
    e << YAML::Key << "script" << YAML::Value << YAML::BeginSeq;
    for (const std::string& s : script) e << YAML::Literal << block(s);
    e << YAML::EndSeq;
  };
  job("envpin-check", "envpin-check", {kInstall, "envpin verify\n", "envpin generate --check\n"});
  e << YAML::EndMap;
  const std::string build =
      "docker build --platform linux/amd64 -f \"$ENVPIN_DOCKERFILE\" -t \"envpin-ci:$CI_COMMIT_SHORT_SHA\" .\n";
  job("envpin-image", "envpin-image", {build, check_in_image("envpin-ci:$CI_COMMIT_SHORT_SHA", false)});
  e << YAML::EndMap;
  if (!o.gpu_runner.empty()) {
    job("envpin-gpu-smoke", "envpin-image", {build, check_in_image("envpin-ci:$CI_COMMIT_SHORT_SHA", true)});
    e << YAML::Key << "tags" << YAML::Value << YAML::Flow << YAML::BeginSeq << o.gpu_runner << YAML::EndSeq;
    e << YAML::EndMap;
  }
  if (push) {
    job("envpin-push", "envpin-ship",
        {kInstall,
         // A login of this job's own, removed with it: the password from the masked variable on
         // standard input, never in a command line.
         "export DOCKER_CONFIG=\"$(mktemp -d)\"\n"
         "trap 'rm -rf \"$DOCKER_CONFIG\"' EXIT\n"
         "printf '%s' \"$" +
             o.password_secret + "\" | docker login \"$ENVPIN_REGISTRY\" -u \"$" + o.user_secret +
             "\" --password-stdin\n"
             "envpin push\n"
             "envpin generate\n"});
    e << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "if" << YAML::Value
      << "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH" << YAML::EndMap << YAML::EndSeq;
    e << YAML::Key << "artifacts" << YAML::Value << YAML::BeginMap << YAML::Key << "paths" << YAML::Value
      << pushed_paths(m) << YAML::EndMap;
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  return header(m, "--gitlab") + e.c_str() + "\n";
}

}  // namespace

std::vector<Artifact> ci(const manifest::Manifest& m, const CiOptions& o) {
  one_line("--deb", o.deb_url);
  one_line("--deb-sha256", o.deb_sha256);
  one_line("--gpu-runner", o.gpu_runner);
  one_line("--user-secret", o.user_secret);
  one_line("--password-secret", o.password_secret);
  one_line("outputs.dockerfile", m.outputs.dockerfile);
  if (m.jobs && m.jobs->push) {
    one_line("jobs.push", *m.jobs->push);
    one_line("outputs.apptainer", m.outputs.apptainer);
    one_line("outputs.enroot", m.outputs.enroot);
    if (m.jobs->kubernetes) one_line("outputs.kubernetes", m.outputs.kubernetes);
  }
  if (o.github) return {{".github/workflows/envpin.yml", github(m, o), false}};
  return {{".envpin/gitlab-ci.yml", gitlab(m, o), false}};
}

}  // namespace envpin::render
