// SPDX-License-Identifier: Apache-2.0
// envpin push: the job image with the project in it, sent to a registry, and the digest the
// registry answered recorded in .envpin/push.json, which `envpin generate` writes into every file
// that names the image (.envpin/kubernetes.yaml, the enroot/Pyxis and Apptainer scripts), and
// refuses once the project or the lock changed since the push. The tree is writable by every job
// and container, so its record is believed only when envpin's private copy, kept outside it, agrees.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "diag/terminal.hpp"
#include "manifest/model.hpp"
#include "render/artifact.hpp"

namespace envpin::workflow {

// What one push sent, as .envpin/push.json holds it.
struct PushRecord {
  std::string reference;  // REGISTRY/REPOSITORY:TAG as pushed
  std::string digest;     // sha256:HEX, the registry's answer to the push
  std::string image;      // the job image it was built on (run.sh's image=)
  std::string tree;       // sha256:HEX of the project as the image holds it (push_tree)
};

// <project>/.envpin/push.json.
std::filesystem::path push_record_path(const manifest::Manifest& m);
// The record, read as data: at most 64 KiB, a JSON object of exactly these four strings, each in
// its grammar. None when there is no file; throws diag::Error (the file named, the fix) otherwise.
std::optional<PushRecord> read_push_record(const manifest::Manifest& m);
PushRecord parse_push_record(const std::string& text, const std::filesystem::path& file);
std::string push_record_json(const PushRecord& r);

// The digest in `docker push`'s output for `tag` ("TAG: digest: sha256:HEX size: N", wherever
// the line is: notes may follow it); empty when there is none.
std::string digest_from_push_output(std::string_view output, std::string_view tag);

// The project as the pushed image holds it: every path the build context sends (.dockerignore,
// the secret rules), with envpin's planned bytes for the artifacts among them, hashed in order
// (kind, path, mode, content's sha256). Equal trees give equal images; the record and the files
// that name the pushed digest are left out of the image, so writing them changes nothing.
std::string push_tree(const manifest::Manifest& m, const std::vector<render::Artifact>& planned);

// The registry repository of a reference (REGISTRY/REPO[:TAG] without the tag).
std::string push_repository(const std::string& reference);

// Where envpin push keeps its own copy of each record, outside the project tree that every job and
// container can write: ${XDG_STATE_HOME:-$HOME/.local/state}/envpin/push/<sha256 of the project's
// canonical absolute path>.json (the directories mode 0700). Empty when neither variable names an
// absolute directory.
std::filesystem::path private_record_path(const manifest::Manifest& m);

// Writes `r` to private_record_path atomically, the directories envpin/ and envpin/push/ made (never
// through a link), this user's and mode 0700. Throws diag::Error.
void keep_push_record(const manifest::Manifest& m, const PushRecord& r);

// Why .envpin/push.json's record `r` is not believed: "" when the private copy envpin push kept
// (private_record_path) holds the same record, else a clause ("envpin push did not record it on
// this machine ...", "its digest differs from ..."). Never throws: an unreadable copy is a reason.
std::string push_record_unvouched(const manifest::Manifest& m, const PushRecord& r);

// Whether envpin push kept a copy of a record for this project on this machine (private_record_path).
bool has_private_record(const manifest::Manifest& m);

// For a record pushed from another machine (a clone, a cluster's login node: no private copy here),
// the registry's word: "" when it serves the record's digest in its repository (the manifest read
// back by digest with skopeo and hashed here, as envpin push confirms its own push), else a clause
// saying why not. Never throws.
std::string registry_unvouched(const PushRecord& r);

// For `envpin submit --pushed`: throws diag::Error unless jobs.push is set, envpin push recorded an
// image, the project is still the tree it holds (generate's judgement, made again now: an edit
// since the last generate counts) and .envpin/enroot.sbatch names it (generate ran since).
void require_pushed(const manifest::Manifest& m);

struct PushRequest {
  std::string manifest = "envpin.yaml";
  std::string reference;              // empty: jobs.push
  std::vector<std::string> insecure;  // registries read back without TLS verification (loopback always is)
};

// The host of a registry name: HOST[:PORT] or [IPV6][:PORT] without its port and brackets.
std::string registry_host(const std::string& registry);
// True for a numeric address in 127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104.
bool loopback_address(std::string_view address);
// The numeric addresses `host` resolves to (getaddrinfo: /etc/hosts, DNS); empty when it does not.
std::vector<std::string> host_addresses(const std::string& host);

// Whether skopeo reads `registry` without TLS verification: when `insecure` names it, or when its
// host resolves (`resolve`) and every address it has is loopback, as docker treats 127.0.0.0/8 and
// ::1 ("localhost" too). Never by how the name looks: 127.example.com keeps TLS.
bool registry_without_tls(const std::string& registry, const std::vector<std::string>& insecure,
                          std::vector<std::string> (*resolve)(const std::string&) = host_addresses);

// skopeo's command line that reads REPOSITORY@DIGEST's manifest back: docker's configuration file
// (`DOCKER_CONFIG`'s, or ~/.docker's: its path only, envpin never opens it), docker's trust for the
// registry (/etc/docker/certs.d/HOST:PORT) when there is some, else no TLS verification where
// registry_without_tls says so. The bytes are hashed by push either way.
std::vector<std::string> manifest_read_argv(const std::string& repository, const std::string& by_digest,
                                            const std::vector<std::string>& insecure);

struct Pushed {
  PushRecord record;
  bool unchanged = false;  // the record already named this tree and digest
};

// Builds the job image (run.sh --prepare), then the image with the project at the workdir from the
// build context's tar, pushes it with the engine (whose own configuration holds any credentials:
// envpin reads none), takes the digest from the push's own output, reads that manifest back from
// the registry by digest (skopeo, with docker's login and trust) and hashes its bytes, and only then
// replaces the record: first the private copy (private_record_path), then .envpin/push.json. A link
// at .envpin/ or at the record is refused before anything is built. Progress and the engine's output go to `log`.
// Throws diag::Error, the record untouched.
Pushed push(const PushRequest& request, std::ostream& log, diag::Progress& progress);

}  // namespace envpin::workflow
