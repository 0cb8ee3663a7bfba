/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Attribute caching (MPI-4.0 §7.7), MPI_Comm_test_inter and MPI_Comm_call_errhandler, as mpi4py
 * uses them: keys with copy and delete callbacks; MPI_Comm_dup copies through the copy
 * callback (MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN, a program's own); MPI_Comm_set_attr over a
 * value deletes the old one; MPI_Comm_free and MPI_Comm_delete_attr run the delete callback;
 * MPI_Comm_free_keyval leaves MPI_KEYVAL_INVALID and existing attributes keep their callbacks;
 * MPI_Finalize deletes MPI_COMM_SELF's attributes (checked by an atexit handler after it).
 * Wrong use: unknown and freed keys (MPI_ERR_KEYVAL), a freed communicator (MPI_ERR_COMM).
 * Also the datatypes of MPI_Aint, MPI_Offset and MPI_Count (mpi4py sends its counts as
 * MPI_COUNT). */
#include "ft_common.h"

#include <string.h>

static int deleted[16];   /* deleted[v]: how many times value v was deleted */
static int copies;        /* how many times my_copy ran */
static int self_deleted;  /* MPI_COMM_SELF's attribute deleted (at MPI_Finalize) */

static int my_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)oldcomm;
    (void)keyval;
    CHECK(extra == (void *)&copies, "extra_state %p", extra);
    copies++;
    *(void **)out = (void *)((char *)in + 1); /* the copy holds value + 1 */
    *flag = 1;
    return MPI_SUCCESS;
}

static int my_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)keyval;
    (void)extra;
    deleted[(size_t)value]++;
    return MPI_SUCCESS;
}

static int self_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)keyval;
    (void)extra;
    CHECK(comm == MPI_COMM_SELF && value == (void *)7, "self attribute %d %p", comm, value);
    self_deleted++;
    return MPI_SUCCESS;
}

static void after_finalize(void) {
    if (self_deleted != 1) {
        fprintf(stderr, "[%d] MPI_COMM_SELF's attribute deleted %d times\n", ft_rank, self_deleted);
        _exit(1);
    }
}

/* Callbacks that fail: a copy always, a delete until refusing is turned off. */
static int refusing = 1;
static int failing_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
                        int *flag) {
    (void)oldcomm; (void)keyval; (void)extra; (void)in; (void)out; (void)flag;
    return MPI_ERR_OTHER;
}
static int refusing_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm; (void)keyval; (void)value; (void)extra;
    return refusing ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int handled;
static void my_handler(MPI_Comm *comm, int *code, ...) {
    CHECK(*comm == MPI_COMM_WORLD && *code == MPI_ERR_OTHER, "handler got %d %d", *comm, *code);
    handled++;
}

static int own_key_freed = -1;

/* A delete callback that frees the key it is called for (MPICH's keyval_double_free does). */
static int free_own_key(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)value;
    (void)extra;
    own_key_freed = MPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size, flag, key_mine, key_dup, key_null, key_self;
    void *value;
    MPI_Comm dup, dup2;
    ft_init(&argc, &argv, &rank, &size);

    OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0, "MPI_COMM_WORLD is an intercommunicator?");
    OK(MPI_Comm_test_inter(MPI_COMM_SELF, &flag));
    CHECK(flag == 0, "MPI_COMM_SELF is an intercommunicator?");
    EXPECT(MPI_Comm_test_inter(12345, &flag), MPI_ERR_COMM);
    EXPECT(MPI_Comm_test_inter(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);

    OK(MPI_Comm_create_keyval(my_copy, my_delete, &key_mine, &copies));
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, my_delete, &key_dup, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key_null, NULL));
    CHECK(key_mine != key_dup && key_dup != key_null && key_mine != MPI_KEYVAL_INVALID, "keys");

    /* Not set yet: flag 0. */
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key_mine, &value, &flag));
    CHECK(flag == 0, "unset attribute found");
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key_mine, (void *)1));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key_dup, (void *)4));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key_null, (void *)9));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key_mine, &value, &flag));
    CHECK(flag == 1 && value == (void *)1, "attribute %p flag %d", value, flag);
    /* Setting over a value deletes the old one. */
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key_mine, (void *)2));
    CHECK(deleted[1] == 1, "value 1 deleted %d times", deleted[1]);
    /* The predefined keys still work. */
    int *tag_ub;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag == 1 && *tag_ub >= 32767, "MPI_TAG_UB");
