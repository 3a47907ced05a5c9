#ifndef KOPT_INJECT_ORDER_H
#define KOPT_INJECT_ORDER_H
/*
 * The order in which a graph launched node by node (graphs.c) runs its
 * nodes, apart from CUDA, so that it can be tested without a GPU.
 */
#include <stddef.h>

/*
 * Put nodes 0..n-1 in an order the edges (from[e] before to[e]) allow:
 * of the nodes whose predecessors are all placed, always the one first
 * in the graph's own order, so that graphs built alike run alike.
 * order[] gets n indices.  0, or -1 when an edge names no node or the
 * edges make a cycle (order[] is then undefined).
 */
int kopt_graph_order(size_t n, const size_t *from, const size_t *to,
		     size_t n_edges, size_t *order);

#endif
