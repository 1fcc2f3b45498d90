// The executable that holds the tests' shared precompiled header (tests/CMakeLists.txt); it
// does nothing when run.
int main() { return 0; }
