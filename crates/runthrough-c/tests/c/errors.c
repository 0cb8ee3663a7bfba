/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Error classes and strings: every class the library can return (the list below, which
 * tests/header.rs checks against the header) is its own class and has a distinct,
 * NUL-terminated description naming it, before MPI_Init and while running; classes, codes and
 * strings added by the program, and MPI_LASTUSEDCODE; MPI_Wtick against MPI_Wtime's
 * resolution; bad input. */
#include "ft_common.h"

#include <stdint.h>
#include <string.h>

#define CLASS(name) {name, #name}
static const struct {
    int class;
    const char *name;
} classes[] = {
    CLASS(MPI_SUCCESS),
    CLASS(MPI_ERR_BUFFER),
    CLASS(MPI_ERR_COUNT),
    CLASS(MPI_ERR_TYPE),
    CLASS(MPI_ERR_TAG),
    CLASS(MPI_ERR_COMM),
    CLASS(MPI_ERR_RANK),
    CLASS(MPI_ERR_REQUEST),
    CLASS(MPI_ERR_ROOT),
    CLASS(MPI_ERR_GROUP),
    CLASS(MPI_ERR_OP),
    CLASS(MPI_ERR_DIMS),
    CLASS(MPI_ERR_ARG),
    CLASS(MPI_ERR_TOPOLOGY),
    CLASS(MPI_ERR_UNKNOWN),
    CLASS(MPI_ERR_TRUNCATE),
    CLASS(MPI_ERR_OTHER),
    CLASS(MPI_ERR_INTERN),
    CLASS(MPI_ERR_IN_STATUS),
    CLASS(MPI_ERR_INFO),
    CLASS(MPI_ERR_INFO_KEY),
    CLASS(MPI_ERR_INFO_VALUE),
    CLASS(MPI_ERR_INFO_NOKEY),
    CLASS(MPI_ERR_KEYVAL),
    CLASS(MPI_ERR_WIN),
    CLASS(MPI_ERR_BASE),
    CLASS(MPI_ERR_NO_MEM),
    CLASS(MPI_ERR_RMA_SYNC),
    CLASS(MPI_ERR_RMA_RANGE),
    CLASS(MPI_ERR_CONVERSION),
    CLASS(MPI_ERR_SIZE),
    CLASS(MPI_ERR_SPAWN),
#ifdef MPI_ERR_PROC_FAILED /* the MPI-5 names of the ULFM classes */
    CLASS(MPI_ERR_PROC_FAILED),
    CLASS(MPI_ERR_PROC_FAILED_PENDING),
    CLASS(MPI_ERR_REVOKED),
#endif
    CLASS(MPIX_ERR_PROC_FAILED),
    CLASS(MPIX_ERR_PROC_FAILED_PENDING),
    CLASS(MPIX_ERR_REVOKED),
#ifdef RTX_ERR_DATA_LOST /* runthrough's resilience library */
    CLASS(RTX_ERR_NOT_COMMITTED),
    CLASS(RTX_ERR_DATA_LOST),
#endif
};
#define NCLASSES ((int)(sizeof classes / sizeof classes[0]))

/* Every class: its own class, a description that names it (MPI_ERR_PROC_FAILED and
 * MPIX_ERR_PROC_FAILED are one class: the description names it without the prefix), and no
 * two distinct classes described alike. Run before MPI_Init too: return codes are compared
 * directly. */
static void check_classes(void) {
    char texts[NCLASSES][MPI_MAX_ERROR_STRING];
    for (int i = 0; i < NCLASSES; i++) {
        int class = -1, len = -1;
        CHECK(MPI_Error_class(classes[i].class, &class) == MPI_SUCCESS, "Error_class(%s)",
              classes[i].name);
        CHECK(class == classes[i].class, "%s is of class %d", classes[i].name, class);
        memset(texts[i], '#', MPI_MAX_ERROR_STRING);
        CHECK(MPI_Error_string(classes[i].class, texts[i], &len) == MPI_SUCCESS,
              "Error_string(%s)", classes[i].name);
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(texts[i]) == len,
              "%s: a string of length %d", classes[i].name, len);
        const char *bare = strstr(classes[i].name, "ERR_") ? strstr(classes[i].name, "ERR_")
                                                             : classes[i].name;
        CHECK(strstr(texts[i], bare) != NULL, "%s is described as \"%s\"", classes[i].name,
              texts[i]);
        for (int j = 0; j < i; j++)
            if (classes[j].class != classes[i].class)
                CHECK(strcmp(texts[i], texts[j]) != 0, "%s and %s: both \"%s\"",
                      classes[i].name, classes[j].name, texts[i]);
            else
                CHECK(strcmp(texts[i], texts[j]) == 0, "%s and %s differ", classes[i].name,
                      classes[j].name);
    }
}

