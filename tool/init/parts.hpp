// SPDX-License-Identifier: Apache-2.0
// What envpin init's readers share (tool/init/init.cpp: requirements files, a working
// environment, the draft; conda.cpp, pyproject.cpp, dockerfile.cpp: the other inputs). Internal
// to tool/init.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "init/init.hpp"

namespace envpin::init::detail {

// The text of an input file: regular, at most 1 MiB, no NUL. Throws diag::Error.
std::string read_input(const std::filesystem::path& file);
// "requirements.txt:12": where a value came from.
std::string where(const std::filesystem::path& file, int line);
std::string trim(std::string s);
// An index URL without its credentials ("user:token@"), which are a note, never a value.
std::string index_url(const std::string& url, const std::string& from, Draft& d);
// Adds a note once, any credential in it replaced by "<credential>".
void note(Draft& d, const std::string& text);
// Sets a single value, refusing a second, different one with both origins named.
void set_once(std::optional<Value>& slot, Value v, const std::string& what);
// One logical line of a requirements file (or of a conda environment's pip: list); `stack`
// holds the files being read, for -r cycles.
void requirement_line(const std::string& raw, const std::filesystem::path& file, int line, Draft& d,
                      std::vector<std::filesystem::path>& stack, const std::string& from_suffix = {});

// The torch index of CUDA `cuda`'s variant for a pinned torch in `d` (from `cuda_from`); an error
// when that torch release never had wheels for that CUDA version.
void torch_variant_index(Draft& d, const std::string& cuda, const std::string& cuda_from);

}  // namespace envpin::init::detail
