# SPDX-License-Identifier: Apache-2.0
# The large check_env input, shared by the count guards (tests/perf/counts.sh) and the benchmark
# (bench/run.sh): a venv whose site-packages holds N *.dist-info (every one pinned in the
# manifest) and the manifest pinning them plus the apt packages listed in APT_PINS (name=version
# lines, the machine's own dpkg database), as a container start sees them.
#   python3 check_fixture.py VENV N MANIFEST APT_PINS
import glob
import os
import sys

venv, n, manifest, apt_pins = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
site = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))[0]
lines = []
for i in range(n):
    name, version = "bench-pkg-%03d" % i, "%d.%d.%d" % (1 + i % 5, i % 13, i % 7)
    info = os.path.join(site, "bench_pkg_%03d-%s.dist-info" % (i, version))
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n" % (name, version))
    open(os.path.join(info, "RECORD"), "w").close()
    lines.append('    - "%s==%s"' % (name, version))
py = "%d.%d" % sys.version_info[:2]
with open(manifest, "w") as f:
    f.write("envpin: 1\nname: bench\npython:\n  version: \"%s\"\n  packages:\n%s\n" % (py, "\n".join(lines)))
    apt = [l.strip() for l in open(apt_pins) if l.strip()]
    if apt:
        f.write("apt:\n" + "".join('  - "%s"\n' % p for p in apt))
