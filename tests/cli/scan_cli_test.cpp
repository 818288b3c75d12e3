// SPDX-License-Identifier: Apache-2.0
// `envpin scan` on a planted tree, on this repository (no findings), and generate's refusal to
// let a secret file into the build context. The planted paths and credentials are split across
// string literals so that this source file itself holds none.
#include <gtest/gtest.h>

#include "cli/cli_fixture.hpp"

namespace envpin {
namespace {

class ScanCli : public Cli {
 protected:
  void plant() {
    fs::create_directories(dir_ / "p/src");
    fs::create_directories(dir_ / "p/ignored");
    write("p/envpin.yaml",
          "envpin: 1\nname: planted\nenv:\n  DATA_DIR: /data\n  HF_TOKEN: hf_"
          "abcdefghijklmnopqrstuvwxyz0123456789\n"
          "  WANDB_API_KEY: \"1234\"\n");
    write("p/src/train.py",
          "import os\n\nDATA = '/Us"
          "ers/alice/datasets/imagenet'\nOUT = os.environ['OUT']\n");
    write("p/config.yaml",
          "checkpoints: /ho"
          "me/bob/ckpt/run1\n");
    write("p/notes.txt",
          "copied from C:\\Us"
          "ers\\carol\\Desktop\\\n");
    write("p/.env",
          "AWS_ACCESS_KEY_ID=AKIA"
          "ABCDEFGHIJKLMNOP\n");
    write("p/.gitignore", "ignored/\n");
    write("p/ignored/old.py",
          "X = '/ho"
          "me/dave/old/'\n");
    std::string binary(
        "\0\0/Us"
        "ers/eve/bin/\0",
        18);
    write("p/model.bin", binary);
  }
};

TEST_F(ScanCli, FindsPlantedPathsAndSecrets) {
  plant();
  const Result r = run("scan p");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out,
            "p/.env: secret file in the docker build context (not excluded by .dockerignore)\n"
            "  fix: run 'envpin generate', whose .dockerignore excludes it, or add it to .dockerignore\n"
            "p/.env:1:19: a credential is written in this file ('AKIAABCD...')\n"
            "  fix: remove it, rotate it, and pass it at run time (manifest secrets)\n"
            "p/config.yaml:1:14: hard-coded host path '/ho"
            "me/bob/' (exists only on one machine)\n"
            "  fix: read it from the environment (e.g. a DATA_DIR named in the manifest's env and paths) or make it "
            "relative to the project\n"
            "p/envpin.yaml:5:13: a credential is written in this file ('hf_abcde...')\n"
            "  fix: remove it, rotate it, and pass it at run time (manifest secrets)\n"
            "p/envpin.yaml:5:13: env.HF_TOKEN holds what looks like a credential\n"
            "  fix: move HF_TOKEN to secrets: [HF_TOKEN] and pass it at run time\n"
            "p/envpin.yaml:6:18: env.WANDB_API_KEY looks like a secret baked into the image\n"
            "  fix: move WANDB_API_KEY to secrets: [WANDB_API_KEY] and pass it at run time\n"
            "p/notes.txt:1:13: hard-coded host path 'C:\\Us"
            "ers\\carol\\' (exists only on one machine)\n"
            "  fix: read it from the environment (e.g. a DATA_DIR named in the manifest's env and paths) or make it "
            "relative to the project\n"
            "p/src/train.py:3:9: hard-coded host path '/Us"
            "ers/alice/' (exists only on one machine)\n"
            "  fix: read it from the environment (e.g. a DATA_DIR named in the manifest's env and paths) or make it "
            "relative to the project\n");
  EXPECT_EQ(r.err, "envpin: scan: 6 text file(s), 8 finding(s)\n");
  // Once generate wrote a .dockerignore, the .env is out of the context.
  ASSERT_EQ(run("generate -f p/envpin.yaml").code, 0);
  EXPECT_EQ(run("scan p").out.find("secret file in the docker build context"), std::string::npos);
}

TEST_F(ScanCli, JsonAndSkippedFiles) {
  plant();
  write("p/huge.txt", std::string(5u << 20, 'x'));
  const Result r = run("scan p --json");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("\"schema\": \"envpin.scan/1\""), std::string::npos);
  EXPECT_NE(r.out.find("\"kind\": \"host-path\""), std::string::npos);
  EXPECT_NE(r.out.find("\"p/huge.txt: 5242880 bytes, too large to scan\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("hf_"
                       "abcdefghijklmnop"),
            std::string::npos)
      << "a finding never repeats the secret";
}

TEST_F(ScanCli, ADockerfilesPathsAreTheImages) {
  write("p/Dockerfile",
        "FROM debian:12\nWORKDIR /home/"
        "appuser/src\nENV HF_TOKEN=hf_"
        "abcdefghijklmnopqrstuvwxyzABCDEFGH\n");
  write("p/train.py",
        "DATA = '/home/"
        "alice/data'\n");
  const Result r = run("scan p");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out.find("Dockerfile:2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p/Dockerfile:3:14: a credential is written in this file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p/train.py:1:9: hard-coded host path '/home/"
                       "alice/'"),
            std::string::npos)
      << r.out;
}

