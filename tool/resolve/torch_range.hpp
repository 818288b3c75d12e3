// SPDX-License-Identifier: Apache-2.0
// A torch specifier ("torch>=2.7", a bare "torch") resolved against envpin's release table:
// which minors it allows, and the requirement that pins the one the CUDA policy chose.
#pragma once

#include <string>
#include <string_view>

#include "manifest/requirement.hpp"

namespace envpin::resolve {

// True when some release of `minor` ("2.9") satisfies every clause of `spec` (">=2.7,<2.10",
// "~=2.7.1", "!=2.8.*"; empty: any). Release versions only: numeric components compared with
// zero padding, ".*" wildcards for == and !=.
bool minor_satisfies(std::string_view minor, std::string_view spec);

// True when the release version `version` ("1.24.2") satisfies every clause of `spec`
// (">=1.20,<2", "==1.24.*"; empty: any), as minor_satisfies compares.
bool version_satisfies(std::string_view version, std::string_view spec);

// `r` with "==<minor>.*" added when the policy chose `minor` for a torch range; `r` itself
// otherwise. `minor` empty: no range was resolved.
manifest::Requirement pin_torch_range(const manifest::Requirement& r, const std::string& minor);

}  // namespace envpin::resolve
