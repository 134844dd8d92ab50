#include <cstdio>

int main() {
  std::puts("rdmabench " RDMABENCH_VERSION);
  return 0;
}