static void check_added(void) {
    int *last = NULL, flag = 0, before;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag == 1 && last && *last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE");
    before = *last;

    int mine = -1, code = -1, other = -1, class = -1, len = -1;
    char text[MPI_MAX_ERROR_STRING];
    OK(MPI_Add_error_class(&mine));
    CHECK(mine > MPI_ERR_LASTCODE && mine > before, "an added class %d", mine);
    OK(MPI_Add_error_code(mine, &code));
    OK(MPI_Add_error_code(MPI_ERR_OTHER, &other));
    CHECK(code > mine && other > code, "added codes %d, %d after class %d", code, other, mine);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag == 1 && *last == other, "MPI_LASTUSEDCODE %d, want %d", *last, other);
    OK(MPI_Error_class(mine, &class));
    CHECK(class == mine, "an added class is of class %d", class);
    OK(MPI_Error_class(code, &class));
    CHECK(class == mine, "an added code is of class %d, want %d", class, mine);
    OK(MPI_Error_class(other, &class));
    CHECK(class == MPI_ERR_OTHER, "a code added to MPI_ERR_OTHER is of class %d", class);
    OK(MPI_Error_string(code, text, &len));
    CHECK(len == 0 && text[0] == '\0', "an added code without a string: \"%s\"", text);
    OK(MPI_Add_error_string(mine, "my application's class"));
    OK(MPI_Add_error_string(code, "first"));
    OK(MPI_Add_error_string(code, "the checkpoint is corrupt"));
    OK(MPI_Error_string(mine, text, &len));
    CHECK(strcmp(text, "my application's class") == 0 && len == 22, "class string: %s", text);
    OK(MPI_Error_string(code, text, &len));
    CHECK(strcmp(text, "the checkpoint is corrupt") == 0, "code string: %s", text);

    /* EXPECT compares classes: an added code's is the class it was added to. */
    EXPECT(code, mine);

    char long_text[MPI_MAX_ERROR_STRING + 1];
    memset(long_text, 'e', MPI_MAX_ERROR_STRING);
    long_text[MPI_MAX_ERROR_STRING] = '\0';
    EXPECT(MPI_Add_error_string(code, long_text), MPI_ERR_ARG);
    long_text[MPI_MAX_ERROR_STRING - 1] = '\0';
    OK(MPI_Add_error_string(code, long_text));
    EXPECT(MPI_Add_error_string(MPI_ERR_ARG, "predefined"), MPI_ERR_ARG);
    EXPECT(MPI_Add_error_string(other + 1000, "unknown"), MPI_ERR_ARG);
    EXPECT(MPI_Add_error_string(code, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Add_error_code(code, &other), MPI_ERR_ARG);     /* a code, not a class */
    EXPECT(MPI_Add_error_code(-12, &other), MPI_ERR_ARG);
    EXPECT(MPI_Add_error_code(mine, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Add_error_class(NULL), MPI_ERR_ARG);
}

static void check_bad_input(void) {
    int class = 0, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    EXPECT(MPI_Error_class(-3, &class), MPI_ERR_ARG);
    EXPECT(MPI_Error_class(MPI_ERR_LASTCODE + 5000, &class), MPI_ERR_ARG);
    EXPECT(MPI_Error_class(MPI_ERR_ARG, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Error_string(12345, text, &len), MPI_ERR_ARG);
    EXPECT(MPI_Error_string(MPI_ERR_ARG, NULL, &len), MPI_ERR_ARG);
    EXPECT(MPI_Error_string(MPI_ERR_ARG, text, NULL), MPI_ERR_ARG);
}

/* The next double above a positive one (nextafter without libm). */
static double next_up(double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits++;
    memcpy(&x, &bits, sizeof bits);
    return x;
}

/* MPI_Wtick is MPI_Wtime's resolution: the spacing of doubles near the current time is no
 * finer than the tick, and two readings differ by 0 or at least one tick. */
static void check_wtick(void) {
    double tick = MPI_Wtick(), now = MPI_Wtime();
    CHECK(tick > 0.0 && tick < 1e-5, "MPI_Wtick %g", tick);
    CHECK(next_up(now) - now <= tick, "Wtime's doubles are %g apart, tick %g",
          next_up(now) - now, tick);
    CHECK(now + tick > now, "a tick is below Wtime's precision");
    int changes = 0;
    double previous = MPI_Wtime();
    for (int i = 0; i < 100000 && changes < 10; i++) {
        double t = MPI_Wtime();
        CHECK(t >= previous, "MPI_Wtime went back");
        if (t != previous) {
            CHECK(t - previous >= tick * 0.999, "readings %g apart, below the tick %g",
                  t - previous, tick);
            changes++;
        }
        previous = t;
    }
    CHECK(changes > 0, "MPI_Wtime never changed");
}

int main(int argc, char **argv) {
    int rank, size;
    check_classes(); /* before MPI_Init */
    ft_init(&argc, &argv, &rank, &size);
    check_classes();
    check_added();
    check_bad_input();
    check_wtick();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        printf("No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
