/*
 * The version functions (uvloop_version, uvloop_version_string) against the header's
 * UVLOOP_VERSION_* macros.
 */
#include "harness.h"

#include <string.h>

static void version_matches_the_header(void) {
    CHECK_EQ(uvloop_version(), UVLOOP_VERSION_HEX);
    CHECK_EQ(uvloop_version() >> 16, UVLOOP_VERSION_MAJOR);
    CHECK_EQ((uvloop_version() >> 8) & 0xff, UVLOOP_VERSION_MINOR);
    CHECK_EQ(uvloop_version() & 0xff, UVLOOP_VERSION_PATCH);
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", UVLOOP_VERSION_MAJOR, UVLOOP_VERSION_MINOR, UVLOOP_VERSION_PATCH);
    const char *text = uvloop_version_string();
    CHECK(text != NULL);
    if (text != NULL) CHECK_EQ(strcmp(text, expected), 0);
    CHECK(uvloop_version_string() == text); /* static: the same string each time */
}

const capi_test capi_version_tests[] = {
    {"version_matches_the_header", version_matches_the_header},
    {NULL, NULL},
};