TEST_F(ScanCli, WithoutAManifestTheSecretFilesAnyCopyWouldCarryAreNamed) {
  // A project with a Dockerfile and no envpin.yaml: docker build and rsync send the .env (a
  // .gitignore does not stop them); only the project's own .dockerignore leaves a file out.
  write("p/Dockerfile", "FROM debian:12\nCOPY . /src\n");
  write("p/.env", "HF_TOKEN=x\n");
  write("p/.gitignore", ".env\n");
  write("p/deploy/server.key", "k\n");
  write("p/.ssh/id_ed25519", "k\n");
  write("p/.dockerignore", ".ssh\n");
  const Result r = run("scan p");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out,
            "p/.env: secret file in the docker build context (not excluded by .dockerignore)\n"
            "  fix: add it to .dockerignore (the one 'envpin generate' writes leaves out every secret file)\n"
            "p/deploy/server.key: secret file in the docker build context (not excluded by .dockerignore)\n"
            "  fix: add it to .dockerignore (the one 'envpin generate' writes leaves out every secret file)\n");
  EXPECT_EQ(r.err, "envpin: scan: 5 text file(s), 2 finding(s)\n");
  write("p/.dockerignore", ".ssh\n.env\n*.key\n**/*.key\n");
  EXPECT_EQ(run("scan p").code, 0);
}

// A committed file that names this machine: the project's own absolute path, the user's home
// (a cluster's, which /home/<name>/ does not match), an editor modeline with an absolute schema.
// envpin init's own modeline is relative, and generate writes the schema it names (issue 48:
// init wrote this machine's install path into envpin.yaml).
TEST_F(ScanCli, ThisMachinesPathsAndAnAbsoluteSchemaAreFound) {
  write("requirements.txt", "numpy==1.26.4\n");
  ASSERT_EQ(run("init").code, 0);
  const std::string manifest = io::read_file(dir_ / "envpin.yaml").value_or("");
  EXPECT_TRUE(manifest.starts_with("# yaml-language-server: $schema=.envpin/envpin.schema.json\n")) << manifest;
  ASSERT_EQ(run("generate").code, 0);
  EXPECT_EQ(io::read_file(dir_ / ".envpin/envpin.schema.json").value_or("none"), run("schema").out);
  Result r = run("scan .", "HOME=/gpfs/u/alice");
  EXPECT_EQ(r.code, 0) << "what init and generate wrote names nothing of this machine:\n" << r.out;

  const std::string here = fs::canonical(dir_).generic_string();
  write("train.py", "DATA = '" + here +
                        "/data'\nCACHE = '/gpfs/u/al"
                        "ice/.cache'\nOTHER = '/gpfs/u/al"
                        "icex/'\n");
  write("envpin.yaml",
        "# yaml-language-server: $sch"
        "ema=/usr/share/envpin/envpin.schema.json\n" +
            manifest.substr(manifest.find('\n') + 1));
  r = run("scan .", "HOME=/gpfs/u/alice");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("envpin.yaml:1:33: the editor's schema is named by an absolute path"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("train.py:1:9: this machine's own path '" + here + "'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("train.py:2:10: this machine's own path '/gpfs/u/alice'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("train.py:3"), std::string::npos) << "/gpfs/u/alicex is another user's\n" << r.out;
}

// Issue 61: Kaggle's, PostgreSQL's, Vault's and rclone's credential files, a pip.conf with a
// password in a URL and a vendored .git/config with a token went into a pushed image, and scan
// said nothing. Each is named, at any depth; the same configuration files without one are not.
TEST_F(ScanCli, CredentialFilesAtAnyDepthAreNamed) {
  write("p/Dockerfile", "FROM debian:12\nCOPY . /src\n");
  write("p/.kaggle/kaggle.json", "{\"username\": \"u\", \"key\": \"k\"}\n");
  write("p/db/.pgpass", "db:5432:*:u:p\n");
  write("p/.vault-token", "s.x\n");
  write("p/conf/rclone.conf", "[s3]\ntype = s3\n");
  write("p/pip.conf", "[global]\nindex-url = https://alice:s3cret@pypi.example.com/simple\n");
  write("p/tools/pip.conf", "[global]\nindex-url = https://pypi.example.com/simple\n");
  write("p/vendor/lib/.git/config", "[remote \"origin\"]\n\turl = https://oauth2:tok@gitlab.example.com/o/r.git\n");
  write("p/vendor/other/.git/config", "[remote \"origin\"]\n\turl = git@github.com:o/r.git\n");
  const Result r = run("scan p");
  EXPECT_EQ(r.code, 1);
  std::vector<std::string> named;
  for (std::size_t at = 0; at < r.out.size();) {
    const std::size_t end = r.out.find('\n', at);
    const std::string line = r.out.substr(at, end - at);
    if (!line.starts_with("  fix: ")) named.push_back(line.substr(0, line.find(": ")));
    at = end == std::string::npos ? r.out.size() : end + 1;
  }
  EXPECT_EQ(named, (std::vector<std::string>{"p/.kaggle/kaggle.json", "p/.vault-token", "p/conf/rclone.conf",
                                             "p/db/.pgpass", "p/pip.conf", "p/vendor/lib/.git/config"}))
      << r.out;
  EXPECT_NE(r.out.find("p/pip.conf: credentials in a configuration file"), std::string::npos) << r.out;
}

TEST_F(ScanCli, ThisRepositoryIsClean) {
  const Result r = run(std::string("scan ") + ENVPIN_SOURCE_DIR);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "");
}

TEST_F(ScanCli, GenerateRefusesASecretInTheContext) {
  write("envpin.yaml", "envpin: 1\nname: x\ncontext: {exclude: ['!.env']}\n");
  write(".env", "TOKEN=1\n");
  const Result r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml:3:21: context.exclude pattern '!.env' would bring the secret file '.env' "
            "into the build context\n"
            "envpin: hint: remove that '!' pattern, or list the file under context.allow_secrets\n");
  EXPECT_EQ(listing(), (std::vector<std::string>{".env", "envpin.yaml"}));
  write("envpin.yaml", "envpin: 1\nname: x\ncontext: {exclude: ['!.env'], allow_secrets: [.env]}\n");
  EXPECT_EQ(run("generate").code, 0);
}

}  // namespace
}  // namespace envpin
