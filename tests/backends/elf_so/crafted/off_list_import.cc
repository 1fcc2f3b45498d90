// A library whose C++ imports what the ELF loader's allow-list leaves out
// (std::cout, system()) next to what it allows (operator new[]/delete[]).
#include <cstdlib>
#include <iostream>

extern "C" __attribute__((visibility("default"))) int off_list_entry(int n) {
  int* buffer = new int[n > 0 ? n : 1];
  std::cout << "never run" << std::endl;
  int rc = std::system("true") + buffer[0];
  delete[] buffer;
  return rc;
}
