// SPDX-License-Identifier: Apache-2.0
// PEP 508 environment markers evaluated for the image envpin builds (CPython on linux/amd64), so
// that `envpin init` can choose between a requirement's alternatives
// ("x>=4.31; python_version < '3.10'" and "x>=4.37; python_version >= '3.10'").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace envpin::init {

// Whether `marker` holds in the image with Python `python` ("3.10" or "3.10.4"): true, false,
// or nullopt when it cannot tell (an `extra`, the kernel's release, a number past 64 bits, a
// marker that is not PEP 508's grammar: manifest::parse_marker).
// Variables and grammar: https://packaging.python.org/en/latest/specifications/dependency-specifiers/
std::optional<bool> marker_holds(std::string_view marker, const std::string& python);

}  // namespace envpin::init
