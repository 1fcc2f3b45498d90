/* A kernel library importing two functions nobody defines: loading it must
 * fail at load time naming both, not kill the process when the kernel runs. */
extern int graphrt_test_undefined_alpha(int);
extern int graphrt_test_undefined_beta(int);

int fused_uses_missing(void* args, int* codes, int num_args, void* ret, int* ret_code, void* resource) {
  (void)args, (void)codes, (void)ret, (void)ret_code, (void)resource;
  return graphrt_test_undefined_alpha(num_args) + graphrt_test_undefined_beta(num_args);
}
