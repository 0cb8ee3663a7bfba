/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* What a datatype says about itself, on 2 ranks: MPI_Type_get_envelope / _get_contents for
 * every constructor (a struct decoded after its vector part was freed, the part handed back as
 * a new type that works), MPI_Type_dup (committed as the old one, usable at once to send what
 * the other rank receives with the original; MPI_COMBINER_DUP), names (predefined ones by
 * their MPI names, set ones), attributes on datatypes (copied by MPI_Type_dup through the
 * copy callback, deleted by MPI_Type_free through the delete callback, a failing copy callback
 * failing the dup, keys of communicators and datatypes kept apart), and wrong use. */
#include "ft_common.h"

#include <string.h>

static int deletes = 0;

static int count_delete(MPI_Datatype type, int key, void *value, void *extra) {
    (void)type;
    (void)key;
    (void)value;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int refuse_copy(MPI_Datatype type, int key, void *extra, void *in, void *out, int *flag) {
    (void)type;
    (void)key;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

/* Checks `type`'s envelope: its combiner and counts. */
static void envelope(MPI_Datatype type, int combiner, int ni, int na, int nd) {
    int i = -1, a = -1, d = -1, c = -1;
    OK(MPI_Type_get_envelope(type, &i, &a, &d, &c));
    CHECK(c == combiner && i == ni && a == na && d == nd, "envelope %d %d %d %d, want %d %d %d %d",
          c, i, a, d, combiner, ni, na, nd);
}

int main(int argc, char **argv) {
    int rank, size, ints[16], len, flag;
    MPI_Aint addrs[4], lb, extent;
    MPI_Datatype types[4], vector, hvector, strct, sub, idx, hidx, blk, resized, contig, dup;
    char name[MPI_MAX_OBJECT_NAME];
    ft_init(&argc, &argv, &rank, &size);
    CHECK(size == 2, "run on 2 ranks");

    /* Predefined types: MPI_COMBINER_NAMED, no contents. */
    envelope(MPI_INT, MPI_COMBINER_NAMED, 0, 0, 0);
    envelope(MPI_2INT, MPI_COMBINER_NAMED, 0, 0, 0);
    EXPECT(MPI_Type_get_contents(MPI_INT, 1, 1, 1, ints, addrs, types), MPI_ERR_TYPE);

    /* Every constructor's arguments come back. */
    OK(MPI_Type_vector(3, 2, 5, MPI_INT, &vector));
    envelope(vector, MPI_COMBINER_VECTOR, 3, 0, 1);
    OK(MPI_Type_get_contents(vector, 16, 4, 4, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_INT, "vector");
    OK(MPI_Type_create_hvector(2, 1, 24, MPI_DOUBLE, &hvector));
    envelope(hvector, MPI_COMBINER_HVECTOR, 2, 1, 1);
    OK(MPI_Type_get_contents(hvector, 2, 1, 1, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 1 && addrs[0] == 24 && types[0] == MPI_DOUBLE, "hvector");
    OK(MPI_Type_contiguous(4, MPI_CHAR, &contig));
    envelope(contig, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &resized));
    envelope(resized, MPI_COMBINER_RESIZED, 0, 2, 1);
    OK(MPI_Type_get_contents(resized, 0, 2, 1, ints, addrs, types));
    CHECK(addrs[0] == -4 && addrs[1] == 16 && types[0] == MPI_INT, "resized");
    int sizes[2] = {4, 5}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
    OK(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &sub));
    envelope(sub, MPI_COMBINER_SUBARRAY, 8, 0, 1);
    OK(MPI_Type_get_contents(sub, 8, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 4 && ints[2] == 5 && ints[3] == 2 && ints[4] == 3 &&
              ints[5] == 1 && ints[6] == 2 && ints[7] == MPI_ORDER_C && types[0] == MPI_FLOAT,
          "subarray");
    int lens[2] = {1, 2}, displs[2] = {0, 3};
    MPI_Aint hdispls[2] = {0, 40};
    OK(MPI_Type_indexed(2, lens, displs, MPI_INT, &idx));
    envelope(idx, MPI_COMBINER_INDEXED, 5, 0, 1);
    OK(MPI_Type_get_contents(idx, 5, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && ints[3] == 0 && ints[4] == 3,
          "indexed");
    OK(MPI_Type_create_hindexed(2, lens, hdispls, MPI_INT, &hidx));
    envelope(hidx, MPI_COMBINER_HINDEXED, 3, 2, 1);
    MPI_Datatype hblk;
    OK(MPI_Type_create_hindexed_block(2, 3, hdispls, MPI_INT, &hblk));
    envelope(hblk, MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 1);
    OK(MPI_Type_get_contents(hblk, 2, 2, 1, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 3 && addrs[1] == 40 && types[0] == MPI_INT, "hindexed_block");
    MPI_Count bytes;
    OK(MPI_Type_size_x(hblk, &bytes));
    CHECK(bytes == 6 * (MPI_Count)sizeof(int), "MPI_Type_size_x %lld", (long long)bytes);
    OK(MPI_Type_get_extent(hblk, &lb, &extent));
    CHECK(lb == 0 && extent == 40 + 3 * (MPI_Aint)sizeof(int), "hindexed_block extent %ld",
          (long)extent);
    OK(MPI_Type_free(&hblk));
    OK(MPI_Type_create_indexed_block(2, 3, displs, MPI_INT, &blk));
    envelope(blk, MPI_COMBINER_INDEXED_BLOCK, 4, 0, 1);
    OK(MPI_Type_get_contents(blk, 4, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 3 && ints[2] == 0 && ints[3] == 3, "indexed_block");

    /* A struct of an int and the vector, decoded after the vector was freed. */
    int slens[2] = {1, 1};
    MPI_Aint sdispls[2] = {0, 8};
    MPI_Datatype stypes[2] = {MPI_INT, vector};
    OK(MPI_Type_create_struct(2, slens, sdispls, stypes, &strct));
    OK(MPI_Type_free(&vector));
    envelope(strct, MPI_COMBINER_STRUCT, 3, 2, 2);
    EXPECT(MPI_Type_get_contents(strct, 3, 2, 1, ints, addrs, types), MPI_ERR_ARG);
    OK(MPI_Type_get_contents(strct, 3, 2, 2, ints, addrs, types));
    CHECK(ints[0] == 2 && addrs[1] == 8 && types[0] == MPI_INT, "struct");
    MPI_Datatype part = types[1];
    CHECK(part != MPI_INT && part != MPI_DATATYPE_NULL, "struct's derived part: a new handle");
    envelope(part, MPI_COMBINER_VECTOR, 3, 0, 1);
    OK(MPI_Type_get_extent(part, &lb, &extent));
    CHECK(lb == 0 && extent == (2 * 5 + 2) * (MPI_Aint)sizeof(int), "part's extent %ld",
          (long)extent);
    OK(MPI_Type_free(&part));

    /* Dup: committed as the old type, usable at once, MPI_COMBINER_DUP. */
    OK(MPI_Type_commit(&idx));
    OK(MPI_Type_dup(idx, &dup));
    envelope(dup, MPI_COMBINER_DUP, 0, 0, 1);
    int data[5] = {10, 11, 12, 13, 14}, got[5] = {0, 0, 0, 0, 0};
    if (rank == 0)
        OK(MPI_Send(data, 1, dup, 1, 0, MPI_COMM_WORLD));
    else {
        OK(MPI_Recv(got, 1, idx, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got[0] == 10 && got[3] == 13 && got[4] == 14 && got[1] == 0, "sent by the dup");
    }
    MPI_Datatype int_dup;
    OK(MPI_Type_dup(MPI_INT, &int_dup));
    envelope(int_dup, MPI_COMBINER_DUP, 0, 0, 1);
    OK(MPI_Type_free(&int_dup));

    /* Pair types by their parts. */
    MPI_Datatype pair_type;
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair_type));
    CHECK(pair_type == MPI_DOUBLE_INT, "value index of double, int: %d", pair_type);
    OK(MPI_Type_get_value_index(MPI_LONG_DOUBLE, MPI_INT, &pair_type));
    CHECK(pair_type == MPI_LONG_DOUBLE_INT, "value index of long double, int: %d", pair_type);
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &pair_type));
    CHECK(pair_type == MPI_DATATYPE_NULL, "no such pair: %d", pair_type);
    EXPECT(MPI_Type_get_value_index(MPI_DOUBLE, 4242, &pair_type), MPI_ERR_TYPE);

    /* Names. */
    OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0 && len == 10, "MPI_DOUBLE's name %s", name);
    OK(MPI_Type_get_name(dup, name, &len));
    CHECK(len == 0 && name[0] == '\0', "a derived type has no name");
    OK(MPI_Type_set_name(dup, "my indexed"));
    OK(MPI_Type_get_name(dup, name, &len));
    CHECK(strcmp(name, "my indexed") == 0, "set name %s", name);
    char long_name[MPI_MAX_OBJECT_NAME + 8];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    EXPECT(MPI_Type_set_name(dup, long_name), MPI_ERR_ARG);
    EXPECT(MPI_Type_set_name(dup, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_name(12345, name, &len), MPI_ERR_TYPE);

    /* Attributes. */
    int key, comm_key, bomb;
    void *value;
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &key, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &comm_key, NULL));
    OK(MPI_Type_set_attr(dup, key, (void *)77));
    OK(MPI_Type_get_attr(dup, key, &value, &flag));
    CHECK(flag == 1 && value == (void *)77, "type attribute");
    OK(MPI_Type_get_attr(idx, key, &value, &flag));
    CHECK(flag == 0, "no attribute on another type");
    EXPECT(MPI_Type_set_attr(dup, comm_key, (void *)1), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void *)1), MPI_ERR_KEYVAL);
    MPI_Datatype dup2;
    OK(MPI_Type_dup(dup, &dup2));
    OK(MPI_Type_get_attr(dup2, key, &value, &flag));
    CHECK(flag == 1 && value == (void *)77, "attribute copied by MPI_TYPE_DUP_FN");
    OK(MPI_Type_free(&dup2));
    CHECK(deletes == 1, "MPI_Type_free ran the delete callback: %d", deletes);
    OK(MPI_Type_delete_attr(dup, key));
    CHECK(deletes == 2, "MPI_Type_delete_attr ran it: %d", deletes);
    OK(MPI_Type_create_keyval(refuse_copy, MPI_TYPE_NULL_DELETE_FN, &bomb, NULL));
    OK(MPI_Type_set_attr(dup, bomb, (void *)5));
    dup2 = MPI_INT;
    EXPECT(MPI_Type_dup(dup, &dup2), MPI_ERR_OTHER);
    CHECK(dup2 == MPI_DATATYPE_NULL, "a failed dup gives MPI_DATATYPE_NULL");
    OK(MPI_Type_delete_attr(dup, bomb));
    OK(MPI_Type_free_keyval(&bomb));
    OK(MPI_Type_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "freed key");
    OK(MPI_Comm_free_keyval(&comm_key));

    /* Wrong use. */
    EXPECT(MPI_Type_dup(MPI_DATATYPE_NULL, &dup2), MPI_ERR_TYPE);
    EXPECT(MPI_Type_dup(idx, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_envelope(idx, NULL, ints, ints, ints), MPI_ERR_ARG);

    MPI_Datatype all[] = {hvector, strct, sub, idx, hidx, blk, resized, contig, dup};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        OK(MPI_Type_free(&all[i]));
    return ft_finish();
}
