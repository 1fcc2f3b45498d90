/* A shared library without graphrt_plugin_init. */
int not_a_plugin_answer(void) { return 42; }
