// SPDX-License-Identifier: Apache-2.0
#include <map>

#include "pin/sha256.hpp"
#include "render/quote.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::render {
namespace {

std::string joined_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + sh_quote(w);
  return out;
}

std::string specifiers_text(const manifest::Requirement& r) {
  std::string out;
  for (const auto& s : r.specifiers) out += (out.empty() ? "" : ",") + s.op + s.version;
  return out;
}

}  // namespace

Artifact check_env(const manifest::Manifest& m, const resolve::Environment& env) {
  Data d;
  d.set("manifest_name", manifest_name(m));
  d.set("manifest_sha256", pin::sha256_hex(m.source));
  d.set("manifest_name_sh", sh_quote(manifest_name(m)));

  if (!env.os_id.empty()) {
    Data os;
    os.set("id", sh_quote(env.os_id));
    os.set("version", sh_quote(env.os_version));
    d.set("os", os);
  } else {
    d.set("os", false);
  }
  d.set("machines", joined_words(env.machines));
  std::string platform_list;
  for (const auto& p : env.platforms) platform_list += (platform_list.empty() ? "" : ",") + p;
  d.set("platform_list", platform_list);

  if (env.cuda) {
    Data cuda;
    cuda.set("toolkit", sh_quote(env.cuda->toolkit));
    cuda.set("driver_floor", sh_quote(env.cuda->driver_floor));
    std::vector<std::string> caps;
    for (int sm : env.cuda->sms) caps.push_back(resolve::capability_text(sm));
    std::string cap_words;
    for (const auto& c : caps) cap_words += (cap_words.empty() ? "" : " ") + c;
    cuda.set("capabilities", sh_quote(cap_words));
    cuda.set("driver_packaged", sh_quote(env.cuda->driver_packaged));
    cuda.set("driver_minor_compat", sh_quote(env.cuda->driver_minor_compat));
    // The image's kernels: SASS for every fleet GPU, PTX for the newest.
    cuda.set("sass", sh_quote(cap_words));
    cuda.set("ptx", sh_quote(resolve::capability_text(env.cuda->sms.back())));
    d.set("cuda", cuda);
  } else {
    d.set("cuda", false);
  }

  // apt: the lock's whole closure at exact versions, else what the manifest asks for.
  Data apt{Data::type::list};
  if (env.lock && !env.lock->apt.empty()) {
    for (const auto& p : env.lock->apt) {
      Data item;
      item.set("name", sh_quote(p.name));
      item.set("version", sh_quote(p.version));
      apt << item;
    }
  } else {
    std::map<std::string, std::string> wanted;
    for (const auto& a : m.apt) wanted[a.value.name] = a.value.version;
    for (const auto& [name, version] : wanted) {
      Data item;
      item.set("name", sh_quote(name));
      item.set("version", sh_quote(version));
      apt << item;
    }
  }
  d.set("apt", apt);
  d.set("has_apt", !m.apt.empty());
  if (env.lock) {
    Data lock;
    lock.set("digest", sh_quote(env.lock->lock_digest));
    d.set("lock", lock);
  } else {
    d.set("lock", false);
  }

  if (m.python) {
    Data py;
    py.set("version", sh_quote(m.python->version.value));
    // One entry per distribution, sorted by normalized name.
    std::map<std::string, const manifest::Requirement*> reqs;
    for (const auto& r : m.python->packages) reqs[r.value.normalized] = &r.value;
    for (const auto& r : m.python->requirement_lines) reqs[r.value.normalized] = &r.value;
    Data packages{Data::type::list};
    if (env.lock && !env.lock->python.empty()) {
      // Every locked distribution, dependencies included, at its exact version.
      for (const auto& p : env.lock->python) {
        Data item;
        item.set("name", sh_quote(p.name));
        item.set("spec", sh_quote("==" + p.version));
        item.set("marker", sh_quote(""));
        packages << item;
      }
    } else {
      for (const auto& [name, req] : reqs) {
        Data p;
        p.set("name", sh_quote(name));
        p.set("spec", sh_quote(specifiers_text(*req)));
        p.set("marker", sh_quote(req->marker));
        packages << p;
      }
    }
    py.set("packages", packages);
    d.set("python", py);
  } else {
    d.set("python", false);
  }

  std::map<std::string, std::string> env_values;
  Data env_list{Data::type::list};
  for (const auto& e : m.env) {
    env_values[e.name.value] = e.value.value;
    Data item;
    item.set("name", e.name.value);
    item.set("value", sh_quote(e.value.value));
    env_list << item;
  }
  d.set("env", env_list);

  Data secrets{Data::type::list};
  for (const auto& s : m.secrets) {
    Data item;
    item.set("name", s.value);
    secrets << item;
  }
  d.set("secrets", secrets);

  Data paths{Data::type::list};
  for (const auto& p : m.paths) {
    Data item;
    item.set("name", sh_quote(p.name.value));
    item.set("value", sh_path_word(p.value.value, [&](const std::string& n) { return env_values[n]; }));
    paths << item;
  }
  d.set("paths", paths);
  d.set("has_env", !m.env.empty());
  d.set("has_secrets", !m.secrets.empty());
  d.set("has_paths", !m.paths.empty());
  d.set("needs_satisfies", m.python.has_value() || env.cuda.has_value());
  return {m.outputs.check_env.value, render_template("check_env.sh.mustache", d), true};
}

}  // namespace envpin::render
