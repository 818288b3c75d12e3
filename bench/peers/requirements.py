# SPDX-License-Identifier: Apache-2.0
# A requirements file read as pip reads it: every line that is not a comment through the
# packaging library's PEP 508 parser (pip's vendored copy where packaging is not installed), one
# entry per distribution. Run as the peer of `envpin init`.
import sys

try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement

found = {}
with open(sys.argv[1]) as f:
    for line in f:
        line = line.split(" #")[0].strip()
        if line and not line.startswith("#"):
            r = Requirement(line)
            found[r.name.lower()] = str(r)
print(len(found), "distributions")
