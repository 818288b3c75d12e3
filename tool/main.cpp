// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>

#include <iostream>

#include "cli/app.hpp"
#include "diag/terminal.hpp"

int main(int argc, char** argv) {
  return envpin::cli::run(argc, argv, std::cout, std::cerr, envpin::diag::terminal_for(STDOUT_FILENO),
                          envpin::diag::terminal_for(STDERR_FILENO));
}
