/* Calls the installed libgdn's C API on the host only (no GPU needed): the version, a valid
 * problem accepted, an invalid one rejected with a message naming the field. Exits 0 when all
 * three answer as documented in gdn.h. */
#include <stdio.h>
#include <string.h>

#include <gdn/gdn.h>

int main(void) {
  const char* version = gdn_version();
  if (version == NULL || version[0] == '\0') {
    fprintf(stderr, "gdn_version: expected a version string, got none\n");
    return 1;
  }
  printf("libgdn %s\n", version);

  gdn_problem p;
  gdn_problem_init(&p, 1, 256, 4, 8, 128, 128);
  if (gdn_validate_problem(&p) != GDN_OK) {
    fprintf(stderr, "gdn_validate_problem: expected GDN_OK for B=1 T=256 Hk=4 Hv=8, got: %s\n",
            gdn_last_error());
    return 1;
  }

  p.Hv = 6; /* not a multiple of Hk = 4 */
  if (gdn_validate_problem(&p) != GDN_ERROR_INVALID_ARGUMENT) {
    fprintf(stderr, "gdn_validate_problem: expected GDN_ERROR_INVALID_ARGUMENT for Hv=6 Hk=4\n");
    return 1;
  }
  if (strstr(gdn_last_error(), "Hv") == NULL) {
    fprintf(stderr, "gdn_last_error: expected a message naming Hv, got '%s'\n", gdn_last_error());
    return 1;
  }
  printf("rejected Hv=6 with Hk=4: %s\n", gdn_last_error());
  return 0;
}
