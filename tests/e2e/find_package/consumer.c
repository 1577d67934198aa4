/* Loads a plan through the installed/exported EmberRuntime package and
 * prints its inputs: proves the headers and libraries are usable from an
 * outside project. Usage: consumer PLAN */
#include "ember/c_api.h"

#include <stdio.h>

int main(int argc, char **argv) {
  EmberSession *session = NULL;
  EmberStatus *status = NULL;
  if (argc != 2)
    return 2;
  if (ember_session_create(argv[1], NULL, &session, &status) != EMBER_OK) {
    fprintf(stderr, "%s\n", ember_status_message(status));
    ember_status_free(status);
    return 1;
  }
  for (size_t i = 0; i < ember_session_num_inputs(session); ++i)
    printf("input %s%s\n", ember_session_input_name(session, i),
           ember_session_input_is_kjt(session, i) ? " (KJT)" : "");
  ember_session_free(session);
  return 0;
}
