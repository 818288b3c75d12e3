// SPDX-License-Identifier: Apache-2.0
// libarchive, opened on first use (io/shared_library.hpp says why: with the 16 libraries it
// brings, binding it at start cost every command ~1 ms; only `envpin context` and reading a
// compressed index use it). Each member has the type archive.h / archive_entry.h declare.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include "io/shared_library.hpp"

namespace envpin::io {

struct LibArchive {
  SharedLibrary lib{ENVPIN_LIBARCHIVE_SONAME, "libarchive13"};
#define ENVPIN_ARCHIVE_FN(name) \
  decltype(&::archive_##name) name = lib.function<decltype(::archive_##name)>("archive_" #name)
  ENVPIN_ARCHIVE_FN(entry_free);
  ENVPIN_ARCHIVE_FN(entry_new);
  ENVPIN_ARCHIVE_FN(entry_pathname);
  ENVPIN_ARCHIVE_FN(entry_set_filetype);
  ENVPIN_ARCHIVE_FN(entry_set_gid);
  ENVPIN_ARCHIVE_FN(entry_set_mtime);
  ENVPIN_ARCHIVE_FN(entry_set_pathname);
  ENVPIN_ARCHIVE_FN(entry_set_perm);
  ENVPIN_ARCHIVE_FN(entry_set_size);
  ENVPIN_ARCHIVE_FN(entry_set_symlink);
  ENVPIN_ARCHIVE_FN(entry_set_uid);
  ENVPIN_ARCHIVE_FN(error_string);
  ENVPIN_ARCHIVE_FN(read_data);
  ENVPIN_ARCHIVE_FN(read_free);
  ENVPIN_ARCHIVE_FN(read_new);
  ENVPIN_ARCHIVE_FN(read_next_header);
  ENVPIN_ARCHIVE_FN(read_open_filename);
  ENVPIN_ARCHIVE_FN(read_open_memory);
  ENVPIN_ARCHIVE_FN(read_support_filter_all);
  ENVPIN_ARCHIVE_FN(read_support_format_ar);
  ENVPIN_ARCHIVE_FN(read_support_format_raw);
  ENVPIN_ARCHIVE_FN(read_support_format_tar);
  ENVPIN_ARCHIVE_FN(write_close);
  ENVPIN_ARCHIVE_FN(write_data);
  ENVPIN_ARCHIVE_FN(write_free);
  ENVPIN_ARCHIVE_FN(write_header);
  ENVPIN_ARCHIVE_FN(write_new);
  ENVPIN_ARCHIVE_FN(write_open);
  ENVPIN_ARCHIVE_FN(write_set_bytes_in_last_block);
  ENVPIN_ARCHIVE_FN(write_set_bytes_per_block);
  ENVPIN_ARCHIVE_FN(write_set_format_pax_restricted);
#undef ENVPIN_ARCHIVE_FN
};

// Loaded once per process; throws diag::Error (naming the package) when it cannot be.
const LibArchive& libarchive();

}  // namespace envpin::io
