// SPDX-License-Identifier: Apache-2.0
// Which conda names are the same project on PyPI (conda_pypi.cpp says how each was checked).
#pragma once

#include <span>
#include <string_view>

namespace envpin::init::detail {

// True when the conda package `conda_name` is the PyPI project of the same (normalized) name.
bool same_project_on_pypi(std::string_view conda_name);

// The two lists, for the unit test (sorted, normalized, disjoint).
std::span<const std::string_view> conda_same_grayskull();
std::span<const std::string_view> conda_same_feedstock();

}  // namespace envpin::init::detail