#ifdef MPI_TAG_UB_VALUE /* runthrough's mpi.h */
    CHECK(*tag_ub == MPI_TAG_UB_VALUE, "MPI_TAG_UB %d", *tag_ub);
#endif
    int *host, *io;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &host, &flag));
    CHECK(flag == 1 && *host == MPI_PROC_NULL, "MPI_HOST %d", *host);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &io, &flag));
    CHECK(flag == 1 && *io == MPI_ANY_SOURCE, "MPI_IO %d", *io);
    int *appnum; /* the launcher started one program: number 0 */
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(flag == 1 && *appnum == 0, "MPI_APPNUM %d", *appnum);
    /* Dup: my_copy gives value + 1, MPI_COMM_DUP_FN the same value, NULL_COPY nothing. */
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(copies == 1, "copy callback ran %d times", copies);
    OK(MPI_Comm_get_attr(dup, key_mine, &value, &flag));
    CHECK(flag == 1 && value == (void *)3, "copied attribute %p", value);
    OK(MPI_Comm_get_attr(dup, key_dup, &value, &flag));
    CHECK(flag == 1 && value == (void *)4, "MPI_COMM_DUP_FN attribute %p", value);
    OK(MPI_Comm_get_attr(dup, key_null, &value, &flag));
    CHECK(flag == 0, "MPI_COMM_NULL_COPY_FN copied the attribute");

    /* Delete one explicitly; deleting an absent one is a no-op. */
    OK(MPI_Comm_delete_attr(dup, key_dup));
    CHECK(deleted[4] == 1, "value 4 deleted %d times", deleted[4]);
    OK(MPI_Comm_delete_attr(dup, key_dup));
    CHECK(deleted[4] == 1, "value 4 deleted again");

    /* A freed key: existing attributes keep their callbacks; new ones are refused. */
    int freed = key_mine;
    OK(MPI_Comm_free_keyval(&freed));
    CHECK(freed == MPI_KEYVAL_INVALID, "freed key %d", freed);
    /* Freeing it again while attributes use it does nothing more (MPICH's and Open MPI's
     * counting); once none does, it is an unknown key (below, with key_twice). */
    int again = key_mine;
    OK(MPI_Comm_free_keyval(&again));
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, key_mine, (void *)5), MPI_ERR_KEYVAL);
    OK(MPI_Comm_dup(dup, &dup2)); /* the freed key's copy callback still runs */
    CHECK(copies == 2, "copy callback ran %d times", copies);

    /* MPI_Comm_free runs the delete callbacks: dup held 3, dup2 holds 4. */
    OK(MPI_Comm_free(&dup));
    CHECK(deleted[3] == 1, "value 3 deleted %d times", deleted[3]);
    OK(MPI_Comm_free(&dup2));
    CHECK(deleted[4] == 2, "value 4 deleted %d times", deleted[4]);
    EXPECT(MPI_Comm_set_attr(dup, key_null, (void *)1), MPI_ERR_COMM);

    /* Unknown keys. */
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, 999999, &value, &flag), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &value, &flag), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_delete_attr(MPI_COMM_WORLD, 999999), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, 999999, NULL), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_create_keyval(NULL, NULL, NULL, NULL), MPI_ERR_ARG);

    /* The direct calls of the predefined callbacks. */
    void *out = NULL;
    flag = -1;
    OK(MPI_COMM_NULL_COPY_FN(MPI_COMM_WORLD, key_null, NULL, (void *)1, &out, &flag));
    CHECK(flag == 0, "MPI_COMM_NULL_COPY_FN set flag %d", flag);
    OK(MPI_COMM_DUP_FN(MPI_COMM_WORLD, key_null, NULL, (void *)6, &out, &flag));
    CHECK(flag == 1 && out == (void *)6, "MPI_COMM_DUP_FN");
    OK(MPI_COMM_NULL_DELETE_FN(MPI_COMM_WORLD, key_null, NULL, NULL));

    /* MPI_Comm_call_errhandler: the program's handler runs, then MPI_SUCCESS. */
    MPI_Errhandler handler;
    OK(MPI_Comm_create_errhandler(my_handler, &handler));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler));
    OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECK(handled == 1, "handler ran %d times", handled);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&handler));
    OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER)); /* ERRORS_RETURN: returns */
    EXPECT(MPI_Comm_call_errhandler(424242, MPI_ERR_OTHER), MPI_ERR_COMM);

    /* MPI_AINT, MPI_OFFSET, MPI_COUNT: 64-bit integers, in collectives and sizes. */
    MPI_Aint aint = (MPI_Aint)1 << 40, aint_sum = 0;
    MPI_Offset offset = rank, offset_max = -1;
    MPI_Count count = 3, count_bcast = rank == 0 ? ((MPI_Count)1 << 35) : 0;
    int type_size = 0;
    OK(MPI_Allreduce(&aint, &aint_sum, 1, MPI_AINT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(aint_sum == (MPI_Aint)size << 40, "MPI_AINT sum %td", aint_sum);
    OK(MPI_Allreduce(&offset, &offset_max, 1, MPI_OFFSET, MPI_MAX, MPI_COMM_WORLD));
    CHECK(offset_max == size - 1, "MPI_OFFSET max %lld", offset_max);
    OK(MPI_Bcast(&count_bcast, 1, MPI_COUNT, 0, MPI_COMM_WORLD));
    CHECK(count_bcast == (MPI_Count)1 << 35, "MPI_COUNT bcast %lld", count_bcast);
    OK(MPI_Type_size(MPI_COUNT, &type_size));
    CHECK(type_size == 8 && sizeof(count) == 8, "MPI_COUNT size %d", type_size);

    /* The MPI-1 names: MPI_Keyval_create / _free, MPI_Attr_put / _get / _delete, with the
     * MPI-1 predefined callbacks. A key of MPI_DUP_FN is copied by MPI_Comm_dup, one of
     * MPI_NULL_COPY_FN is not. */
    int key_old_dup = MPI_KEYVAL_INVALID, key_old_null = MPI_KEYVAL_INVALID;
    OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key_old_dup, NULL));
    OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &key_old_null, NULL));
    OK(MPI_Attr_put(MPI_COMM_WORLD, key_old_dup, (void *)11));
    OK(MPI_Attr_put(MPI_COMM_WORLD, key_old_null, (void *)12));
    void *old_val = NULL;
    OK(MPI_Attr_get(MPI_COMM_WORLD, key_old_dup, &old_val, &flag));
    CHECK(flag == 1 && old_val == (void *)11, "MPI_Attr_get: flag %d value %p", flag, old_val);
    MPI_Comm old_copy;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &old_copy));
    OK(MPI_Attr_get(old_copy, key_old_dup, &old_val, &flag));
    CHECK(flag == 1 && old_val == (void *)11, "MPI_DUP_FN key after dup: flag %d", flag);
    OK(MPI_Attr_get(old_copy, key_old_null, &old_val, &flag));
    CHECK(flag == 0, "MPI_NULL_COPY_FN key copied by dup");
    OK(MPI_Attr_delete(MPI_COMM_WORLD, key_old_dup));
    OK(MPI_Attr_get(MPI_COMM_WORLD, key_old_dup, &old_val, &flag));
    CHECK(flag == 0, "MPI_Attr_delete left the value");
    OK(MPI_Comm_free(&old_copy));
    OK(MPI_Attr_delete(MPI_COMM_WORLD, key_old_null));
    OK(MPI_Keyval_free(&key_old_dup));
    OK(MPI_Keyval_free(&key_old_null));
    CHECK(key_old_dup == MPI_KEYVAL_INVALID, "MPI_Keyval_free left the key");
    EXPECT(MPI_Attr_put(MPI_COMM_WORLD, 424242, NULL), MPI_ERR_KEYVAL);
    EXPECT(MPI_Keyval_free(&key_old_null), MPI_ERR_KEYVAL);

    /* A failing delete callback fails the call and leaves the value (MPI_Comm_delete_attr, and
     * MPI_Comm_set_attr over it); a failing copy callback fails MPI_Comm_dup, which leaves
     * MPI_COMM_NULL. */
    int key_bomb = MPI_KEYVAL_INVALID;
    MPI_Comm bomb_comm, bomb_dup = MPI_COMM_WORLD;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &bomb_comm));
    OK(MPI_Comm_set_errhandler(bomb_comm, MPI_ERRORS_RETURN));
    OK(MPI_Comm_create_keyval(failing_copy, refusing_delete, &key_bomb, NULL));
    OK(MPI_Comm_set_attr(bomb_comm, key_bomb, (void *)21));
    EXPECT(MPI_Comm_set_attr(bomb_comm, key_bomb, (void *)22), MPI_ERR_OTHER);
    EXPECT(MPI_Comm_delete_attr(bomb_comm, key_bomb), MPI_ERR_OTHER);
    OK(MPI_Comm_get_attr(bomb_comm, key_bomb, &old_val, &flag));
    CHECK(flag == 1 && old_val == (void *)21, "a refused delete removed the value (%d %p)", flag,
          old_val);
    EXPECT(MPI_Comm_dup(bomb_comm, &bomb_dup), MPI_ERR_OTHER);
    CHECK(bomb_dup == MPI_COMM_NULL, "a failed dup left a communicator");
    refusing = 0;
    OK(MPI_Comm_free(&bomb_comm));
    OK(MPI_Comm_free_keyval(&key_bomb));

    /* A key freed twice: fine while an attribute uses it, unknown once none does. */
    int key_twice, copy_twice, last_copy;
    MPI_Comm holder;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key_twice, NULL));
    copy_twice = last_copy = key_twice;
    OK(MPI_Comm_dup(MPI_COMM_SELF, &holder));
    OK(MPI_Comm_set_attr(holder, key_twice, (void *)9));
    OK(MPI_Comm_free_keyval(&key_twice));
    OK(MPI_Comm_free_keyval(&copy_twice));
    OK(MPI_Comm_free(&holder));
    EXPECT(MPI_Comm_free_keyval(&last_copy), MPI_ERR_KEYVAL);
    /* A delete callback that frees its (already freed) key again: its attribute still uses the
     * key while the callback runs, so that is fine too. */
    int key_self_freeing;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_own_key, &key_self_freeing, NULL));
    OK(MPI_Comm_dup(MPI_COMM_SELF, &holder));
    OK(MPI_Comm_set_attr(holder, key_self_freeing, NULL));
    OK(MPI_Comm_free_keyval(&key_self_freeing));
    OK(MPI_Comm_free(&holder));
    CHECK(own_key_freed == MPI_SUCCESS, "the delete callback's free returned %d", own_key_freed);

    /* MPI_COMM_SELF's attribute is deleted by MPI_Finalize. */
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &key_self, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, key_self, (void *)7));
    atexit(after_finalize);
    OK(MPI_Comm_free_keyval(&key_dup));
    OK(MPI_Comm_free_keyval(&key_null));
    CHECK(self_deleted == 0, "deleted before MPI_Finalize");
    return ft_finish();
}
